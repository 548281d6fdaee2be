"""One store, one truth: on a plain mem0 app's default stores (/tmp/qdrant on a real tmpfs, or on ext4, and
~/.mem0/history.db in a sandbox HOME), every read and dry run of the CLI writes nothing at all, every command works
on the store the app writes (also what it wrote between commands), and the CLI never moves the store by itself.

The scenario runs in a private mount namespace (``unshare --mount``, as root) so /tmp can be a fresh tmpfs or an
ext4 folder without touching the machine's own /tmp; see ``one_store_child.py``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

CHILD = Path(__file__).with_name("one_store_child.py")


def namespaces_work() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare(1) to give the scenario its own /tmp"
    for what, path in (("the Python running the tests", sys.prefix), ("the checkout", str(CHILD))):
        if Path(os.path.realpath(path)).is_relative_to("/tmp"):
            return (
                f"the scenario gives /tmp a fresh filesystem, which would hide {what} ({path}); run the "
                "tests from a checkout and a virtual environment outside /tmp"
            )
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True)
    return None if probe.returncode == 0 else f"unshare --mount failed: {probe.stderr.decode().strip()}"


SKIP = namespaces_work()


@pytest.fixture(scope="module", params=["tmpfs", "ext4"])
def scenario(request: pytest.FixtureRequest) -> Any:
    if SKIP:
        pytest.skip(SKIP)
    sandbox = Path(tempfile.mkdtemp(prefix="m0h-one-store-", dir="/var/tmp"))
    home, disk_tmp = sandbox / "home", sandbox / "tmp"
    home.mkdir()
    disk_tmp.mkdir()
    mount = "mount -t tmpfs tmpfs /tmp" if request.param == "tmpfs" else f"mount --bind {disk_tmp} /tmp"
    env = {k: v for k, v in os.environ.items() if k != "MEM0_DIR"}
    env.update(HOME=str(home), MEM0_TELEMETRY="False")
    try:
        done = subprocess.run(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                f'{mount} && exec "$0" "$1"',
                sys.executable,
                str(CHILD),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        yield request.param, home, json.loads(done.stdout)
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)


def test_reads_and_dry_runs_write_nothing_under_home_or_tmp(scenario: Any):
    _kind, _home, data = scenario
    for step in data["steps"]:
        assert step["code"] in (0, 1), (step["args"], step["stderr"][-800:])  # audit exits 1 for findings
        assert step["changed"] == [], (step["args"], step["changed"])


def test_the_cli_says_the_store_is_at_risk_and_names_relocate_instead_of_moving_it(scenario: Any):
    _kind, home, data = scenario
    opened = [s for s in data["steps"] if s["args"][0] in ("prune", "review", "forget", "confirm", "invalidate")]
    assert opened and all("mem0-hygiene relocate" in s["stderr"] for s in opened)
    assert data["prune"]["code"] == 0, data["prune"]["stderr"][-800:]
    assert "mem0-hygiene relocate" in data["prune"]["stderr"]
    moved = [p for p in data["after_prune"] if p.startswith(str(home / ".mem0" / "qdrant"))]
    assert moved == []  # no second copy beside history.db
    assert "/tmp/qdrant/meta.json" in data["after_prune"]


def test_every_command_sees_what_the_plain_app_wrote_between_commands(scenario: Any):
    _kind, home, data = scenario
    later, third = data["later"], data["later"]["third"]
    digest = json.loads(later["digest"]["stdout"])
    assert third in {item["memory_id"] for item in digest["items"]}
    forget = json.loads(later["forget"]["stdout"])
    assert forget["deleted"] == [third]
    report = json.loads(later["audit"]["stdout"])
    assert report["stats"]["memories_in_vector_store"] == 3


def test_the_audit_and_where_resolve_the_same_stores_as_the_app(scenario: Any):
    kind, home, data = scenario
    report = json.loads(data["later"]["audit"]["stdout"])
    where = json.loads(data["later"]["where"]["stdout"])["locations"]
    audit_paths = {loc["role"]: loc["path"] for loc in report["locations"]}
    where_paths = {loc["role"]: loc["path"] for loc in where}
    assert audit_paths == where_paths
    assert where_paths["vector_store"] == "/tmp/qdrant"
    assert where_paths["history_db"] == str(home / ".mem0" / "history.db")
    vector = next(loc for loc in where if loc["role"] == "vector_store")
    assert vector["volatile"] is (kind == "tmpfs") and vector["under_tmp"] is True
