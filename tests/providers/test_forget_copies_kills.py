"""forget --user killed (SIGKILL, tests/faults.py) before a sample of its file operations on a deployment whose
backup set was taken through the provider seam (Chroma's folder, FAISS's index and docstore, pgvector's rows):
after each kill the rerun finishes, no byte of the person is left in any file of the deployment or of the set,
nothing of the other user is lost (live or in the set), the set passes its checks and ``restore --dry-run``
accepts it, and the receipt checks out. Every kill point runs while there are at most 12; past that every 3rd and
the last two (MEM0_HYGIENE_FULL_SWEEP=1 runs them all), as in tests/actions/test_forget_scope_kills.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget_scope import verify_receipt
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.stores.backup_set import check_set

from .stores import PgvectorServer, missing, store_config, unique_collection

DANA = "Dana's passport number is X1234567"
TEA = "Dana likes green tea with oat milk"
BOB = "Bob works on the billing service"
EVERY = 3

ERASE = """
import json

def operation(config_path):
    from mem0_hygiene.actions.forget_scope import forget_scope

    with open(config_path) as fh:
        result = forget_scope(json.load(fh), user_id="dana")
    return {"verified": result.verified, "receipt": result.receipt}
"""


def sampled(n: int) -> list[int]:
    if os.environ.get("MEM0_HYGIENE_FULL_SWEEP") or n <= 12:
        return list(range(1, n + 1))
    return sorted({*range(1, n + 1, EVERY), *range(max(1, n - 1), n + 1)})


def files_holding(folder: Path, text: str) -> list[str]:
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def deploy(provider: str, root: Path, server: PgvectorServer | None) -> tuple[Path, Path]:
    """A deployment under ``root`` on ``provider`` holding Dana's two memories and Bob's one (its config in
    root/mem0.json) and one backup set of it."""
    root.mkdir()
    name = unique_collection() if provider == "pgvector" else "mem0"
    config = store_config(provider, root / "app", pgvector=server, collection=name)
    m = Memory.from_config(config)
    try:
        for text, who in ((DANA, "dana"), (TEA, "dana"), (BOB, "bob")):
            m.add(text, user_id=who, infer=False)
    finally:
        m.close()
    made = Path(backup(config, root / "backups").path)
    (root / "mem0.json").write_text(json.dumps(config))
    return root / "mem0.json", made


def served(config: dict[str, Any], user: str) -> list[str]:
    m = Memory.from_config(config)
    try:
        return sorted(r["memory"] for r in m.get_all(filters={"user_id": user})["results"])
    finally:
        m.close()


@pytest.mark.parametrize("provider", ["chroma", "faiss", "pgvector"])
def test_forget_user_killed_while_it_erases_a_seam_backup_set_is_finished_by_the_rerun(
    provider: str, persistent_dir: Path, crash_runner: Any, request: pytest.FixtureRequest
) -> None:
    why = missing(provider)
    if why:
        pytest.skip(why)
    server = request.getfixturevalue("pgvector_server") if provider == "pgvector" else None
    clean = crash_runner.run(ERASE, str(deploy(provider, persistent_dir / "clean", server)[0]))
    assert clean["status"] == "ok" and clean["result"]["verified"], clean
    calls = clean["calls"]
    assert len(calls) >= 5  # the journal's writes, the set's files rewritten, its manifest, the receipt
    for k in sampled(len(calls)):
        root = persistent_dir / f"kill-{k}"
        config_path, made = deploy(provider, root, server)
        killed = crash_runner.run(ERASE, str(config_path), kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        again = crash_runner.run(ERASE, str(config_path))
        assert again["status"] == "ok" and again["result"]["verified"], (k, calls[k - 1], again)
        for text in (DANA, TEA):
            assert files_holding(root, text) == [], (k, calls[k - 1], text)
        assert files_holding(made, BOB), (k, calls[k - 1])  # nothing of the other user lost in the set
        config = json.loads(config_path.read_text())
        assert served(config, "bob") == [BOB], k
        assert check_set(made) == [], (k, calls[k - 1])
        assert restore(config, made, dry_run=True).dry_run
        assert not [p for p in made.rglob("*") if ".erasing" in p.name], k
        assert not verify_receipt(config, again["result"]["receipt"]).came_back, k
