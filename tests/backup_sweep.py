"""Kill sweeps of backup and restore: each killed (SIGKILL, through ``faults.CrashRunner``) before every one of
its file operations in turn, on a fresh copy of one planted deployment, then checked.

The deployment (the same paths every time, so the JSON files that name them stay true): three memories
backed up, then changed (one deleted, one superseded, one added), so the backup's memories and the current
ones differ. After each kill:

- ``opens``: the drop-in opens the stores and serves the current memories (or, after a restore's last
  step, the backup's), ids and texts; while a restore journal is unfinished it is refused instead, with
  the command that finishes it;
- ``rerun``: the same operation run again completes (a restore: the very command the refusal names);
- ``end``: the drop-in and plain mem0 serve exactly what they serve after an uninterrupted run;
- ``nothing_lost``: every store a restore moved aside is listed in the registry of copies and still holds
  the memories it replaced (for a restore, the current memories are in one of them); every backup set on
  disk is registered and checks out; no temporary ``.partial-``/``.restoring-`` copy is left;
- ``integrity``: ``PRAGMA integrity_check`` is ok on every SQLite file of the stores.

With ``ledger_url`` the deployment's ledger is on PostgreSQL (a schema of its own, put back as it was before
every run): the commit of the restore's PostgreSQL step is a kill point too (:data:`POSTGRES_OPERATIONS`), and
``nothing_lost`` also asks that a dump of the ledger rows the restore replaced holds the current memories.

Used by ``tests/actions/test_backup_restore_faults.py`` (a sample),
``tests/fleet/test_backup_restore_faults_postgres.py`` (a sample, PostgreSQL) and
``benchmarks/fault_sweep_backup.py`` (every kill point).
"""

from __future__ import annotations

import os
import shlex
import shutil
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

U = {"user_id": "dana"}

BACKUP = """
def operation(config, dest):
    from mem0_hygiene.actions.backup import backup
    backup(config, dest)
"""

RESTORE = """
def operation(config, src, config_source=None):
    from mem0_hygiene.actions.restore import restore
    restore(config, src, config_source=config_source)
"""

POSTGRES_OPERATIONS = (("mem0_hygiene.stores.ledger.postgres_copy", "commit_point"),)
"""Kill points added for a PostgreSQL ledger (with ``tests/faults.py``'s file operations): right before the
restore's transaction on the ledger commits."""


def postgres_runner(faults: Any) -> Any:
    """A ``faults.CrashRunner`` that also kills before :data:`POSTGRES_OPERATIONS`."""
    faults.FILE_OPERATIONS = tuple(dict.fromkeys((*faults.FILE_OPERATIONS, *POSTGRES_OPERATIONS)))
    return faults.CrashRunner()


