"""SQLite fault injection: run a drop-in operation in a child process and kill it with SIGKILL before its
k-th SQLite statement, for every k of that operation, then check what the crash left behind.

How the kill works: the child wraps ``sqlite3.connect`` before anything opens a database, so every
connection to a file (the ledger, mem0's history.db, local Qdrant's own ``storage.sqlite``) gets a trace
callback. Once the operation starts, the callback counts statements and sends the process SIGKILL at
statement k, before SQLite runs it: an uncommitted transaction stays behind as a hot journal or an
uncommitted WAL tail, exactly as a power cut or ``kill -9`` between two statements would leave it. An
uninterrupted run first counts the operation's statements (and keeps their text, to say where each
kill fell).

Children are forked from a warm process that has already imported mem0 (:class:`Zygote`), so a kill
point costs a fork instead of a 3-second interpreter start.

After each kill :func:`kill_before_each` checks, in this order, on the state the crash left:

- ``reports``: digest and memory_story (read-only, from outside the app) read it without an error and
  write nothing;
- ``digest``: every memory the digest lists that the drop-in recorded itself (its ledger row, or the birth
  facts in its payload when the row was still buffered) has the drop-in's source kind, never "untracked";
- ``audit``: the audit shows no error that the uninterrupted states before and after do not show;
- ``integrity``: ``PRAGMA integrity_check`` is ok on every SQLite file (history.db, the ledger, every
  ``storage.sqlite`` of local Qdrant);
- ``plain_mem0``: plain mem0 opens the store and serves only memories it serves before or after the
  operation (never two copies of one), and every memory it serves both before and after;
- ``dropin``: the drop-in opens it and serves exactly what it serves before or after the operation,
  never a mix that hides a live fact or serves a superseded or deleted one;
- ``rerun``: the operation run again completes, and the end state (what the drop-in and plain mem0
  serve, every memory's state, the ledger's rows per state) is the uninterrupted run's;
- ``audit_after``: the audit after the rerun shows no error the uninterrupted run does not.

The operations themselves are described by :class:`Operation` (see ``crash_operations.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")

START = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)
"""When every deployment is planted (the clock is fixed; operations run at ``START + Operation.after``)."""

SCOPE = {"user_id": "dana"}

ZYGOTE = r"""
import json, os, signal, sqlite3, sys, traceback
os.environ["MEM0_TELEMETRY"] = "False"

_real_connect = sqlite3.connect
_log = []
_state = {"armed": False, "kill_at": 0}


