"""The audit over a ledger on PostgreSQL against the same audit over the same ledger in SQLite, as a ratio in one run.

What it measures
    ``audit(config)`` on one synthetic deployment (``bench_audit.py``'s builder: N memories in local Qdrant,
    M history rows, a ledger; default 10k / 100k), twice: with ``hygiene.ledger_path`` (the SQLite ledger, attached
    to the audit's scratch database) and with ``hygiene.ledger_url`` (the same rows copied into PostgreSQL by
    ``mem0-hygiene ledger migrate``: the ledger checks run as SQL on the server in one read-only snapshot, and
    the joins with the points get each row's id and state). Each audit runs in a fresh subprocess; rounds
    alternate which goes first; the ratio is the median of the per-round ratios (PostgreSQL / SQLite). Besides
    the whole audit it shows the part before the checks run (opening the stores, the ledger's ids streamed in,
    the vector store read) and the checks themselves. The two reports' findings (codes and counts; those about
    where the stores are and the backups left out) must be the same.

    bench_audit.py's ledger has supersede pointers to nowhere (a script with foreign keys off), which
    PostgreSQL's foreign key refuses: both sides use a copy of it (``ledger-pg-bench.db`` beside it) with those
    pointers cleared.

How to run (PostgreSQL reachable at --url, default MEM0_HYGIENE_TEST_PG_URL or the tests' default; a new schema
is made there for the run and dropped after)
    python benchmarks/bench_audit_postgres.py --memories 10000 --history-rows 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")

DEFAULT_URL = "postgresql://mem0_hygiene:mem0_hygiene@127.0.0.1:5432/mem0_hygiene_test"
LEDGER_COPY = "ledger-pg-bench.db"


def config_for(folder: Path, ledger: str) -> dict[str, Any]:
    from mem0_hygiene import offline_config

    key = "ledger_url" if ledger.startswith("postgresql://") else "ledger_path"
    return offline_config(folder, hygiene={key: ledger})


def child(folder: Path, ledger: str) -> dict[str, Any]:
    import qdrant_client  # noqa: F401  (imports are not what is measured)

    from mem0_hygiene.auditing.runner import audit
    from mem0_hygiene.progress import reporting

    marks: dict[str, float] = {}

    def mark(phase: str, _done: int, _total: int | None) -> None:
        marks.setdefault(phase, time.perf_counter())

    cfg = config_for(folder, ledger)
    t0 = time.perf_counter()
    with reporting(mark):
        report = audit(cfg)
    t1 = time.perf_counter()
    checks = marks.get("running the checks", t1)
    return {
        "seconds": t1 - t0,
        "before_checks": checks - t0,
        "checks": t1 - checks,
        # where the ledger is (a file under /var/tmp, or a server) is not what is compared
        "findings": sorted((f.code, f.count) for f in report.findings if f.area not in ("storage", "backups")),
        "skipped": sorted(f"{s.code}: {s.reason}" for s in report.skipped),
    }


def run_child(folder: Path, ledger: str) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--_child", "--dir", str(folder), "--ledger", ledger]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the audit child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def prepare(folder: Path, url: str) -> tuple[str, str]:
    """(SQLite ledger path, PostgreSQL URL) holding the same rows."""
    from mem0_hygiene.actions.ledger_migrate import migrate_ledger

    copy = folder / LEDGER_COPY
    for suffix in ("", "-wal", "-shm"):
        Path(str(copy) + suffix).unlink(missing_ok=True)
    src = sqlite3.connect(folder / "hygiene.db")
    src.execute(f"VACUUM INTO '{copy}'")
    src.close()
    conn = sqlite3.connect(copy)
    conn.execute(
        "UPDATE memories SET superseded_by = NULL, superseded_at = NULL WHERE superseded_by IS NOT NULL "
        "AND superseded_by NOT IN (SELECT memory_id FROM memories)"
    )
    conn.commit()
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    migrate_ledger(config_for(folder, str(copy)), url)
    return str(copy), url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--history-rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--url",
        default=os.environ.get("MEM0_HYGIENE_TEST_PG_URL", DEFAULT_URL),
        help="a PostgreSQL database where a schema may be created for the run",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "mem0-hygiene-bench-audit",
        help="where bench_audit.py builds its deployments (reused when already built)",
    )
    parser.add_argument("--ledger", help=argparse.SUPPRESS)
    parser.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._child:
        import logging
        import warnings

        logging.disable(logging.WARNING)
        warnings.simplefilter("ignore")
        print(json.dumps(child(args.dir, args.ledger)))
        return 0

    import psycopg
    from bench_audit import ensure_built

    from mem0_hygiene.stores.ledger.postgres import redact

    folder = ensure_built(args.dir, args.memories, args.history_rows)
    schema = "bench_" + uuid.uuid4().hex[:10]
    admin = psycopg.connect(args.url, autocommit=True)
    admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.url else "?"
    url = f"{args.url}{sep}options=-csearch_path%3D{schema}"
    try:
        t0 = time.perf_counter()
        sqlite_ledger, pg_url = prepare(folder, url)
        version = admin.execute("SHOW server_version").fetchone()[0]
        print(
            f"{args.memories} memories / {args.history_rows} history rows at {folder}; ledger migrated to "
            f"{redact(args.url)} (PostgreSQL {version}, schema {schema}) in {time.perf_counter() - t0:.1f}s"
        )
        print(f"machine: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}")
        sides: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgresql": []}
        for r in range(args.rounds):
            order = ("sqlite", "postgresql") if r % 2 == 0 else ("postgresql", "sqlite")
            for side in order:
                sides[side].append(run_child(folder, sqlite_ledger if side == "sqlite" else pg_url))
            s, p = sides["sqlite"][-1], sides["postgresql"][-1]
            print(
                f"  round {r + 1}: sqlite {s['seconds']:.2f}s (checks {s['checks']:.2f}s), "
                f"postgresql {p['seconds']:.2f}s (checks {p['checks']:.2f}s)",
                flush=True,
            )
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(folder / LEDGER_COPY) + suffix).unlink(missing_ok=True)
    same = sides["sqlite"][0]["findings"] == sides["postgresql"][0]["findings"]
    skipped = sides["sqlite"][0]["skipped"] + sides["postgresql"][0]["skipped"]

    def med(side: str, key: str) -> float:
        return statistics.median(x[key] for x in sides[side])

    ratio = statistics.median(p["seconds"] / s["seconds"] for s, p in zip(sides["sqlite"], sides["postgresql"]))
    checks = statistics.median(p["checks"] / s["checks"] for s, p in zip(sides["sqlite"], sides["postgresql"]))
    print()
    print(f"{'ledger':<11} {'audit s':>8} {'before checks s':>16} {'checks s':>9}")
    for side in ("sqlite", "postgresql"):
        print(
            f"{side:<11} {med(side, 'seconds'):>8.2f} {med(side, 'before_checks'):>16.2f} {med(side, 'checks'):>9.2f}"
        )
    print(f"ratio postgresql / sqlite: audit {ratio:.2f}, checks {checks:.2f} (median of {args.rounds} rounds)")
    print(
        f"findings (codes and counts) identical: {'yes' if same else 'NO'}; {len(sides['sqlite'][0]['findings'])} "
        f"findings" + (f"; skipped: {'; '.join(skipped)}" if skipped else "")
    )
    if not same:
        print("sqlite:     " + json.dumps(sides["sqlite"][0]["findings"]))
        print("postgresql: " + json.dumps(sides["postgresql"][0]["findings"]))
    return 0 if same and not skipped else 1


if __name__ == "__main__":
    sys.exit(main())
