"""The full kill sweep of ``mem0-hygiene relocate`` on every local-folder vector store (local Qdrant, Chroma,
FAISS): each option variant (--with-sqlite, --remove-source, --update-config) killed (SIGKILL) before each of its
file operations in turn (every rename, link, copy and delete; see ``tests/faults.py``), the app restarted with its
config file, the same command run again; after each, nothing lost and the move finished as an uninterrupted run
finishes it (see ``tests/relocate_kills.py``). Prints each failed kill point and the totals per provider and variant.

    python benchmarks/relocate_kill_sweep.py [--provider chroma] [--variant with-sqlite] [--every 1]

The CI suite kills a sample of these operations on Chroma and FAISS
(``tests/actions/test_relocate_kills_every_store.py``) and all of them on local Qdrant
(``tests/actions/test_relocate_faults.py``). Exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
logging.disable(logging.WARNING)

from tests.providers.stores import missing  # noqa: E402
from tests.relocate_kills import PROVIDERS, VARIANTS, Variant, check_kill_point, clean_run, make_template  # noqa: E402


def crash_runner() -> object:
    spec = importlib.util.spec_from_file_location(
        "relocate_sweep_faults", Path(__file__).parent.parent / "tests" / "faults.py"
    )
    assert spec is not None and spec.loader is not None
    faults = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(faults)
    return faults.CrashRunner()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider", action="append", choices=PROVIDERS, help="only this provider (repeatable)")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="only this variant (repeatable)")
    parser.add_argument("--every", type=int, default=1, help="kill before every N-th file operation (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (default: removed at the end)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="relocate-kill-sweep-"))
    runner = crash_runner()
    failed = points = 0
    started = time.perf_counter()
    try:
        for provider in args.provider or PROVIDERS:
            why = missing(provider)
            if why:
                print(f"{provider}: skipped ({why})")
                continue
            template = make_template(provider, root / provider / "template")
            for name in args.variant or VARIANTS:
                began = time.perf_counter()
                variant = Variant(provider, VARIANTS[name], *template)
                folder = root / provider / name
                clean = clean_run(runner, variant, folder)
                kills = sorted({1, len(clean.calls), *range(args.every, len(clean.calls) + 1, args.every)})
                bad = 0
                for k in kills:
                    wrong = check_kill_point(runner, variant, clean, folder, k)
                    if wrong:
                        bad += 1
                        print(f"  {provider} {name} killed before call {k} ({clean.calls[k - 1]}): {'; '.join(wrong)}")
                    shutil.rmtree(folder / f"k{k}", ignore_errors=True)
                points += len(kills)
                failed += bad
                print(
                    f"{provider} {name}: {len(kills)} kill points of {len(clean.calls)} file operations, {bad} failed "
                    f"({time.perf_counter() - began:.0f} s)",
                    flush=True,
                )
    finally:
        runner.close()  # type: ignore[attr-defined]
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"total: {points} kill points, {failed} failed, {time.perf_counter() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
