"""filesystem_of on real mounts: /dev/shm is tmpfs, tmp_path is not; findmnt and mountinfo fallbacks."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_hygiene.stores.mounts import MountInfo, filesystem_of, nearest_existing

SHM = Path("/dev/shm")
needs_shm = pytest.mark.skipif(not SHM.is_dir(), reason="/dev/shm does not exist here")
needs_findmnt = pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt is not installed")
needs_mountinfo = pytest.mark.skipif(
    not os.path.exists("/proc/self/mountinfo"), reason="/proc/self/mountinfo does not exist here"
)


@needs_shm
@needs_findmnt
def test_dev_shm_is_tmpfs_via_findmnt():
    info = filesystem_of(SHM / "not" / "created" / "yet")
    assert info.method == "findmnt"
    assert info.fstype == "tmpfs"
    assert info.target == "/dev/shm"
    assert info.volatile


@needs_findmnt
def test_tmp_path_is_not_volatile(tmp_path: Path):
    info = filesystem_of(tmp_path)
    if info.fstype in ("tmpfs", "ramfs"):
        pytest.skip(f"pytest's tmp_path is itself on {info.fstype} on this machine")
    assert info.method == "findmnt"
    assert info.fstype not in ("", "unknown")
    assert not info.volatile


@needs_shm
@needs_mountinfo
def test_findmnt_missing_falls_back_to_mountinfo(tmp_path: Path):
    info = filesystem_of(SHM / "a" / "b", findmnt="/nonexistent/findmnt")
    assert info.method == "mountinfo"
    assert info.fstype == "tmpfs"
    assert info.target == "/dev/shm"
    assert info.volatile
    normal = filesystem_of(tmp_path, findmnt=None)
    assert normal.method == "mountinfo"
    assert normal.fstype not in ("", "unknown")


@needs_findmnt
@needs_mountinfo
def test_mountinfo_agrees_with_findmnt(tmp_path: Path):
    by_findmnt = filesystem_of(tmp_path)
    by_mountinfo = filesystem_of(tmp_path, findmnt=None)
    assert (by_mountinfo.fstype, by_mountinfo.target) == (by_findmnt.fstype, by_findmnt.target)


def test_neither_available_is_unknown(tmp_path: Path):
    info = filesystem_of(tmp_path, findmnt="/nonexistent/findmnt", mountinfo=str(tmp_path / "no-mountinfo"))
    assert info == MountInfo(fstype="unknown", target="", source="", method="unknown")
    assert not info.volatile


def test_failing_findmnt_falls_back(tmp_path: Path):
    fake = tmp_path / "findmnt"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    (tmp_path / "ram").mkdir()  # a mount point exists
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        f"40 27 0:50 / {tmp_path}/ram rw,relatime shared:5 - tmpfs tmpfs rw,size=1024k\n"
    )
    info = filesystem_of(tmp_path / "ram" / "qdrant", findmnt=str(fake), mountinfo=str(mountinfo))
    assert (info.method, info.fstype, info.target) == ("mountinfo", "tmpfs", f"{tmp_path}/ram")
    assert filesystem_of(tmp_path / "rammer", findmnt=str(fake), mountinfo=str(mountinfo)).fstype == "ext4"


def test_mountinfo_octal_escapes_and_stacked_mounts(tmp_path: Path):
    target = tmp_path / "my store"
    target.mkdir()
    escaped = str(target).replace(" ", "\\040")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        f"41 27 0:51 / {escaped} rw,relatime - ext4 /dev/vdb rw\n"
        f"42 41 0:52 / {escaped} rw,relatime - ramfs none\\040here rw\n"  # mounted on top of the ext4
    )
    info = filesystem_of(target / "qdrant", findmnt=None, mountinfo=str(mountinfo))
    assert info.target == str(target)
    assert info.fstype == "ramfs"
    assert info.source == "none here"
    assert info.volatile


def test_nearest_existing(tmp_path: Path):
    assert nearest_existing(tmp_path / "x" / "y") == str(tmp_path)
    assert nearest_existing(tmp_path) == str(tmp_path)


@pytest.fixture
def mounted_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real tmpfs mounted inside tmp_path (root only)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    point = tmp_path / "ram"
    point.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(point)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)


def test_a_freshly_mounted_tmpfs_is_volatile_by_both_methods(mounted_tmpfs: Path):
    for findmnt in ("findmnt", None):
        info = filesystem_of(mounted_tmpfs / "qdrant", findmnt=findmnt)
        assert info.fstype == "tmpfs"
        assert info.target == str(mounted_tmpfs)
        assert info.volatile
