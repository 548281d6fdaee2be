"""mem0's own unit tests for ``Memory`` and ``AsyncMemory``, run against plain mem0 and against the drop-in.

    python benchmarks/mem0_suite.py PATH_TO_MEM0_CHECKOUT [--python PYTHON] [--files FILE ...] [-k EXPR]

PATH_TO_MEM0_CHECKOUT is a checkout of the mem0 repository (github.com/mem0ai/mem0) at the commit whose
``mem0/memory/main.py`` matches the installed release (the script compares the two files and says how far apart
they are). Nothing of it is copied here, and CI does not use it: this is a fidelity check to run by hand.

The same test files run twice, each in a fresh pytest process with a sandbox HOME and MEM0_DIR, against the mem0
that is installed (never the checkout's copy of the package): once as they are, once with this file loaded as a
pytest plugin (``-p mem0_suite``) that replaces ``mem0.Memory``/``mem0.memory.main.Memory`` and
``mem0.AsyncMemory``/``mem0.memory.main.AsyncMemory`` by ``mem0_hygiene.Memory``/``AsyncMemory`` before the tests
import them, and gives each test its own ledger file (a new deployment per test, as the tests assume). It prints
both counts and every test that passes on plain mem0 but not on the drop-in. Those in :data:`EXCEPTIONS` are
expected, each with its reason; any other is a difference to fix (exit status 1 while there is one).

The test files: those under ``tests/`` that import the ``Memory`` or ``AsyncMemory`` class from ``mem0`` or
``mem0.memory.main``, except the vector-store, provider and LiteLLM-proxy modules (they test a store, a provider or
the proxy, with ``Memory`` only as a carrier). The interpreter needs mem0-hygiene, pytest-mock and pytest-asyncio
(``pip install pytest-asyncio``: mem0's async tests need it, mem0-hygiene's own tests do not).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PLUGIN = Path(__file__).stem
REPORT_ENV = "MEM0_SUITE_REPORT"
TARGET_ENV = "MEM0_SUITE_TARGET"
IMPORTS_MEMORY = re.compile(
    r"^\s*from\s+mem0(?:\.memory\.main)?\s+import\s+[^\n]*\b(?:Async)?Memory\b(?!Client|Config|Item|Type)", re.M
)
SKIP = ("tests/vector_stores/", "tests/llms/", "tests/embeddings/", "tests/rerankers/", "tests/test_proxy.py")

# Tests that pass on plain mem0 and are expected not to on the drop-in, each with the reason. The issue allows two
# kinds: tests that build Memory without running __init__ (the drop-in's state is set up there), and tests that
# assert the exact arguments mem0 passes to its own collaborators (the drop-in adds to those on purpose).
NO_INIT = (
    "builds the class with __new__ and never runs __init__, which is where the drop-in opens its ledger and "
    "sets up its buffers (AsyncMemory: its wrapped Memory and gate)"
)
NO_INIT_TESTS = {
    "tests/memory/test_decay_usage_notice.py": [
        *(
            f"test_{kind}_delete_{case}"
            for kind in ("sync", "async")
            for case in (
                "all_decay_usage_runs_after_success",
                "all_stops_when_vector_store_repeats_batch",
                "decay_usage_runs_after_success",
                "failure_does_not_trigger_decay_usage_notice",
            )
        ),
        "test_sync_delete_all_zero_deletes_uses_first_run_notice",
        "test_sync_delete_below_threshold_uses_first_run_notice",
    ],
    "tests/memory/test_notices.py": [
        "test_notice_priority_scale_beats_first_run",
        "test_notice_priority_temporal_usage_beats_scale_and_first_run",
        "test_public_add_succeeds_when_first_run_flag_eval_fails",
        "test_public_search_succeeds_when_first_run_flag_eval_fails",
    ],
    "tests/memory/test_performance_slow_query_notice.py": [
        *(
            f"test_{kind}_{case}"
            for kind in ("sync", "async")
            for case in (
                "failed_search_does_not_trigger_performance_notice",
                "fast_search_uses_first_run_notice",
                "slow_search_triggers_performance_notice_after_success",
                "temporal_usage_takes_precedence_over_slow_search",
            )
        ),
        "test_sync_scale_takes_precedence_over_slow_search",
    ],
    "tests/memory/test_temporal_feature_notice.py": [
        *(
            f"test_{kind}_{case}"
            for kind in ("sync", "async")
            for case in ("add_timestamp_raises_before_validation", "search_reference_date_raises_before_validation")
        ),
        "test_sync_add_without_timestamp_does_not_call_temporal_feature_notice",
        "test_sync_search_without_reference_date_does_not_call_temporal_feature_notice",
    ],
    "tests/memory/test_temporal_usage_notice.py": [
        *(
            f"test_sync_{case}"
            for case in (
                "add_failure_does_not_trigger_temporal_usage_notice",
                "add_non_temporal_metadata_uses_first_run_notice",
                "add_temporal_metadata_triggers_notice_after_success",
                "search_failure_does_not_trigger_temporal_usage_notice",
                "search_temporal_filter_triggers_notice_after_success",
                "search_temporal_query_triggers_notice_after_success",
            )
        ),
        "test_async_add_runs_scale_detection_in_thread",
        "test_async_add_temporal_metadata_triggers_notice_after_success",
        "test_async_search_temporal_query_triggers_notice_after_success",
    ],
    "tests/test_telemetry.py": [
        "TestMemoryLifecycle::test_close_when_db_is_none",
        "TestMemoryLifecycle::test_close_when_db_not_set",
        "TestMemoryLifecycle::test_double_close_is_safe",
    ],
}
PRIVATE_COROUTINE = (
    "patches mem0's private AsyncMemory coroutine {name} on the instance and asserts the arguments "
    "the public method passes to it; the drop-in AsyncMemory runs the sync drop-in's method instead "
    "(whose own counterpart test passes)"
)
EXCEPTIONS: dict[str, str] = {
    **{f"{path}::{test}": NO_INIT for path, tests in NO_INIT_TESTS.items() for test in tests},
    **{
        f"tests/memory/test_main.py::TestAsyncUpdate::test_async_update_{case}": PRIVATE_COROUTINE.format(
            name="_update_memory"
        )
        for case in ("without_metadata", "with_metadata", "with_empty_metadata", "data_is_deprecated_alias_for_text")
    },
    "tests/memory/test_main.py::test_async_add_metadata_cannot_set_identity_fields": PRIVATE_COROUTINE.format(
        name="_add_to_vector_store"
    ),
    **{
        test: (
            "asserts the exact metadata add() passes to mem0's own _add_to_vector_store; the drop-in adds its "
            "birth facts there on purpose, under the payload key 'id' that mem0 never shows as metadata (so a "
            "memory's facts survive a crash before its ledger row is written)"
        )
        for test in (
            "tests/memory/test_main.py::test_add_without_metadata_is_unaffected",
            "tests/test_main.py::test_add",
            "tests/test_main.py::test_add_stores_expiration_date",
        )
    },
    "tests/test_memory.py::TestAsyncDeleteAllEntityRace::test_async_delete_all_bulk_clears_entity_store": (
        "asserts the one entity_store.delete call of mem0's async bulk clear; the drop-in AsyncMemory deletes through "
        "the sync path, which unlinks each memory from its entities and deletes an entity once nothing links to it "
        "(the same end state on a real store; the test's entity-store mock never changes, so it is never empty)"
    ),
}


# -- the plugin side (loaded by pytest with -p in the drop-in run, and as a recorder in both) --------------------
def pytest_configure(config: Any) -> None:
    if os.environ.get(TARGET_ENV) == "dropin":
        _swap_in_the_dropin()


def _swap_in_the_dropin() -> None:
    import mem0
    import mem0.memory.main as mem0_main

    import mem0_hygiene

    for module in (mem0, mem0_main):
        module.Memory = mem0_hygiene.Memory  # type: ignore[misc]
        module.AsyncMemory = mem0_hygiene.AsyncMemory  # type: ignore[misc]


def _fresh_ledger_per_test() -> Any:
    import pytest

    @pytest.fixture(autouse=True)
    def mem0_suite_fresh_ledger(tmp_path_factory: Any, monkeypatch: Any) -> None:
        # Every test builds its Memory as if it were a new app; without this they would all share one ledger
        # file (in the sandbox MEM0_DIR) and a tombstone written by one test would hide an id another test reuses.
        if os.environ.get(TARGET_ENV) != "dropin":
            return
        import mem0_hygiene.memory.core as core

        path = str(tmp_path_factory.mktemp("ledger") / "hygiene.db")
        monkeypatch.setattr(core, "default_ledger_path", lambda _history_db_path: path)

    return mem0_suite_fresh_ledger


if REPORT_ENV in os.environ:  # only inside the pytest runs this script starts
    mem0_suite_fresh_ledger = _fresh_ledger_per_test()
    _OUTCOMES: dict[str, str] = {}

    def pytest_runtest_logreport(report: Any) -> None:
        nodeid = report.nodeid
        if report.when == "call":
            if hasattr(report, "wasxfail"):
                outcome = "xpassed" if report.passed else "xfailed"
            else:
                outcome = report.outcome
            if _OUTCOMES.get(nodeid) != "error":
                _OUTCOMES[nodeid] = outcome
        elif report.failed:
            _OUTCOMES[nodeid] = "error"
        elif report.skipped and report.when == "setup":
            _OUTCOMES[nodeid] = "skipped"

    def pytest_collectreport(report: Any) -> None:
        if report.failed:
            _OUTCOMES[report.nodeid] = "error"

    def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
        Path(os.environ[REPORT_ENV]).write_text(json.dumps(_OUTCOMES, indent=0, sort_keys=True))


# -- the script side --------------------------------------------------------------------------------------------
def select_files(checkout: Path) -> list[str]:
    """The checkout's test files that import the Memory or AsyncMemory class (see the module docstring)."""
    out = []
    for path in sorted((checkout / "tests").rglob("test_*.py")):
        rel = path.relative_to(checkout).as_posix()
        if rel.startswith(SKIP):
            continue
        if IMPORTS_MEMORY.search(path.read_text(encoding="utf-8", errors="replace")):
            out.append(rel)
    return out


