"""A store this process may only read (a read-only mount, another user's files) is audited and read by every
read-only command, and not one byte of it changes: local Qdrant's own SQLite file is read without its lock.

Root ignores file permissions, so the read-only situation is real: a read-only bind mount of the store (EROFS),
or the CLI run as ``nobody`` against files it may only read (EACCES). Each is skipped, with the reason, where the
machine does not allow it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import inspect, offline_config
from mem0_hygiene.cli import cli

NOTE = "read-only: read the collection's SQLite file directly, lock not taken"


def snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """(sha256, size, mtime_ns) of every file under ``folder`` (the store, history.db and the ledger)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(folder))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                st.st_size,
                st.st_mtime_ns,
            )
    return out


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Callable[[Path], Path]]:
    """`read_only_mount(folder)`: the folder bind-mounted read-only at a new path (unmounted afterwards)."""
    mounted: list[Path] = []

    def mount(src: Path) -> Path:
        dst = tmp_path / f"ro-{len(mounted)}"
        dst.mkdir()
        if not shutil.which("mount"):
            pytest.skip("no mount command here to make a read-only bind mount")
        bind = subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True, text=True)
        if bind.returncode:
            pytest.skip(f"a bind mount is not permitted here: {bind.stderr.strip()}")
        mounted.append(dst)
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(dst)], capture_output=True, text=True)
        if ro.returncode:
            pytest.skip(f"a bind mount cannot be made read-only here: {ro.stderr.strip()}")
        return dst

    yield mount
    for dst in reversed(mounted):
        subprocess.run(["umount", str(dst)], capture_output=True)


def dropin_store(folder: Path, make_deployment: Any, clock: Any) -> list[str]:
    """A drop-in deployment (ledger present): an expired memory, a duplicate pair, old confirmations."""
    ids: list[str] = []

    def plant(m: Any) -> None:
        for text, extra in (
            ("Prefers pnpm", {}),
            ("Prefers pnpm", {}),
            ("Lives in Leeds", {}),
            ("Travelling this week", {"ttl": "1h"}),
        ):
            ids.append(m.add(text, user_id="dana", infer=False, source="chat 2026-08-01", **extra)["results"][0]["id"])
        clock.advance(days=2)  # the trip is over

    make_deployment(folder, plant=plant)
    return ids


def plain_store(folder: Path, plain_mem0: Callable[[Path], Any], close_plain: Callable[[Any], None]) -> list[str]:
    """A store plain mem0 wrote (no ledger): one memory past mem0's own expiration_date."""
    m = plain_mem0(folder)
    try:
        ids = [
            m.add("Prefers pnpm", user_id="dana", infer=False)["results"][0]["id"],
            m.add("Lives in Leeds", user_id="dana", infer=False)["results"][0]["id"],
            m.add("Staging is down", user_id="dana", infer=False, expiration_date="2026-01-01")["results"][0]["id"],
        ]
    finally:
        close_plain(m)
    return ids


@pytest.fixture(params=["drop-in", "plain mem0"])
def store(
    request: Any, tmp_path: Path, make_deployment: Any, clock: Any, plain_mem0: Any, close_plain: Any
) -> tuple[Path, list[str], str]:
    """(folder, memory ids, kind): a store written by the drop-in or by plain mem0."""
    folder = tmp_path / "store"
    if request.param == "drop-in":
        ids = dropin_store(folder, make_deployment, clock)
    else:
        ids = plain_store(folder, plain_mem0, close_plain)
    assert not (folder / "qdrant" / "collection" / "mem0" / "storage.sqlite-journal").exists()
    return folder, ids, request.param


def config_file(folder: Path, where: Path) -> Path:
    path = where / f"{folder.name}.json"
    path.write_text(json.dumps(offline_config(folder)))
    return path


def read_only_commands(memory_id: str) -> list[list[str]]:
    return [
        ["audit", "--json"],
        ["where"],
        ["digest", "--since", "3650d"],
        ["history", memory_id],
        ["review", "--list", "--older-than", "1s"],
        ["prune", "--dry-run"],
        ["consolidate", "--dry-run"],
    ]


def test_every_read_only_command_reads_a_read_only_mount_and_changes_no_byte(
    store: tuple[Path, list[str], str],
    read_only_mount: Callable[[Path], Path],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
):
    folder, ids, kind = store
    view = read_only_mount(folder)
    cfg = config_file(view, tmp_path)
    before = snapshot(folder)
    runner = CliRunner()
    outputs, noted = {}, {}
    for args in read_only_commands(ids[0]):
        caplog.clear()
        result = runner.invoke(cli, [*args, "--config", str(cfg)])
        noted[args[0]] = any(NOTE in r.getMessage() for r in caplog.records)  # the CLI shows it on stderr
        assert result.exit_code in ((0, 1) if args[0] == "audit" else (0,)), (args, result.output)
        assert "Error" not in result.stderr, (args, result.stderr)
        outputs[args[0]] = result
    doc = json.loads(outputs["audit"].stdout)
    vector = next(loc for loc in doc["locations"] if loc["role"] == "vector_store")
    assert NOTE in vector["note"] and "Read-only file system" in vector["note"]
    assert doc["stats"]["memories_in_vector_store"] == len(ids)
    assert not [s for s in doc["skipped"] if "lock" in s["reason"]]
    assert [name for name, said in noted.items() if said] == ["review", "prune", "consolidate"]
    assert "would delete 1 memor" in outputs["prune"].output  # the expired one, read from the store
    assert "Prefers pnpm" in outputs["digest"].output and "Prefers pnpm" in outputs["history"].output
    if kind == "drop-in":
        assert "1 duplicate(s) to merge" in outputs["consolidate"].output
    frame = inspect(offline_config(view))
    assert frame.memories["in_vector_store"].sum() == len(ids)
    assert "vector store not read" not in frame.note and NOTE in frame.read_only
    assert snapshot(folder) == before


