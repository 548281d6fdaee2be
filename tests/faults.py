"""Crash an operation before each of its file operations: a child process SIGKILLs itself before its k-th call.

:class:`CrashRunner` starts one helper process that imports the heavy modules once (mem0, qdrant-client, the
package) and then, per request, forks a child. The child wraps the file operations a store move is made of
(:data:`FILE_OPERATIONS`: rename, replace, unlink, remove, symlink, link, rmdir, rmtree, copy2, copyfile, and
the package's atomic exchange) so that each call is counted and, at call ``kill_at``, the child does
``os.kill(os.getpid(), signal.SIGKILL)`` before the call happens. ``shutil.rmtree`` and ``shutil.copytree``
do their work through the wrapped functions, so every single file they remove or copy is a kill point too.

A run with ``kill_at=0`` is never killed and reports how many calls the operation made (and which), so a
test can then kill it before each of them::

    clean = runner.run(CODE, args)          # {"status": "ok", "calls": ["copyfile", "rename", ...]}
    for k in range(1, len(clean["calls"]) + 1):
        assert runner.run(CODE, args, kill_at=k)["status"] == "killed"

``CODE`` is Python source defining ``operation(*args)`` (``args`` must be JSON); it runs in the child. Get the
runner through the ``crash_runner`` fixture (tests/conftest.py), which loads this file and closes the helper.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FILE_OPERATIONS = (
    ("os", "rename"),
    ("os", "replace"),
    ("os", "unlink"),
    ("os", "remove"),
    ("os", "symlink"),
    ("os", "link"),
    ("os", "rmdir"),
    ("shutil", "rmtree"),
    ("shutil", "copy2"),
    ("shutil", "copyfile"),
    ("mem0_hygiene.stores.moves", "exchange_paths"),
)
"""(module, function) pairs counted as kill points in the child."""

PRELOAD = ("mem0", "qdrant_client", "mem0_hygiene", "mem0_hygiene.memory.core", "mem0_hygiene.actions.relocate")

HELPER = r"""
import importlib, json, os, signal, sys, tempfile, traceback

OPERATIONS = json.loads(sys.argv[1])
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
# find the temp folder here, once: its probe writes and unlinks a file, and a child killed at that unlink
# would leave the probe file behind in TMPDIR
tempfile.gettempdir()


def child(request):
    os.dup2(2, 1)  # the helper's stdout is the channel back to the test: keep the operation's prints off it
    os.environ.update(request.get("env") or {})
    calls = []
    kill_at = int(request.get("kill_at") or 0)

    def wrap(name, real):
        def counted(*args, **kwargs):
            calls.append(name)
            if len(calls) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return counted

    for module_name, attr in OPERATIONS:
        module = importlib.import_module(module_name)
        setattr(module, attr, wrap(attr, getattr(module, attr)))
    report = {"calls": calls}
    try:
        namespace = {}
        exec(compile(request["code"], "<operation>", "exec"), namespace)
        report["result"] = namespace["operation"](*request.get("args", []))
        report["status"] = "ok"
    except BaseException as exc:
        report["status"] = "error"
        report["error"] = "".join(traceback.format_exception(exc))
    report["calls"] = list(calls)
    with open(request["report"], "w") as fh:
        json.dump(report, fh, default=str)


for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(request)
        finally:
            os._exit(0)
    _pid, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        out = {"status": "killed", "signal": os.WTERMSIG(status)}
    else:
        try:
            with open(request["report"]) as fh:
                out = json.load(fh)
        except (OSError, ValueError) as exc:
            out = {"status": "lost", "error": repr(exc), "exit": os.WEXITSTATUS(status)}
    print(json.dumps(out), flush=True)
"""


class CrashRunner:
    """One helper process that forks a child per operation run (see the module docstring)."""

    def __init__(self, preload: tuple[str, ...] = PRELOAD) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="mem0-hygiene-faults-"))
        self.log = open(self.folder / "helper.log", "w")  # noqa: SIM115 (closed in close())
        self.process = subprocess.Popen(
            [sys.executable, "-c", HELPER, json.dumps(FILE_OPERATIONS), json.dumps(list(preload))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env={**os.environ, "MEM0_TELEMETRY": "False"},
        )
        self.runs = 0

    def run(self, code: str, *args: Any, kill_at: int = 0, env: dict[str, str] | None = None) -> dict[str, Any]:
        """Run ``operation(*args)`` from ``code`` in a fresh child, killed before file operation ``kill_at``
        (0: never). Returns ``{"status": "killed" | "ok" | "error", "calls": [...], "error": traceback}``."""
        self.runs += 1
        report = self.folder / f"report-{self.runs}.json"
        request = {"code": code, "args": list(args), "kill_at": kill_at, "env": env or {}, "report": str(report)}
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the crash helper died; its log: {(self.folder / 'helper.log').read_text()[-3000:]}")
        return json.loads(line)

    def close(self) -> None:
        """End the helper and remove its folder, also when the helper died (its pipe is broken then)."""
        import contextlib
        import shutil

        try:
            with contextlib.suppress(OSError):
                if self.process.stdin is not None:
                    self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        finally:
            self.log.close()
            shutil.rmtree(self.folder, ignore_errors=True)
