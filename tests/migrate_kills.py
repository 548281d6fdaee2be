"""Kill a migration after each of its steps: a fresh OS process runs ``migrate`` and SIGKILLs itself right after
its k-th step, then the rerun must finish it.

A step is each progress report of the migration (every phase's start and each batch: the plan's reading, the
export's pages and its write, each batch of points inserted through mem0, the history and ledger transactions,
the verification, the cleanup) and each journal write. The child sets the import's batch to 2 points so every
couple of points is a kill point. A run with ``kill_at=0`` is never killed: its step list says where the kill
points are. :func:`check_after_kill` says what may be true after a kill (the source as it was; the destination
empty of our writes, or its journal there to resume from) and :func:`check_finished` what must be true after
the rerun (the destination equal to the source, no duplicates, the journal gone). Used by
tests/actions/test_migrate_kills.py (a sample of the points) and benchmarks/migrate_kill_sweep.py (all).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHILD = r"""
import json, os, signal, sys
os.environ["MEM0_TELEMETRY"] = "False"
job = json.loads(sys.argv[1])
steps = []
kill_at = job["kill_at"]


def hit(label):
    steps.append(label)
    if len(steps) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)  # right after step k


from mem0_hygiene import progress
import mem0_hygiene.actions.migrate as migrate
import mem0_hygiene.actions.portable_import as portable_import

portable_import.BATCH = 2
real_write = migrate.write_journal


def write_journal(folder, doc, step):
    out = real_write(folder, doc, step)
    hit(f"journal {step}")
    return out


migrate.write_journal = write_journal
with progress.reporting(lambda phase, done, total: hit(f"{phase} {done}/{total}")):
    migrate.migrate(job["source"], job["target"])
with open(job["report"], "w") as fh:
    json.dump({"steps": steps}, fh)
"""


@dataclass(frozen=True)
class Run:
    """One run: killed (by SIGKILL) or not, the steps a clean run made, stderr's tail when it failed."""

    killed: bool
    steps: list[str]
    error: str = ""


def fill(config: dict[str, Any]) -> None:
    """Six memories, one superseded, one deleted: the data every migrate kill run starts from."""
    from mem0_hygiene import Memory

    m = Memory.from_config(config)
    try:
        ids = [
            m.add(f"fact {i}: the build runs on host {i}", user_id="dana", infer=False)["results"][0]["id"]
            for i in range(6)
        ]
        m.supersede(ids[0], "fact 0: the build runs on host 9 now", source="chat")
        m.delete(ids[1])
    finally:
        m.close()


def run_migration(source: dict[str, Any], target: dict[str, Any], kill_at: int, folder: Path) -> Run:
    """``migrate(source, target)`` in a new interpreter, SIGKILLed right after step ``kill_at`` (0: never)."""
    report = folder / f"report-{kill_at}.json"
    job = {"source": source, "target": target, "kill_at": kill_at, "report": str(report)}
    env = {**os.environ, "MEM0_TELEMETRY": "False"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(job)], capture_output=True, text=True, env=env, timeout=300
    )
    if proc.returncode == -9:
        return Run(True, [])
    if proc.returncode != 0:
        return Run(False, [], proc.stderr[-2000:])
    return Run(False, json.loads(report.read_text())["steps"])


def fingerprint(config: dict[str, Any], folder: Path, name: str) -> list[str]:
    """The export of a deployment without its header (the lines of the memories, then of the history)."""
    from mem0_hygiene.maintenance import export

    done = export(config, str(folder / f"{name}.jsonl"))
    out = Path(done.path).read_text(encoding="utf-8").splitlines()[1:]
    out += Path(done.history_path).read_text(encoding="utf-8").splitlines()[1:]
    return out


def destination_state(target: dict[str, Any]) -> tuple[int, int, int, bool]:
    """(points, ledger rows, history rows, journal there) of the destination."""
    from mem0_hygiene.actions.migrate import _ledger_rows
    from mem0_hygiene.actions.migrate_journal import JOURNAL, work_folder
    from mem0_hygiene.actions.portable_import import history_rows
    from mem0_hygiene.stores.vector import for_target
    from mem0_hygiene.target import resolve

    dst = resolve(target)
    with for_target(dst) as store:
        points = store.count() if store.exists() else 0
    journal = os.path.isfile(os.path.join(work_folder(dst.history_path), JOURNAL))
    return points, _ledger_rows(dst.ledger_path), history_rows(dst.history_path), journal


def check_after_kill(target: dict[str, Any], want: list[str], folder: Path) -> str:
    """Empty when the destination is empty of our writes, resumable (its journal is there) or finished (it holds
    the source's memories and history: killed after the journal was removed); else what is wrong."""
    points, rows, history, journal = destination_state(target)
    if journal or (points, rows, history) == (0, 0, 0) or fingerprint(target, folder, "killed") == want:
        return ""
    return f"killed with {points} point(s), {rows} ledger row(s), {history} history row(s) and no journal"


def check_finished(target: dict[str, Any], want: list[str], folder: Path, name: str) -> str:
    """ "" when the destination holds exactly the source's memories and history and the journal is gone."""
    points, _rows, _history, journal = destination_state(target)
    if journal:
        return "the journal is still there after the rerun"
    got = fingerprint(target, folder, name)
    if got != want:
        return f"the destination differs from the source ({points} point(s); {len(got)} line(s), {len(want)} wanted)"
    return ""