def _trace(db, sql):
    if not _state["armed"]:
        return
    _log.append([db, sql])
    if len(_log) == _state["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)  # before SQLite runs statement k


def _connect(*args, **kwargs):
    conn = _real_connect(*args, **kwargs)
    target = str(args[0] if args else kwargs.get("database", ""))
    if target != ":memory:" and "mode=memory" not in target:
        name = os.path.basename(target.split("?", 1)[0])
        conn.set_trace_callback(lambda sql, name=name: _trace(name, sql))
    return conn


sqlite3.connect = _connect

from datetime import datetime  # noqa: E402

from mem0_hygiene import Memory, offline_config  # noqa: E402


def _run(job):
    now = datetime.fromisoformat(job["now"])
    m = Memory.from_config(offline_config(job["folder"], hygiene={"clock": lambda: now, **job["hygiene"]}))
    namespace = {"m": m, "ids": job["ids"], "now": now}
    _state["kill_at"] = job["kill_at"]
    _state["armed"] = True
    try:
        exec(job["source"], namespace)
        m.close()
    finally:
        _state["armed"] = False


print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        status, error = 0, ""
        try:
            _run(job)
        except BaseException:
            status, error = 3, traceback.format_exc()
        with open(job["log"], "w") as fh:
            json.dump({"statements": _log, "error": error}, fh)
        os._exit(status)
    _pid, status = os.waitpid(pid, 0)
    signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    print(json.dumps({"signal": signum, "code": code}), flush=True)
"""


@dataclass(frozen=True)
class Operation:
    """One operation to crash.

    Fields:
        name: what it is called in reports ("supersede", "prune", ...).
        plant: builds the starting deployment through an open drop-in ``Memory`` (clock at :data:`START`)
            and returns the ids the operation needs, by name.
        source: Python run in the child with ``m`` (the drop-in over the deployment), ``ids`` (what
            ``plant`` returned) and ``now``; ``m.close()`` follows inside the counted run.
        after: how long after planting the operation runs.
        rerun: the source of the retry (default: ``source`` again).
        hygiene: extra hygiene settings for every Memory opened over the deployment.
    """

    name: str
    plant: Callable[[Any], dict[str, str]]
    source: str
    after: timedelta = timedelta(hours=1)
    rerun: str | None = None
    hygiene: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    """What a deployment serves and holds, without ids (an add makes new ones on every run).

    Fields:
        dropin: texts the drop-in serves in the scope (get_all), sorted.
        states: (text, state) of every memory the drop-in knows in the scope (include_stale), sorted.
        plain: texts plain mem0 serves in the scope, sorted (duplicates kept).
        ledger: ledger rows per state.
        kinds: memory id -> source kind of every memory the drop-in recorded itself (not adopted); not
            compared (ids differ between runs).
    """

    dropin: tuple[str, ...]
    states: tuple[tuple[str, str], ...]
    plain: tuple[str, ...]
    ledger: tuple[tuple[str, int], ...]
    kinds: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class KillPoint:
    """One kill and the checks that held or failed after it.

    Fields:
        k: the statement (1-based) the child was killed before.
        statement: where that was: the database file and the statement's first words.
        failures: check name -> what was wrong (empty: every check held).
        checks: the names of the checks that ran.
    """

    k: int
    statement: str
    failures: dict[str, str]
    checks: tuple[str, ...]

    @property
    def held(self) -> int:
        return len(self.checks) - len(self.failures)


@dataclass(frozen=True)
class Sweep:
    """A whole sweep of one operation: its statements and every kill point's checks."""

    operation: str
    statements: tuple[str, ...]
    points: tuple[KillPoint, ...]

    @property
    def failures(self) -> list[KillPoint]:
        return [p for p in self.points if p.failures]

    @property
    def checks_held(self) -> int:
        return sum(p.held for p in self.points)

    @property
    def checks_run(self) -> int:
        return sum(len(p.checks) for p in self.points)

    def report(self) -> str:
        """A line per failed kill point (what ran last, what failed), for an assertion message."""
        lines = [
            f"{self.operation}: {len(self.points)} kill points of {len(self.statements)} statements, "
            f"{self.checks_held}/{self.checks_run} checks held"
        ]
        for p in self.failures:
            for name, why in p.failures.items():
                lines.append(f"  k={p.k} (before {p.statement}): {name}: {why}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the zygote


class Zygote:
    """A warm Python process that forks one child per job (a job = run an operation, maybe kill it)."""

    def __init__(self) -> None:
        env = {**os.environ, "MEM0_TELEMETRY": "False"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if line != "ready":
            self.close()
            raise RuntimeError(f"the fault-injection zygote did not start (said {line!r})")

    def run(
        self, folder: Path, source: str, ids: dict[str, str], now: datetime, hygiene: dict[str, Any], kill_at: int = 0
    ) -> tuple[int, list[list[str]], str]:
        """Run ``source`` over the deployment in ``folder`` in a forked child, killed before statement
        ``kill_at`` (0: never). Returns (the signal that ended it or 0, the statements it ran, its error)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        fd, log = tempfile.mkstemp(prefix="fault-log-", suffix=".json")
        os.close(fd)
        os.unlink(log)
        job = {
            "folder": str(folder),
            "source": source,
            "ids": ids,
            "now": now.isoformat(),
            "hygiene": hygiene,
            "kill_at": kill_at,
            "log": log,
        }
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        statements: list[list[str]] = []
        error = ""
        if os.path.exists(log):
            with open(log) as fh:
                done = json.load(fh)
            os.unlink(log)
            statements, error = done["statements"], done["error"]
        if answer["code"] not in (0, None) and not error:
            error = f"exit status {answer['code']}"
        return int(answer["signal"]), statements, error

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def zygote() -> Iterator[Zygote]:
    z = Zygote()
    try:
        yield z
    finally:
        z.close()


# ---------------------------------------------------------------------------------------------- the checks


def config_for(folder: Path, now: datetime, hygiene: dict[str, Any]) -> dict[str, Any]:
    from mem0_hygiene import offline_config

    return offline_config(folder, hygiene={"clock": lambda: now, **hygiene})


def sqlite_files(folder: Path) -> list[Path]:
    """Every SQLite database of the deployment: history.db, the ledger, local Qdrant's storage files."""
    files = [folder / "history.db", folder / "hygiene.db"]
    files += sorted((folder / "qdrant").rglob("*.sqlite"))
    return [f for f in files if f.is_file()]


def file_digest(folder: Path) -> dict[str, str]:
    """Every file under the folder -> a hash of its bytes; lock files, SQLite's ``-shm`` and an empty ``-wal``
    aside (a reader of a WAL database makes those)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if (
            path.is_file()
            and path.name != ".lock"
            and not path.name.endswith("-shm")
            and not (path.name.endswith("-wal") and path.stat().st_size == 0)
        ):
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def observe(
    folder: Path,
    now: datetime,
    hygiene: dict[str, Any],
    scope: dict[str, str] | None = None,
) -> Observation:
    """Open plain mem0, then the drop-in, over the deployment and say what each serves."""
    from mem0 import Memory as Mem0Memory

    from mem0_hygiene import Memory
    from mem0_hygiene.config import build_mem0_config, split_config

    scope = scope or SCOPE
    config = config_for(folder, now, hygiene)
    plain = Mem0Memory(build_mem0_config(split_config(config)[0]))
    try:
        served_plain = tuple(sorted(r["memory"] for r in plain.get_all(filters=scope, top_k=1000)["results"]))
    finally:
        plain.close()
        plain.vector_store.client.close()
    m = Memory.from_config(config)
    try:
        live = tuple(sorted(r["memory"] for r in m.get_all(filters=scope, top_k=1000)["results"]))
        states = tuple(
            sorted(
                (r["memory"], r["hygiene"]["state"])
                for r in m.get_all(filters=scope, top_k=1000, include_stale=True)["results"]
            )
        )
        m.flush()
        rows = list(m.ledger.iter_rows())
        ledger = tuple(sorted(Counter(row.state(now) for row in rows).items()))
        kinds = {row.memory_id: row.source_kind for row in rows if not row.adopted}
    finally:
        m.close()
    return Observation(live, states, served_plain, ledger, kinds)


def audit_errors(folder: Path, now: datetime, hygiene: dict[str, Any]) -> set[str]:
    """The codes of the audit's error findings (each with its first example)."""
    from mem0_hygiene import audit
    from mem0_hygiene.report import Severity

    report = audit(config_for(folder, now, hygiene))
    return {f"{f.code}: {f.title}" for f in report.findings if f.severity >= Severity.ERROR}


def read_reports(
    folder: Path, now: datetime, hygiene: dict[str, Any], ids: Iterable[str], seen: dict[str, tuple[str, str]]
) -> str:
    """Run digest and memory_story from outside the app; '' when they worked and wrote nothing. The digest's
    (state, source kind) per memory go into ``seen``."""
    from mem0_hygiene import maintenance
    from mem0_hygiene.errors import MemoryNotFound

    config = config_for(folder, now, hygiene)
    before = file_digest(folder)
    try:
        for item in maintenance.digest(config, since="400d").items:
            seen[item.memory_id] = (item.state, item.source_kind)
        for mid in ids:
            with contextlib.suppress(MemoryNotFound):  # pruned and compacted: nothing knows it any more
                maintenance.memory_story(config, mid)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    after = file_digest(folder)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return f"wrote to {', '.join(changed)}" if changed else ""


def digest_mismatches(seen: dict[str, tuple[str, str]], kinds: dict[str, str]) -> str:
    wrong = [
        f"{mid} is {state} ({kind}) in the digest, {kinds[mid]} to the drop-in"
        for mid, (state, kind) in seen.items()
        if mid in kinds and (state == "untracked" or kind != kinds[mid])
    ]
    return "; ".join(wrong)


def integrity_failures(folder: Path) -> str:
    from mem0_hygiene.stores.sqlite import integrity_check

    bad = []
    for path in sqlite_files(folder):
        result = integrity_check(str(path))
        if result != "ok":
            bad.append(f"{path.relative_to(folder)}: {result}")
    return "; ".join(bad)


def served_mix(seen: tuple[str, ...], before: tuple[str, ...], after: tuple[str, ...]) -> str:
    """Plain mem0 may serve a state between before and after (it knows no supersede or tombstone), but
    nothing neither serves, never more copies of a text than either, and everything both serve."""
    got, b, a = Counter(seen), Counter(before), Counter(after)
    extra = [t for t, n in got.items() if n > max(b[t], a[t])]
    missing = [t for t, n in (b & a).items() if got[t] < n]
    parts = []
    if extra:
        parts.append(f"serves {extra!r} beyond before/after")
    if missing:
        parts.append(f"lost {missing!r}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------- the sweep


def plant(op: Operation, folder: Path) -> dict[str, str]:
    """Build the operation's starting deployment in ``folder``; returns its ids by name."""
    from mem0_hygiene import Memory

    m = Memory.from_config(config_for(folder, START, {"flush_after": 3600, **op.hygiene}))
    try:
        return op.plant(m)
    finally:
        m.close()


def sample_points(total: int, every: int = 1) -> list[int]:
    """Kill points 1..total: all of them, or every ``every``-th plus the first and the last."""
    points = set(range(1, total + 1, every)) | {1, total}
    return sorted(p for p in points if 1 <= p <= total)


def describe(statement: list[str]) -> str:
    db, sql = statement
    return f"{db}: {' '.join(sql.split())[:70]}"


def kill_before_each(
    op: Operation,
    workdir: Path,
    *,
    every: int = 1,
    points: Iterable[int] | None = None,
    zyg: Zygote | None = None,
    progress: Callable[[KillPoint], None] | None = None,
) -> Sweep:
    """Plant ``op``'s deployment, run it once uninterrupted (counting its SQLite statements), then once per
    kill point from a fresh copy of the planted deployment, killed before that statement, and check each
    crash (see the module docstring). ``every=3`` samples every third statement (plus the first and last);
    ``points`` names them instead."""
    hygiene = {"flush_after": 3600, **op.hygiene}
    now = START + op.after
    if workdir.exists():
        shutil.rmtree(workdir)
    base = workdir / "planted"
    ids = plant(op, base)
    with contextlib.ExitStack() as stack:
        if zyg is None:
            zyg = stack.enter_context(zygote())
        scratch = workdir / "before"
        shutil.copytree(base, scratch)
        before = observe(scratch, now, hygiene)
        before_errors = audit_errors(scratch, now, hygiene)
        shutil.rmtree(scratch)

        ref = workdir / "reference"
        shutil.copytree(base, ref)
        signum, statements, error = zyg.run(ref, op.source, ids, now, hygiene)
        if signum or error:
            raise AssertionError(f"{op.name}: the uninterrupted run failed: {error or f'signal {signum}'}")
        after_errors = audit_errors(ref, now, hygiene)
        after = observe(ref, now, hygiene)
        allowed_errors = before_errors | after_errors

        chosen = list(points) if points is not None else sample_points(len(statements), every)
        results = []
        for k in chosen:
            work = workdir / f"k{k}"
            shutil.copytree(base, work)
            try:
                point = _one_kill(
                    op, zyg, work, k, statements, ids, now, hygiene, before, after, allowed_errors, after_errors
                )
            finally:
                shutil.rmtree(work, ignore_errors=True)
            results.append(point)
            if progress is not None:
                progress(point)
    return Sweep(op.name, tuple(describe(s) for s in statements), tuple(results))


def _one_kill(
    op: Operation,
    zyg: Zygote,
    work: Path,
    k: int,
    statements: list[list[str]],
    ids: dict[str, str],
    now: datetime,
    hygiene: dict[str, Any],
    before: Observation,
    after: Observation,
    allowed_errors: set[str],
    after_errors: set[str],
) -> KillPoint:
    import signal

    where = describe(statements[k - 1]) if k <= len(statements) else f"statement {k}"
    failures: dict[str, str] = {}
    checks: list[str] = []

    def check(name: str, run: Callable[[], str]) -> None:
        checks.append(name)
        try:
            problem = run()
        except Exception as exc:
            problem = f"raised {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
        if problem:
            failures[name] = problem

    signum, ran, error = zyg.run(work, op.source, ids, now, hygiene, kill_at=k)
    if signum != signal.SIGKILL:
        failures["killed"] = (
            f"the child was not killed before statement {k} (ran {len(ran)}; "
            f"{error or 'finished'}): the statement count is not deterministic"
        )
        return KillPoint(k, where, failures, ("killed",))

    listed: dict[str, tuple[str, str]] = {}
    check("reports", lambda: read_reports(work, now, hygiene, ids.values(), listed))
    check("audit", lambda: _new_errors(audit_errors(work, now, hygiene), allowed_errors))
    check("integrity", lambda: integrity_failures(work))
    seen: dict[str, Observation] = {}

    def dropin() -> str:
        seen["crash"] = observe(work, now, hygiene)
        got = seen["crash"]
        problem = served_mix(got.plain, before.plain, after.plain)
        if problem:
            failures["plain_mem0"] = problem
        wrong = digest_mismatches(listed, got.kinds)
        if wrong:
            failures["digest"] = wrong
        if got.dropin not in (before.dropin, after.dropin):
            return f"serves {list(got.dropin)}; before {list(before.dropin)}, after {list(after.dropin)}"
        return ""

    checks += ["plain_mem0", "digest"]
    check("dropin", dropin)

    def rerun() -> str:
        signum, _ran, error = zyg.run(work, op.rerun or op.source, ids, now, hygiene)
        if signum or error:
            return f"the rerun failed: {error.strip().splitlines()[-1] if error else f'signal {signum}'}"
        end = observe(work, now, hygiene)
        diffs = [
            f"{name}: {getattr(end, name)} instead of {getattr(after, name)}"
            for name in ("dropin", "states", "plain", "ledger")
            if getattr(end, name) != getattr(after, name)
        ]
        return "; ".join(diffs)

    check("rerun", rerun)
    check("audit_after", lambda: _new_errors(audit_errors(work, now, hygiene), after_errors))
    return KillPoint(k, where, failures, tuple(checks))


def _new_errors(errors: set[str], allowed: set[str]) -> str:
    allowed_codes = {e.split(":", 1)[0] for e in allowed}
    new = sorted(e for e in errors if e.split(":", 1)[0] not in allowed_codes)
    return "; ".join(new)


# ---------------------------------------------------------------------------------------------- one crash


@dataclass(frozen=True)
class Crash:
    """A deployment an operation was killed in: where it is, the planted ids, when it ran, where it died."""

    folder: Path
    ids: dict[str, str]
    now: datetime
    hygiene: dict[str, Any]
    k: int
    statement: str

    def config(self) -> dict[str, Any]:
        return config_for(self.folder, self.now, self.hygiene)


def statement_number(statements: list[list[str]], db: str, sql: str, occurrence: int = 1) -> int:
    """The 1-based number of the ``occurrence``-th statement on database file ``db`` that starts with ``sql``."""
    seen = 0
    for k, (name, text) in enumerate(statements, start=1):
        if name == db and " ".join(text.split()).upper().startswith(sql.upper()):
            seen += 1
            if seen == occurrence:
                return k
    raise AssertionError(
        f"no statement {occurrence} on {db} starts with {sql!r}: " + "; ".join(describe(s) for s in statements)
    )


def crash_at(op: Operation, workdir: Path, zyg: Zygote, db: str, sql: str, occurrence: int = 1) -> Crash:
    """Plant ``op``'s deployment in ``workdir``, count its statements on a copy, then run it again on the
    planted deployment and kill it before the ``occurrence``-th statement on ``db`` starting with ``sql``."""
    hygiene = {"flush_after": 3600, **op.hygiene}
    now = START + op.after
    base = workdir / "store"
    ids = plant(op, base)
    ref = workdir / "count"
    shutil.copytree(base, ref)
    signum, statements, error = zyg.run(ref, op.source, ids, now, hygiene)
    assert not signum and not error, error
    shutil.rmtree(ref)
    k = statement_number(statements, db, sql, occurrence)
    signum, _ran, error = zyg.run(base, op.source, ids, now, hygiene, kill_at=k)
    import signal

    assert signum == signal.SIGKILL, f"not killed before statement {k}: {error or 'it finished'}"
    return Crash(base, ids, now, hygiene, k, describe(statements[k - 1]))
