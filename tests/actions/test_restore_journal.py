"""A restore killed (SIGKILL) after it moved the ledger aside and before it put the backup's ledger in: the
restore journal beside the ledger makes every opener refuse (the drop-in, backup, digest, the audit), naming
the command that finishes it, so no fresh empty ledger is created; that command rolls it forward; a restore
of another set, or a set that no longer checks out, rolls it back to the stores it had replaced."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, maintenance
from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.relocate import relocate
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.cli import cli
from mem0_hygiene.errors import BackupError
from mem0_hygiene.stores.copies import list_copies

U = {"user_id": "dana"}

KILLED_WITH_THE_LEDGER_ASIDE = """
def operation(config, src):
    import os, signal
    from mem0_hygiene.actions.restore import restore
    real = os.rename
    def rename(a, b):
        if str(a).endswith("hygiene.db") and ".replaced-" in str(b):
            real(a, b)
            os.kill(os.getpid(), signal.SIGKILL)  # the ledger is aside, the backup's not yet in
        return real(a, b)
    os.rename = rename
    restore(config, src)
"""


def served(config: dict[str, Any]) -> dict[str, str]:
    m = Memory.from_config(config)
    try:
        return {r["id"]: r["memory"] for r in m.get_all(filters=U)["results"]}
    finally:
        m.close()


@pytest.fixture
def crashed(make_deployment: Any, persistent_dir: Path, crash_runner: Any) -> dict[str, Any]:
    """A deployment backed up, changed, then a restore of the backup killed with the ledger moved aside."""

    def plant(m: Any) -> None:
        for text in ("Dana works on billing", "Dana prefers npm"):
            m.add(text, **U, infer=False, source="chat")

    dep = make_deployment(persistent_dir / "app", plant=plant)
    cfg = {k: v for k, v in dep.config.items() if k != "hygiene"}
    made = backup(cfg, persistent_dir / "backups")
    backed_up = served(cfg)
    m = Memory.from_config(cfg)
    m.add("Dana moved to the search team", **U, infer=False, source="chat")
    m.close()
    current = served(cfg)
    out = crash_runner.run(KILLED_WITH_THE_LEDGER_ASIDE, cfg, made.path)
    assert out["status"] == "killed", out
    app = dep.folder
    assert not (app / "hygiene.db").exists() and (app / "hygiene.restore-journal.json").exists()
    return {
        "config": cfg,
        "set": made.path,
        "app": app,
        "backed_up": backed_up,
        "current": current,
        "backups": persistent_dir / "backups",
    }


def test_every_opener_is_refused_naming_the_command_and_no_ledger_is_created(crashed: dict[str, Any]) -> None:
    cfg, app = crashed["config"], crashed["app"]
    with pytest.raises(BackupError) as err:
        Memory.from_config(cfg)
    message = str(err.value)
    assert "\n" not in message and f"a restore of {crashed['set']} into them was interrupted" in message
    command = message.split("`")[1]
    assert command.startswith(f"mem0-hygiene restore {crashed['set']} --qdrant-path ") and command.endswith("--yes")
    assert not (app / "hygiene.db").exists()  # no fresh, empty ledger beside the store
    for call in (
        lambda: backup(cfg, crashed["backups"]),
        lambda: maintenance.digest(cfg),
        lambda: audit(cfg),
        lambda: relocate(cfg, app.parent / "moved", include_sqlite=True),
    ):
        with pytest.raises(BackupError, match="was interrupted .* to finish it"):
            call()
    assert not (app / "hygiene.db").exists()
    cli_run = CliRunner().invoke(
        cli, ["prune", "--qdrant-path", cfg["vector_store"]["config"]["path"], "--history-db", cfg["history_db_path"]]
    )
    assert cli_run.exit_code == 3 and "mem0-hygiene restore" in cli_run.output

    finished = CliRunner().invoke(cli, shlex.split(command)[1:], catch_exceptions=False)  # the named command
    assert finished.exit_code == 0, finished.output
    assert "finished the restore" in finished.output
    assert served(cfg) == crashed["backed_up"]
    assert not (app / "hygiene.restore-journal.json").exists()
    asides = {
        c.path for c in list_copies(str(app / "hygiene.db"), str(app / "history.db")) if c.kind == "replaced_aside"
    }
    assert {p.name.split(".replaced-")[0] for p in map(Path, asides)} == {"qdrant", "history.db", "hygiene.db"}
    assert all(p in finished.output for p in asides)  # each one named in the message


def test_restoring_another_set_rolls_the_interrupted_one_back_first(crashed: dict[str, Any], clock: Any) -> None:
    cfg, app = crashed["config"], crashed["app"]
    done = restore(cfg, crashed["set"], dry_run=True)
    assert done.resumed == "finished" and "would finish it" in " ".join(done.notes)
    other = crashed["backups"].parent / "other" / Path(crashed["set"]).name
    shutil.copytree(crashed["set"], other)
    done = restore(cfg, other)
    assert "rolled back first" in " ".join(done.notes) and not done.resumed
    assert served(cfg) == crashed["backed_up"]
    # the first restore's asides went back: the only store kept aside is the one this restore replaced
    asides = [c for c in list_copies(str(app / "hygiene.db"), str(app / "history.db")) if c.kind == "replaced_aside"]
    assert len(asides) == 3 and {p.name for p in app.iterdir() if ".replaced-" in p.name} == {
        Path(c.path).name for c in asides
    }


def test_a_set_that_no_longer_checks_out_rolls_the_interrupted_restore_back(crashed: dict[str, Any]) -> None:
    cfg, app = crashed["config"], crashed["app"]
    (Path(crashed["set"]) / "history.db").write_bytes(b"changed")
    with pytest.raises(BackupError, match=r"size differs: history\.db.*was rolled back"):
        restore(cfg, crashed["set"])
    assert served(cfg) == crashed["current"]  # the stores as they were before the restore began
    assert not [p for p in app.iterdir() if ".replaced-" in p.name or ".restoring-" in p.name]
    assert not (app / "hygiene.restore-journal.json").exists()
    registry = json.loads((app / "hygiene.copies.json").read_text())["copies"]
    assert registry and not [e for e in registry if e["kind"] == "replaced_aside"]
