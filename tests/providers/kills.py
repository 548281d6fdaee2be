"""Kill a drop-in operation on any provider after each of its steps: a fresh OS process runs it and SIGKILLs
itself right after its k-th step.

A step is one call that changes or reads a store: mem0's vector store ``insert``/``update``/``delete``, its
history ``add_history``, and every public method of the ledger (its journal, links and tombstones). The child
builds the drop-in from the config (JSON, the clock fixed at ``now``), wraps those calls on the open instance,
runs ``source`` (Python with ``m`` the Memory and ``ids`` the planted ids) and reports the steps it made. A
run with ``kill_at=0`` is never killed: its step list says where the kill points are. ``kill_at`` may also be
a step's label (``"vector_store.insert"``): killed right after the first such step.

The scenario (:func:`plant`, :data:`SOURCES`, :func:`check_and_retry`, :func:`wrongs`): an old fact and an
unrelated one; the old one superseded or deleted, the process killed, the drop-in restarted, the app's retry.

Each run is a new interpreter (not a fork): a pgvector pool or a Chroma client must never be shared with a
forked child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mem0 import Memory as PlainMemory

from mem0_hygiene import Memory
from mem0_hygiene.errors import MemoryNotFound

CHILD = r"""
import json, os, signal, sys
os.environ["MEM0_TELEMETRY"] = "False"
from datetime import datetime
from mem0_hygiene import Memory

job = json.loads(sys.argv[1])
now = datetime.fromisoformat(job["now"])
config = job["config"]
config["hygiene"] = {**config.get("hygiene", {}), "clock": lambda: now}
m = Memory.from_config(config)
steps = []
kill_at = job["kill_at"]  # a step's number, or its label (killed after the first such step)


def wrap(owner, name, label):
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        out = real(*args, **kwargs)
        steps.append(label)
        if len(steps) == kill_at or label == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # right after step k
        return out

    setattr(owner, name, counted)


for name in ("insert", "update", "delete"):
    wrap(m.vector_store, name, f"vector_store.{name}")
wrap(m.db, "add_history", "history.add_history")
for name in dir(type(m.ledger)):
    if not name.startswith("_") and callable(getattr(m.ledger, name)) and name not in ("now", "close"):
        wrap(m.ledger, name, f"ledger.{name}")
exec(job["source"], {"m": m, "ids": job["ids"]})
m.close()
with open(job["report"], "w") as fh:
    json.dump({"steps": steps}, fh)
"""


@dataclass(frozen=True)
class Run:
    """One run: killed (by SIGKILL) or not, the steps it made (a clean run's), stderr's tail on failure."""

    killed: bool
    steps: list[str]
    error: str = ""


def child_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without what JSON cannot carry (the clock: the child fixes its own)."""
    hygiene = {k: v for k, v in config.get("hygiene", {}).items() if k != "clock"}
    return {**config, "hygiene": hygiene}


def run_killed(
    config: dict[str, Any], source: str, ids: dict[str, str], now: datetime, folder: Path, kill_at: int | str = 0
) -> Run:
    """Run ``source`` on a drop-in over ``config`` in a new process, killed right after step ``kill_at`` (a
    number from 1, or a step's label)."""
    report = folder / f"report-{kill_at}-{os.getpid()}.json"
    report.unlink(missing_ok=True)
    job = {
        "config": child_config(config),
        "source": source,
        "ids": ids,
        "now": now.isoformat(),
        "kill_at": kill_at,
        "report": str(report),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(job)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MEM0_TELEMETRY": "False"},
    )
    if done.returncode == -9:
        return Run(True, [])
    if done.returncode != 0 or not report.exists():
        return Run(False, [], done.stderr[-3000:])
    return Run(False, json.loads(report.read_text())["steps"])


SCOPE = {"user_id": "dana"}
OLD, NEW, OTHER = "Dana deploys with Docker Compose", "Dana deploys with Kubernetes now", "Dana lives in Haifa"
SOURCES = {"supersede": f'm.supersede(ids["old"], {NEW!r})', "delete": 'm.delete(ids["old"])'}
"""The operations killed: a supersede of the old fact by the new one, a delete of the old fact."""


def plant(config: dict[str, Any]) -> dict[str, str]:
    """The old fact and an unrelated one, stored through the drop-in (closed after); their ids."""
    m = Memory.from_config(config)
    try:
        old = m.add(OLD, **SCOPE, infer=False)["results"][0]["id"]
        other = m.add(OTHER, **SCOPE, infer=False)["results"][0]["id"]
        return {"old": old, "other": other}
    finally:
        m.close()


def served(m: Memory) -> list[str]:
    """Every text the drop-in serves in the scope, by get_all and by a search for the fact."""
    listed = {r["memory"] for r in m.get_all(filters=SCOPE)["results"]}
    found = {r["memory"] for r in m.search("how does Dana deploy", filters=SCOPE, top_k=5, threshold=0.0)["results"]}
    return sorted(listed | found)


def check_and_retry(op: str, config: dict[str, Any], ids: dict[str, str]) -> tuple[list[str], list[str]]:
    """Restart, read what is served, run the app's retry; (served after the restart, served after the retry)."""
    m = Memory.from_config(config)
    try:
        seen = served(m)
        if op == "delete" and OLD not in seen:
            assert PlainMemory.get(m, ids["old"]) is None, "plain mem0 serves a deleted memory after the restart"
        row = m.ledger.get(ids["old"])
        if op == "supersede" and row is not None and row.superseded_by is None:
            m.supersede(ids["old"], NEW)
        if op == "delete":
            try:
                m.delete(ids["old"])
            except MemoryNotFound:
                pass  # deleted before the kill
        return seen, served(m)
    finally:
        m.close()


def wrongs(op: str, seen: list[str], after: list[str], strict: bool = False) -> list[str]:
    """What went wrong after a kill (empty: nothing): ``seen`` served after the restart, ``after`` after the app's
    retry. ``strict``: the kill came after mem0's write, so the restart must already show the outcome."""
    out = []
    if OTHER not in seen:
        out.append(f"lost an unrelated memory: {seen}")
    if {OLD, NEW} <= set(seen):
        out.append(f"served both facts: {seen}")
    if op == "supersede" and OLD not in seen and NEW not in seen:
        out.append(f"lost the fact: {seen}")
    final = sorted([NEW, OTHER]) if op == "supersede" else [OTHER]
    if after != final:
        out.append(f"the retry ended with {after}")
    if strict and seen != final:
        out.append(f"the restart served {seen}, not {final}")
    return out


def sample(total: int, every: int) -> list[int]:
    """Kill points 1..total: the first, the last and every ``every``-th between."""
    return sorted({1, total, *range(every, total, every)}) if total else []
