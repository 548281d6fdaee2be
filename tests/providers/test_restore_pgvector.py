"""A restore into a pgvector deployment: the table is a journaled step like the files (its current rows saved beside
the journal, then the set's rows loaded in one verified transaction), so a restore that fails puts the table back
too, and one killed (SIGKILL, tests/faults.py) before any of its file operations or right before the table's load
commits is finished by the rerun with the same set or rolled back first by another set. Nothing added after the
backup is lost when the restore is undone: the memory added since is still served, from the table, history.db and
the ledger. The command the journal names (``--config``: the table's connection is never written down) finishes an
interrupted restore, and a deployment whose table mem0 has not created yet is undone to an empty one. The kill test
runs the first and last kill points, every 4th and the table's commit; every one with MEM0_HYGIENE_FULL_SWEEP=1."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.actions import restore as restore_mod
from mem0_hygiene.actions.backup import backup, backup_target
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.actions.restore_text import restore_lines
from mem0_hygiene.errors import BackupError
from mem0_hygiene.stores.copies import list_copies
from mem0_hygiene.stores.vector.pgvector import PgvectorStore

from .stores import PgvectorServer, missing, store_config, unique_collection

OLD = "Dana deploys with Docker Compose"
KEPT = "Dana lives in Haifa"
ADDED = "Dana switched to Kubernetes last week"  # added after the backup
EVERY = 4
COMMIT = ("mem0_hygiene.stores.vector.pgvector", "commit_point")

RESTORE = """
import json

def operation(config_path, src):
    from mem0_hygiene.actions.restore import restore

    with open(config_path) as fh:
        restore(json.load(fh), src, config_source=config_path)
"""


@pytest.fixture
def server(request: pytest.FixtureRequest) -> PgvectorServer:
    why = missing("pgvector")
    if why:
        pytest.skip(why)
    server: PgvectorServer = request.getfixturevalue("pgvector_server")
    return server


@pytest.fixture
def pg_crash_runner() -> Iterator[Any]:
    """A ``faults.CrashRunner`` that also kills right before the restore's transaction on the table commits."""
    spec = importlib.util.spec_from_file_location(
        "mem0_hygiene_test_faults_pgv", Path(__file__).parents[1] / "faults.py"
    )
    assert spec is not None and spec.loader is not None
    faults: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(faults)
    faults.FILE_OPERATIONS = (*faults.FILE_OPERATIONS, COMMIT)
    runner = faults.CrashRunner()
    yield runner
    runner.close()


def deploy(root: Path, server: PgvectorServer) -> tuple[dict[str, Any], Path, Path]:
    """A pgvector deployment under ``root`` (its config in root/mem0.json): OLD alone backed up (the older set), OLD
    and KEPT backed up (the set), then ADDED. Returns (config, the set, the older set)."""
    root.mkdir()
    config = store_config("pgvector", root / "app", pgvector=server, collection=unique_collection())
    add(config, OLD)
    older = Path(backup(config, root / "older").path)
    add(config, KEPT)
    made = Path(backup(config, root / "backups").path)
    add(config, ADDED)
    (root / "mem0.json").write_text(json.dumps(config))
    return config, made, older


def add(config: dict[str, Any], text: str) -> None:
    m = Memory.from_config(config)
    try:
        m.add(text, user_id="dana", infer=False)
    finally:
        m.close()


def served(config: dict[str, Any]) -> list[str]:
    m = Memory.from_config(config)
    try:
        return sorted(r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"])
    finally:
        m.close()


def table(config: dict[str, Any]) -> list[str]:
    conf = config["vector_store"]["config"]
    store = PgvectorStore(conf["connection_string"], conf["collection_name"])
    try:
        return sorted(str(p["payload"].get("data")) for page in store.pages() for p in page)
    finally:
        store.close()


def journal(config: dict[str, Any]) -> str:
    path = backup_target(config).side_file("restore_journal")
    assert path is not None
    return path


def copies(config: dict[str, Any]) -> list[Any]:
    tgt = backup_target(config)
    return list(list_copies(tgt.ledger_path, tgt.history_path))


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "app").iterdir() if ".restoring-" in p.name)