def test_the_audit_of_a_read_only_mount_finds_what_the_audit_of_the_store_itself_finds(
    store: tuple[Path, list[str], str], read_only_mount: Callable[[Path], Path], tmp_path: Path
):
    folder, _ids, _kind = store
    view = read_only_mount(folder)

    def findings(config: Path) -> tuple[dict[str, int], int]:
        doc = json.loads(CliRunner().invoke(cli, ["audit", "--json", "--config", str(config)]).stdout)
        return {f["code"]: f["count"] for f in doc["findings"]}, doc["stats"]["memories_in_vector_store"]

    read_only, points = findings(config_file(view, tmp_path))
    assert read_only.pop("STORE_NOT_WRITABLE")  # true of the mount: the app could not write there either
    assert (read_only, points) == findings(config_file(folder, tmp_path))


def test_a_command_that_writes_is_refused_on_a_read_only_mount_naming_why(
    store: tuple[Path, list[str], str], read_only_mount: Callable[[Path], Path], tmp_path: Path
):
    folder, _ids, _kind = store
    view = read_only_mount(folder)
    before = snapshot(folder)
    result = CliRunner().invoke(cli, ["prune", "--config", str(config_file(view, tmp_path))])
    assert result.exit_code == 3
    assert "may only read it" in result.stderr and "Read-only file system" in result.stderr
    assert snapshot(folder) == before


# ------------------------------------------------------------------------------------------ another account


def run_as_nobody(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "MEM0_DIR": str(home / "mem0"),
        "TMPDIR": str(home),
        "MEM0_TELEMETRY": "False",
    }
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
    )


def searchable_by_all(path: Path) -> bool:
    return all(p.stat().st_mode & 0o001 for p in [path, *path.parents])


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder root owns and every account may read (pytest's own temp folders are private to root, and another
    pytest run may make them so again at any time); removed afterwards."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("running a command as another account needs root and setpriv")
    base = next((Path(p) for p in (tempfile.gettempdir(), "/tmp", "/var/tmp") if searchable_by_all(Path(p))), None)
    if base is None:
        pytest.skip("no temp folder here that every account may enter")
    folder = Path(tempfile.mkdtemp(prefix="mem0-hygiene-tests-ro-", dir=base))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def nobody_home(shared_dir: Path) -> Path:
    """A home folder for the unprivileged `nobody`, who must be able to run this Python and import the package."""
    home = shared_dir / "nobody"
    home.mkdir()
    os.chown(home, 65534, 65534)
    probe = run_as_nobody(["-c", "import mem0_hygiene, os; assert os.geteuid() != 0"], home)
    if probe.returncode:
        pytest.skip(f"nobody cannot run this Python with the package: {probe.stderr.strip()[-200:]}")
    return home


def shared_copy(folder: Path, shared_dir: Path) -> Path:
    """The (closed) store copied where `nobody` may read it, owned by root: nobody may only read it."""
    copy = shared_dir / "store"
    shutil.copytree(folder, copy, symlinks=True)
    return copy


def test_another_account_audits_and_reads_a_store_it_may_only_read(
    store: tuple[Path, list[str], str], nobody_home: Path, shared_dir: Path
):
    folder, ids, _kind = store
    folder = shared_copy(folder, shared_dir)
    cfg = config_file(folder, shared_dir)
    before = snapshot(folder)
    for args in read_only_commands(ids[0]):
        result = run_as_nobody(["-m", "mem0_hygiene", *args, "--config", str(cfg)], nobody_home)
        assert result.returncode in ((0, 1) if args[0] == "audit" else (0,)), (args, result.stderr)
        assert (NOTE in result.stderr) == (args[0] in ("review", "prune", "consolidate")), (args, result.stderr)
        if args[0] == "audit":
            doc = json.loads(result.stdout)
            vector = next(loc for loc in doc["locations"] if loc["role"] == "vector_store")
            assert NOTE in vector["note"] and "Permission denied" in vector["note"]
            assert doc["stats"]["memories_in_vector_store"] == len(ids)
    assert snapshot(folder) == before


def test_another_account_audits_a_store_while_the_app_holds_it_reading_only_committed_points(
    store: tuple[Path, list[str], str], nobody_home: Path, shared_dir: Path, hold_qdrant_lock: Any
):
    folder, ids, _kind = store
    folder = shared_copy(folder, shared_dir)
    cfg = config_file(folder, shared_dir)
    hold_qdrant_lock(folder / "qdrant")
    before = snapshot(folder)
    result = run_as_nobody(["-m", "mem0_hygiene", "audit", "--json", "--config", str(cfg)], nobody_home)
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    vector = next(loc for loc in doc["locations"] if loc["role"] == "vector_store")
    assert "mode=ro, not immutable" in vector["note"]
    assert doc["stats"]["memories_in_vector_store"] == len(ids)
    assert snapshot(folder) == before