def compare_main(checkout: Path, python: str) -> str:
    """One line: the installed mem0 release and how its memory/main.py compares with the checkout's."""
    probe = "import importlib.metadata as m, mem0.memory.main as x; print(m.version('mem0ai')); print(x.__file__)"
    done = subprocess.run(
        [python, "-P", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MEM0_TELEMETRY": "False"},
        cwd=tempfile.gettempdir(),
    )
    version, installed = done.stdout.split()
    theirs = (checkout / "mem0" / "memory" / "main.py").read_bytes()
    ours = Path(installed).read_bytes()
    if hashlib.sha256(theirs).digest() == hashlib.sha256(ours).digest():
        return f"mem0ai {version} installed; the checkout's mem0/memory/main.py is identical to it"
    diff = [
        line
        for line in difflib.unified_diff(theirs.decode().splitlines(), ours.decode().splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return (
        f"mem0ai {version} installed; WARNING: the checkout's mem0/memory/main.py differs from it in "
        f"{len(diff)} line(s): pick the commit whose main.py matches (git log -- mem0/memory/main.py)"
    )


def run(checkout: Path, python: str, files: list[str], target: str, keyword: str | None) -> dict[str, str]:
    """Run the files in a fresh pytest process against ``target`` ("plain" or "dropin"); nodeid -> outcome."""
    with tempfile.TemporaryDirectory(prefix=f"mem0-suite-{target}-") as sandbox:
        report = Path(sandbox) / "outcomes.json"
        env = {
            **os.environ,
            "HOME": sandbox,
            "MEM0_DIR": str(Path(sandbox) / ".mem0"),
            "MEM0_TELEMETRY": "False",
            "PYTHONPATH": os.pathsep.join([str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]),
            REPORT_ENV: str(report),
            TARGET_ENV: target,
        }
        # -P and an empty pythonpath: the tests import the installed mem0, not the checkout's copy of the package
        cmd = [
            python,
            "-P",
            "-m",
            "pytest",
            "-q",
            "-p",
            PLUGIN,
            "-p",
            "no:cacheprovider",
            "-o",
            "pythonpath=",
            "--import-mode=importlib",
            "--continue-on-collection-errors",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            *files,
        ]
        if keyword:
            cmd += ["-k", keyword]
        done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
        if not report.exists():
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"the {target} run produced no report (pytest exit {done.returncode}); see above")
        outcomes: dict[str, str] = json.loads(report.read_text())
        return outcomes


def counts(outcomes: dict[str, str]) -> str:
    c = Counter(outcomes.values())
    extra = "".join(f", {c[k]} {k}" for k in ("xfailed", "xpassed") if c[k])
    return f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped, {c['error']} errors{extra}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a checkout of the mem0 repository")
    parser.add_argument("--python", default=sys.executable, help="interpreter with mem0-hygiene and pytest-asyncio")
    parser.add_argument("--files", nargs="*", help="test files relative to the checkout (default: see above)")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression, for a narrower run")
    args = parser.parse_args(argv)
    checkout: Path = args.checkout.resolve()
    if not (checkout / "mem0" / "memory" / "main.py").is_file() or not (checkout / "tests").is_dir():
        parser.error(f"{checkout} is not a mem0 checkout (no mem0/memory/main.py and tests/); clone mem0 there")
    probe = subprocess.run(
        [args.python, "-P", "-c", "import pytest_asyncio, pytest_mock, mem0_hygiene"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    if probe.returncode:
        parser.error(
            f"{args.python} lacks a test dependency ({probe.stderr.strip().splitlines()[-1]}); "
            f"install it: pip install pytest-asyncio pytest-mock"
        )
    files = args.files or select_files(checkout)
    print(compare_main(checkout, args.python))
    print(f"{len(files)} test files: {' '.join(files)}")
    plain = run(checkout, args.python, files, "plain", args.keyword)
    dropin = run(checkout, args.python, files, "dropin", args.keyword)
    print(f"plain mem0: {counts(plain)}")
    print(f"drop-in:    {counts(dropin)}")
    lost = sorted(t for t, o in plain.items() if o == "passed" and dropin.get(t) != "passed")
    allowed = [t for t in lost if t in EXCEPTIONS]
    unexpected = [t for t in lost if t not in EXCEPTIONS]
    gained = sorted(t for t, o in dropin.items() if o == "passed" and plain.get(t) != "passed")
    print(
        f"pass on plain mem0, not on the drop-in: {len(lost)} ({len(allowed)} listed exceptions, "
        f"{len(unexpected)} differences)"
    )
    for t in allowed:
        print(f"  exception  {t} [{dropin.get(t, 'not run')}]: {EXCEPTIONS[t]}")
    for t in unexpected:
        print(f"  DIFFERENCE {t} [{dropin.get(t, 'not run')}]")
    stale = sorted(t for t in EXCEPTIONS if t in plain and t not in lost)
    for t in stale:
        print(f"  listed exception now passes (or fails on plain mem0 too): {t}")
    if gained:
        print(f"pass on the drop-in, not on plain mem0: {len(gained)}: {' '.join(gained)}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
