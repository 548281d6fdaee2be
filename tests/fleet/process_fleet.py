"""A fleet of drop-in replicas as separate OS processes over one pgvector table and one PostgreSQL ledger.

Run as a script (``python process_fleet.py JOB``), one replica: it builds the drop-in from the job's config (its
own history.db folder, the shared pgvector table and ledger), then runs ``ops`` seeded operations on the job's
users (shared with the other replicas): topic-key upserts (all replicas race on the same keys), adds,
supersedes, invalidations and deletes of facts it added itself, and reads. Each operation that returned is
acknowledged by one JSON line appended to the replica's ack file (flushed: a SIGKILL loses no acknowledged line).
A read that serves a memory this replica saw superseded, invalidated or deleted is acknowledged as a violation.
With ``"mode": "read"`` it only reads every user and writes what it serves (the final check of each replica).

:func:`start`, :func:`acks` and :func:`check_fleet` are the parent's side (the test and
``benchmarks/fleet_processes.py``). The replicas use the ledger's clock (the PostgreSQL server's time), as a
fleet does: nothing waits on it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY = "standup"
DEAD_OPS = ("superseded", "invalidate", "delete")


def run_replica(job: dict[str, Any]) -> None:
    """One replica's run (in its own process); see the module docstring."""
    from mem0_hygiene import Memory

    m = Memory.from_config(job["config"])
    users: list[str] = job["users"]
    if job.get("kill_after_inserts"):  # SIGKILL right after mem0's k-th vector insert: midway through an operation
        import signal

        real, done = m.vector_store.insert, []

        def insert(*args: Any, **kwargs: Any) -> Any:
            out = real(*args, **kwargs)
            done.append(1)
            if len(done) == job["kill_after_inserts"]:
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        m.vector_store.insert = insert
    try:
        if job.get("mode") == "read":
            served = {
                u: sorted(r["id"] for r in m.get_all(filters={"user_id": u}, top_k=1000)["results"]) for u in users
            }
            Path(job["out"]).write_text(json.dumps(served))
            return
        rng = random.Random(job["seed"])
        mine: list[tuple[str, str]] = []  # (user, id) of live facts this replica added
        dead: set[str] = set()
        with open(job["acks"], "a", encoding="utf-8") as log:

            def ack(**entry: Any) -> None:
                log.write(json.dumps(entry) + "\n")
                log.flush()

            started = time.perf_counter()
            for n in range(job["ops"]):
                user = rng.choice(users)
                tag = f"{job['name']}-{n}"
                roll = rng.random()
                if roll < 0.3:
                    text = f"{user}'s standup is at slot {tag}"
                    got = m.add(text, user_id=user, infer=False, topic_key=KEY, source="chat")["results"]
                    ack(op="upsert", user=user, id=got[0]["id"], text=text)
                elif roll < 0.55 or not mine:
                    text = f"{user} noted fact {tag}"
                    got = m.add(text, user_id=user, infer=False, source="chat")["results"]
                    mine.append((user, got[0]["id"]))
                    ack(op="add", user=user, id=got[0]["id"], text=text)
                elif roll < 0.7:
                    u, old = mine.pop(rng.randrange(len(mine)))
                    new = m.supersede(old, f"{u} revised fact {tag}", source="chat")
                    dead.add(old)
                    mine.append((u, new))
                    ack(op="superseded", user=u, id=old)
                    ack(op="add", user=u, id=new, text=f"{u} revised fact {tag}")
                elif roll < 0.8:
                    u, old = mine.pop(rng.randrange(len(mine)))
                    m.invalidate(old, reason="wrong")
                    dead.add(old)
                    ack(op="invalidate", user=u, id=old)
                elif roll < 0.9:
                    u, old = mine.pop(rng.randrange(len(mine)))
                    m.delete(old)
                    dead.add(old)
                    ack(op="delete", user=u, id=old)
                else:
                    served = [r["id"] for r in m.get_all(filters={"user_id": user}, top_k=1000)["results"]]
                    found = m.search("standup slot", filters={"user_id": user}, top_k=20, threshold=0.0)["results"]
                    bad = sorted(dead & ({*served} | {r["id"] for r in found}))
                    ack(op="read", user=user, served=len(served), violations=bad)
            ack(op="done", ops=job["ops"], seconds=time.perf_counter() - started)  # the operations' own time
    finally:
        m.close()


def start(job: dict[str, Any]) -> subprocess.Popen[str]:
    """Start one replica process for ``job`` (its stderr to ``job['log']``)."""
    log = open(job["log"], "a", encoding="utf-8")  # noqa: SIM115 (the child holds it; closed with the process)
    try:
        return subprocess.Popen(
            [sys.executable, __file__, json.dumps(job)],
            stdout=log,
            stderr=log,
            text=True,
            env={**os.environ, "MEM0_TELEMETRY": "False"},
        )
    finally:
        log.close()


def acks(path: Path) -> list[dict[str, Any]]:
    """The acknowledged operations in an ack file (a line a kill cut short is not one)."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


@dataclass
class FleetCheck:
    """What the final state broke: each list empty when the fleet kept its promises."""

    lost: list[str] = field(default_factory=list)
    served_dead: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def problems(self) -> list[str]:
        return [
            *(f"acknowledged and lost: {x}" for x in self.lost),
            *(f"served though superseded, invalidated or deleted: {x}" for x in self.served_dead),
            *(f"topic key: {x}" for x in self.keys),
            *(f"a replica's read served what it had replaced: {x}" for x in self.violations),
        ]


def check_fleet(
    entries: list[dict[str, Any]], served: list[dict[str, list[str]]], live_keyed: dict[str, list[str]]
) -> FleetCheck:
    """Check the acknowledged ``entries`` of every replica against what each replica's final read ``served``
    (user -> ids) and the live ids with the topic key per user (``live_keyed``)."""
    check = FleetCheck()
    dead = {e["id"] for e in entries if e["op"] in DEAD_OPS}
    added = {e["id"]: e for e in entries if e["op"] == "add"}
    upserts: dict[str, set[str]] = {}
    for e in entries:
        if e["op"] == "upsert":
            upserts.setdefault(e["user"], set()).add(e["id"])
        check.counts[e["op"]] = check.counts.get(e["op"], 0) + 1
        if e["op"] == "read" and e["violations"]:
            check.violations.append(f"{e['user']}: {e['violations']}")
    for view in served:
        every = {i for ids in view.values() for i in ids}
        check.lost.extend(sorted(f"{i} ({added[i]['text']})" for i in added if i not in dead and i not in every))
        check.served_dead.extend(sorted(every & dead))
    for user, acked in upserts.items():
        live = live_keyed.get(user, [])
        if len(live) != 1:
            check.keys.append(f"{user} has {len(live)} live memories with the key")
        elif not acked:
            check.keys.append(f"{user}: no upsert acknowledged")
    check.lost = sorted(set(check.lost))
    check.served_dead = sorted(set(check.served_dead))
    return check


if __name__ == "__main__":
    run_replica(json.loads(sys.argv[1]))