def asides(root: Path) -> list[Path]:
    return sorted(p for p in (root / "app").iterdir() if p.name.startswith("pgvector-") and ".replaced-" in p.name)


ALL = sorted([OLD, KEPT, ADDED])
SET = sorted([OLD, KEPT])


def test_a_restore_whose_history_staging_fails_leaves_the_table_as_it_was(
    server: PgvectorServer, persistent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, made, _ = deploy(persistent_dir / "d", server)
    real = restore_mod._check_staged

    def failing(step: Any, src: str, doc: dict[str, Any]) -> None:
        if step.role == "history_db":
            raise OSError("no space left on device (injected)")
        real(step, src, doc)

    monkeypatch.setattr(restore_mod, "_check_staged", failing)
    with pytest.raises(OSError, match="injected"):
        restore(config, made)
    monkeypatch.undo()
    assert table(config) == ALL and served(config) == ALL
    assert not os.path.exists(journal(config)) and not leftovers(persistent_dir / "d")
    assert not asides(persistent_dir / "d")


def test_a_restore_failing_after_the_table_was_loaded_puts_the_table_back(
    server: PgvectorServer, persistent_dir: Path
) -> None:
    config, made, _ = deploy(persistent_dir / "d", server)
    copy = persistent_dir / "copy"
    shutil.copytree(made, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["stores"]["history_db"]["counts"] = {"history": 99}  # the restored history.db will not match it
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BackupError, match="restored history_db holds"):
        restore(config, copy)
    assert table(config) == ALL and served(config) == ALL  # the memory added after the backup is still served
    assert not os.path.exists(journal(config)) and not leftovers(persistent_dir / "d")
    assert not asides(persistent_dir / "d")  # its rows are back in the table: the copy is gone, and unlisted
    assert not [c for c in copies(config) if "pgvector-" in c.path]


def test_a_restore_keeps_the_replaced_rows_as_a_registered_copy_that_forget_scrub_erases(
    server: PgvectorServer, persistent_dir: Path
) -> None:
    config, made, _ = deploy(persistent_dir / "d", server)
    result = restore(config, made)
    assert table(config) == SET and served(config) == SET
    (aside,) = asides(persistent_dir / "d")
    store = result.store("vector_store")
    assert store is not None
    assert sum(store.counts.values()) == 2 and store.replaced_to is not None
    assert "password" not in store.target
    text = " ".join(str(chunk) for line in restore_lines(result) for chunk, _style in line)
    assert f"its rows were replaced in one verified transaction, the replaced rows are kept in {aside}" in text
    assert str(aside) == store.replaced_to and ADDED in (aside / "rows.jsonl").read_text()

    from mem0_hygiene.actions.copy_erasure import parts_of

    (copy,) = [c for c in copies(config) if c.path == str(aside)]
    assert copy.kind == "replaced_aside" and [p.provider for p in parts_of(copy)] == ["pgvector"]

    from mem0_hygiene.actions.forget_scope import forget_scope

    forget_scope(config, user_id="dana")
    rows = (aside / "rows.jsonl").read_text()
    assert OLD not in rows and KEPT not in rows  # erased from the copy of the replaced rows too


def test_the_command_an_interrupted_pgvector_restore_names_finishes_it(
    server: PgvectorServer, persistent_dir: Path, pg_crash_runner: Any
) -> None:
    import shlex

    from click.testing import CliRunner

    from mem0_hygiene.cli import cli

    config, made, _ = deploy(persistent_dir / "d", server)
    config_path = str(persistent_dir / "d" / "mem0.json")
    # killed before the 4th file operation: history.db and the ledger staged, the journal written, the table not yet
    killed = pg_crash_runner.run(RESTORE, config_path, str(made), kill_at=4)
    assert killed["status"] == "killed"
    with pytest.raises(BackupError, match="was interrupted") as refused:
        Memory.from_config(config)
    command = json.loads(Path(journal(config)).read_text())["command"]
    assert f"--config {config_path}" in command and command in str(refused.value)
    done = CliRunner().invoke(cli, shlex.split(command)[1:], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert table(config) == SET and served(config) == SET
    assert not os.path.exists(journal(config))


def test_a_restore_into_a_deployment_without_its_table_yet_is_undone_to_no_rows(
    server: PgvectorServer, persistent_dir: Path
) -> None:
    import psycopg

    config, made, _ = deploy(persistent_dir / "d", server)
    conf = config["vector_store"]["config"]
    with psycopg.connect(conf["connection_string"], autocommit=True) as conn:
        conn.execute(f'DROP TABLE "{conf["collection_name"]}"')
    copy = persistent_dir / "copy"
    shutil.copytree(made, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["stores"]["history_db"]["counts"] = {"history": 99}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BackupError, match="restored history_db holds"):
        restore(config, copy)
    assert table(config) == [] and not asides(persistent_dir / "d")
    restore(config, made)
    assert table(config) == SET and served(config) == SET


def sampled(n: int, commit: list[int]) -> list[int]:
    if os.environ.get("MEM0_HYGIENE_FULL_SWEEP") or n <= 8:
        return list(range(1, n + 1))
    return sorted({1, n, *range(EVERY, n, EVERY), *commit})


def test_a_pgvector_restore_killed_anywhere_is_finished_or_rolled_back_losing_nothing(
    server: PgvectorServer, persistent_dir: Path, pg_crash_runner: Any
) -> None:
    config, made, _ = deploy(persistent_dir / "clean", server)
    clean = pg_crash_runner.run(RESTORE, str(persistent_dir / "clean" / "mem0.json"), str(made))
    assert clean["status"] == "ok", clean
    assert table(config) == SET and served(config) == SET
    calls = clean["calls"]
    commit = [i + 1 for i, c in enumerate(calls) if c == "commit_point"]
    assert commit and "replace" in calls  # the journal's writes, the table's load among the kill points
    failures = []
    for k in sampled(len(calls), commit):
        for rerun in ("same", "another"):
            root = persistent_dir / f"kill-{k}-{rerun}"
            config, made, older = deploy(root, server)
            config_path = str(root / "mem0.json")
            killed = pg_crash_runner.run(RESTORE, config_path, str(made), kill_at=k)
            where = (k, calls[k - 1], rerun)
            assert killed["status"] == "killed", (where, killed)
            if os.path.exists(journal(config)):
                with pytest.raises(BackupError, match="was interrupted"):
                    Memory.from_config(config)  # the app does not start on a half-restored deployment
            else:
                assert table(config) in (ALL, SET), where
            if rerun == "same":
                again = pg_crash_runner.run(RESTORE, config_path, str(made))
                assert again["status"] == "ok", (where, again)
                if table(config) != SET or served(config) != SET:
                    failures.append((where, table(config), served(config)))
                replaced = [a for a in asides(root) if ADDED in (a / "rows.jsonl").read_text()]
                assert replaced or table(config) == ALL, where  # the rows replaced are kept
            else:
                damaged = root / "damaged"
                shutil.copytree(older, damaged)
                (damaged / "history.db").write_bytes(b"not the backup's bytes")
                with pytest.raises(BackupError):
                    restore(config, damaged)  # a set that fails its checks: the interrupted restore undone first
                if table(config) != ALL or served(config) != ALL:
                    failures.append((where, table(config), served(config)))
                assert not asides(root), where  # the replaced rows are back in the table
                restore(config, older)
                assert table(config) == [OLD] and served(config) == [OLD], where
            assert not os.path.exists(journal(config)) and not leftovers(root), where
    assert not failures, failures