class PostgresState:
    """Every table of one PostgreSQL schema, read once and written back before each run."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url
        with psycopg.connect(url, autocommit=True) as conn:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                    "AND table_type = 'BASE TABLE' ORDER BY table_name"
                )
            ]
            self.rows = {n: conn.execute(f'SELECT * FROM "{n}"').fetchall() for n in names}

    def put_back(self) -> None:
        import psycopg

        with psycopg.connect(self.url) as conn, conn.transaction():
            conn.execute("SET CONSTRAINTS ALL DEFERRED")
            for name, rows in self.rows.items():
                conn.execute(f'DELETE FROM "{name}"')
                if rows:
                    marks = ", ".join(["%s"] * len(rows[0]))
                    conn.cursor().executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)

    def ids(self) -> set[str]:
        """The memory ids the ledger holds now."""
        import psycopg

        with psycopg.connect(self.url) as conn:
            return {r[0] for r in conn.execute("SELECT memory_id FROM memories")}


@dataclass
class KillPoint:
    k: int
    call: str
    held: int = 0
    failures: dict[str, str] = field(default_factory=dict)


@dataclass
class Sweep:
    operation: str
    calls: list[str]
    points: list[KillPoint] = field(default_factory=list)

    @property
    def checks_held(self) -> int:
        return sum(p.held for p in self.points)

    @property
    def checks_run(self) -> int:
        return sum(p.held + len(p.failures) for p in self.points)

    @property
    def failures(self) -> list[KillPoint]:
        return [p for p in self.points if p.failures]


def served(config: dict[str, Any]) -> dict[str, str]:
    """id -> text of every live memory the drop-in serves."""
    from mem0_hygiene import Memory

    m = Memory.from_config(config)
    try:
        return {r["id"]: r["memory"] for r in m.get_all(filters=U, top_k=100)["results"]}
    finally:
        m.close()


def plain_served(config: dict[str, Any]) -> dict[str, str]:
    import mem0

    from mem0_hygiene.config import build_mem0_config, split_config

    m = mem0.Memory(build_mem0_config(split_config(config)[0]))
    try:
        return {r["id"]: r["memory"] for r in m.get_all(filters=U, top_k=100)["results"]}
    finally:
        m.close()
        m.vector_store.client.close()


def point_ids(qdrant_folder: str) -> set[str]:
    from qdrant_client import QdrantClient

    client = QdrantClient(path=qdrant_folder)
    try:
        return {str(p.id) for p in client.scroll("mem0", limit=1000)[0]}
    finally:
        client.close()


class Scenario:
    """The planted deployment, kept as a template in ``base/template`` and copied to ``base/case`` per run."""

    def __init__(self, base: Path, ledger_url: str | None = None) -> None:
        import json

        from mem0_hygiene import Memory, offline_config
        from mem0_hygiene.actions.backup import backup

        self.base = base
        self.case = base / "case"
        self.template = base / "template"
        self.ledger_url = ledger_url
        shutil.rmtree(base, ignore_errors=True)
        self.config = offline_config(self.case / "app", hygiene={"ledger_url": ledger_url} if ledger_url else None)
        self.config_file = self.case / "app.json"  # what the finish command of a restore names (--config)
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(json.dumps(self.config))
        self.dest = str(self.case / "backups")
        m = Memory.from_config(self.config)
        ids = [
            m.add(t, **U, infer=False, source="chat")["results"][0]["id"]
            for t in ("Dana works on billing", "Dana prefers npm", "Standup is at 9:30")
        ]
        m.close()
        self.backed_up_set = backup(self.config, self.dest).path
        self.backed_up = served(self.config)
        plain_backed_up = plain_served(self.config)
        m = Memory.from_config(self.config)
        m.delete(ids[0])
        m.supersede(ids[1], "Dana prefers pnpm", source="chat")
        m.add("Dana moved to the search team", **U, infer=False, source="chat")
        m.close()
        self.current = served(self.config)
        assert self.current != self.backed_up
        plain_current = plain_served(self.config)
        self.plain_ends = {"backup": plain_current, "restore": plain_backed_up}
        shutil.copytree(self.case, self.template, symlinks=True)
        self.ends: dict[str, dict[str, str]] = {"backup": self.current, "restore": self.backed_up}
        self.postgres = PostgresState(ledger_url) if ledger_url else None

    def reset(self) -> None:
        shutil.rmtree(self.case, ignore_errors=True)
        shutil.copytree(self.template, self.case, symlinks=True)
        if self.postgres is not None:
            self.postgres.put_back()

    def args(self, operation: str) -> list[Any]:
        cfg = {k: v for k, v in self.config.items() if k != "hygiene"}
        if self.ledger_url:
            cfg["hygiene"] = {"ledger_url": self.ledger_url}
        if operation == "backup":
            return [cfg, self.dest]
        return [cfg, self.backed_up_set, str(self.config_file) if self.ledger_url else None]

    # -- checks -------------------------------------------------------------------------------------------
    def check_opens(self, operation: str) -> str | None:
        """What the drop-in serves now; for a refused restore, the command the refusal names."""
        from mem0_hygiene.errors import BackupError

        try:
            now = served(self.config)
        except BackupError as exc:
            message = str(exc)
            assert operation == "restore", message
            assert "\n" not in message and "was interrupted" in message, message
            command = message.split("`")[1]
            assert command.startswith("mem0-hygiene restore "), message
            if self.ledger_url:
                from urllib.parse import urlsplit

                assert f":{urlsplit(self.ledger_url).password}@" not in message, "the ledger's password is shown"
                assert f"--config {self.config_file}" in command, message
            return command
        assert now in (self.current, self.ends[operation]), now
        return None

    def rerun(self, operation: str, command: str | None) -> None:
        from mem0_hygiene.actions.backup import backup

        if operation == "backup":
            backup(self.config, self.dest)
            return
        from click.testing import CliRunner

        from mem0_hygiene.cli import cli

        argv = (
            shlex.split(command)
            if command
            else [
                "mem0-hygiene",
                "restore",
                self.backed_up_set,
                "--qdrant-path",
                self.config["vector_store"]["config"]["path"],
                "--history-db",
                self.config["history_db_path"],
                "--yes",
            ]
        )
        if self.ledger_url and not command:
            argv[3:3] = ["--config", str(self.config_file)]
        result = CliRunner().invoke(cli, argv[1:], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    def check_end(self, operation: str) -> None:
        want = self.ends[operation]
        assert served(self.config) == want
        assert plain_served(self.config) == self.plain_ends[operation]

    def check_nothing_lost(self, operation: str) -> None:
        from mem0_hygiene.actions.restore import restore
        from mem0_hygiene.stores.backup_set import check_set
        from mem0_hygiene.stores.copies import list_copies

        app = self.case / "app"
        left = [str(p) for p in self.case.rglob("*") if ".partial-" in p.name or ".restoring-" in p.name]
        assert not left, left
        copies = {c.path: c for c in list_copies(self.ledger_url or str(app / "hygiene.db"), str(app / "history.db"))}
        sets = [str(p) for p in Path(self.dest).iterdir()]
        for s in sets:
            assert s in copies, f"the backup set {s} is not in the registry"
            assert not check_set(s), check_set(s)
        if operation == "backup":
            assert len(sets) >= 2
            newest = max(sets)
            assert restore(self.config, newest, dry_run=True).checked_files > 0
            return
        asides = [
            str(p)
            for p in app.iterdir()
            if ".replaced-" in p.name and not p.name.endswith(("-wal", "-shm", "-journal"))
        ]
        unlisted = [a for a in asides if a not in copies]
        assert not unlisted, f"moved aside but not in the registry: {unlisted}"
        qdrant_asides = [a for a in asides if os.path.basename(a).startswith("qdrant.")]
        assert any(point_ids(a) >= set(self.current) for a in qdrant_asides), (
            f"no store moved aside holds the memories the restore replaced: {qdrant_asides}"
        )
        if self.ledger_url:
            from mem0_hygiene.stores.sqlite import connect

            dumps = [a for a in asides if os.path.basename(a).startswith("ledger-postgresql.db.")]
            held = []
            for dump in dumps:
                conn = connect(dump, readonly=True)
                try:
                    held.append({r[0] for r in conn.execute("SELECT memory_id FROM memories")})
                finally:
                    conn.close()
            assert any(ids >= set(self.current) for ids in held), (
                f"no dump of the replaced ledger rows holds the current memories: {dumps}"
            )

    def check_integrity(self) -> None:
        from mem0_hygiene.stores.sqlite import integrity_check

        app = self.case / "app"
        files = [
            app / "history.db",
            app / "hygiene.db",
            *(app / "qdrant").rglob("storage.sqlite"),
            *app.glob("ledger-postgresql.db.replaced-*"),
        ]
        for f in files:
            if self.ledger_url and f.name == "hygiene.db":
                assert not f.exists(), f"a ledger file appeared beside a PostgreSQL ledger: {f}"
                continue
            assert integrity_check(str(f)) == "ok", f


def _checked(point: KillPoint, name: str, check: Callable[[], Any]) -> Any:
    """Run one check after a kill: counted as held, or its traceback kept under its name."""
    try:
        got = check()
    except Exception:
        point.failures[name] = traceback.format_exc(limit=3)
        return None
    point.held += 1
    return got


def kill_before_each(
    runner: Any,
    scenario: Scenario,
    operation: str,
    *,
    every: int = 1,
    progress: Callable[[KillPoint], None] | None = None,
    also: Callable[[list[str]], Any] | None = None,
) -> Sweep:
    """Kill ``operation`` ("backup" or "restore") before each of its file operations (every ``every``-th, plus
    the first and the last, plus the kill points ``also(calls)`` names) and run the checks after each kill."""
    code = BACKUP if operation == "backup" else RESTORE
    scenario.reset()
    clean = runner.run(code, *scenario.args(operation))
    assert clean["status"] == "ok", clean
    calls = list(clean["calls"])
    sweep = Sweep(operation, calls)
    ks = sorted({1, len(calls), *range(1, len(calls) + 1, every), *(also(calls) if also else ())})
    for k in ks:
        scenario.reset()
        point = KillPoint(k, calls[k - 1])
        out = runner.run(code, *scenario.args(operation), kill_at=k)
        if out["status"] != "killed":
            point.failures["killed"] = f"not killed before call {k}: {out.get('status')} {out.get('error', '')}"
            sweep.points.append(point)
            continue
        command = _checked(point, "opens", lambda: scenario.check_opens(operation))
        _checked(point, "rerun", lambda: scenario.rerun(operation, command))  # noqa: B023 (called at once)
        if "rerun" not in point.failures:
            _checked(point, "end", lambda: scenario.check_end(operation))
            _checked(point, "nothing_lost", lambda: scenario.check_nothing_lost(operation))
            _checked(point, "integrity", scenario.check_integrity)
        sweep.points.append(point)
        if progress is not None:
            progress(point)
    return sweep
