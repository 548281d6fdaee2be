"""Export and import on every vector store: a drop-in store with a chain, an invalidation, a tombstone, metadata and
two scopes, exported with its vectors, imported into an empty store of the same provider and exported again, gives
the same file apart from the run's time and where it came from; the imported store serves what the first served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mem0_hygiene import Memory
from mem0_hygiene.maintenance import export, import_


def fill(config: dict[str, Any]) -> dict[str, str]:
    """Five memories through the drop-in: one superseded, one invalidated, one deleted; their ids by role."""
    m = Memory.from_config(config)
    try:
        ids = {}
        for role, text, scope in (
            ("old", "I like tea", {"user_id": "alice"}),
            ("wrong", "The office is in Berlin", {"user_id": "alice"}),
            ("gone", "The printer code is 4411", {"user_id": "alice"}),
            ("agent", "Deploys go through staging first", {"agent_id": "ops"}),
        ):
            res = m.add(text, infer=False, metadata={"topic": role}, **scope)
            ids[role] = res["results"][0]["id"]
        ids["new"] = m.supersede(ids["old"], "I like coffee now", source="chat")
        m.invalidate(ids["wrong"], reason="moved to Munich")
        m.delete(ids["gone"])
        return ids
    finally:
        m.close()


def lines(path: Path) -> tuple[dict[str, Any], list[str]]:
    text = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(text[0])
    for run_specific in ("exported_at", "source"):
        header.pop(run_specific)
    header.get("history", {}).pop("file", None)  # named after the export's own file
    return header, text[1:]


def test_export_import_export_gives_the_same_file_on_every_store(
    provider_config: Any, tmp_path: Path, provider: str
) -> None:
    source = provider_config(tmp_path / "a")
    ids = fill(source)
    first = export(source, str(tmp_path / "first.jsonl"), with_vectors=True)
    assert (first.points, first.ledger_rows) == (4, 5)  # the deleted memory is a tombstone: a ledger row alone

    target = provider_config(tmp_path / "b")
    done = import_(target, first.path)
    assert (done.inserted, done.embedded, done.ledger_written, done.history_written) == (4, 0, 5, first.history)

    second = export(target, str(tmp_path / "second.jsonl"), with_vectors=True)
    assert lines(Path(first.path)) == lines(Path(second.path))
    assert lines(Path(first.history_path)) == lines(Path(second.history_path))

    m = Memory.from_config(target)
    try:
        served = {r["id"]: r["memory"] for r in m.get_all(filters={"user_id": "alice"})["results"]}
        assert served == {ids["new"]: "I like coffee now"}  # neither the superseded, invalidated nor deleted one
        assert m.get(ids["gone"]) is None
        assert [r["memory"] for r in m.get_all(filters={"agent_id": "ops"})["results"]] == [
            "Deploys go through staging first"
        ]
        old, wrong = m.ledger.get(ids["old"]), m.ledger.get(ids["wrong"])
        assert old is not None and old.superseded_by == ids["new"]
        assert wrong is not None and wrong.invalid_reason == "moved to Munich"
    finally:
        m.close()
