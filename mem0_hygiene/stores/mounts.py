"""Which filesystem backs a path: ``findmnt`` first, ``/proc/self/mountinfo`` second, "unknown" last.

A store on tmpfs or ramfs lives in RAM and is gone at the next reboot; :attr:`MountInfo.volatile`
says so. The path need not exist: the nearest existing ancestor is looked up, since that is where
the path would be created.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import asdict, dataclass
from typing import Any, Literal

VOLATILE_FSTYPES = frozenset({"tmpfs", "ramfs"})
FINDMNT_TIMEOUT = 5.0

Method = Literal["findmnt", "mountinfo", "unknown"]


@dataclass(frozen=True)
class MountInfo:
    """The mount that holds a path.

    Fields:
        fstype: filesystem type as the kernel names it ("ext4", "tmpfs", ...), or "unknown".
        target: the mount point ("/", "/dev/shm", ...), or "" when unknown.
        source: what is mounted there (a device, "tmpfs", a server share), or "" when unknown.
        method: how it was found: "findmnt", "mountinfo", or "unknown" when neither was available.
    """

    fstype: str
    target: str
    source: str
    method: Method

    @property
    def volatile(self) -> bool:
        """True when the filesystem lives in RAM (tmpfs, ramfs): its content is lost at reboot."""
        return self.fstype in VOLATILE_FSTYPES

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["volatile"] = self.volatile
        return data


UNKNOWN = MountInfo(fstype="unknown", target="", source="", method="unknown")


def nearest_existing(path: str | os.PathLike[str]) -> str:
    """The absolute path itself if it exists, else its closest existing ancestor."""
    current = os.path.abspath(os.path.expanduser(os.fspath(path)))
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


_HEX_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape_hex(text: str) -> str:
    """findmnt writes unsafe characters (spaces, tabs) in its columns as ``\\xHH``."""
    return _HEX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _unescape_octal(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as ``\\040``, ``\\011``, ``\\012``, ``\\134``."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text)


def _from_findmnt(path: str, findmnt: str) -> MountInfo | None:
    try:
        proc = subprocess.run(
            [findmnt, "-n", "-o", "FSTYPE,TARGET,SOURCE", "-T", path],
            capture_output=True,
            text=True,
            timeout=FINDMNT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if not lines:
        return None
    # Stacked mounts on one target are all listed; the last one is on top and is what we see.
    parts = lines[-1].split(None, 2)
    if len(parts) < 2:
        return None
    fstype, target = parts[0], _unescape_hex(parts[1])
    source = _unescape_hex(parts[2].strip()) if len(parts) > 2 else ""
    return MountInfo(fstype=fstype, target=target, source=source, method="findmnt")


def _is_under(path: str, mount_point: str) -> bool:
    if mount_point == "/":
        return path.startswith("/")
    return path == mount_point or path.startswith(mount_point.rstrip("/") + "/")


def _from_mountinfo(path: str, mountinfo: str) -> MountInfo | None:
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best: MountInfo | None = None
    best_len = -1
    for line in lines:
        # ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
        fields = line.split()
        try:
            sep = fields.index("-", 6)
        except ValueError:
            continue
        if len(fields) < sep + 3:
            continue
        mount_point = _unescape_octal(fields[4])
        if not _is_under(real, mount_point):
            continue
        # Longest mount point wins; on a tie the later line is mounted on top of the earlier one.
        if len(mount_point) >= best_len:
            best_len = len(mount_point)
            best = MountInfo(
                fstype=_unescape_octal(fields[sep + 1]),
                target=mount_point,
                source=_unescape_octal(fields[sep + 2]),
                method="mountinfo",
            )
    return best


def filesystem_of(
    path: str | os.PathLike[str],
    *,
    findmnt: str | None = "findmnt",
    mountinfo: str = "/proc/self/mountinfo",
) -> MountInfo:
    """The filesystem that holds ``path`` (or would hold it, for a path not created yet).

    Runs ``findmnt -n -o FSTYPE,TARGET,SOURCE -T PATH`` on the nearest existing ancestor; when
    findmnt is missing or fails, parses ``mountinfo`` (longest matching mount point); when neither
    works (macOS, Windows, a locked-down container) returns a ``MountInfo`` with method "unknown".
    ``findmnt=None`` skips findmnt; both arguments exist so tests can simulate a bare system.
    """
    existing = nearest_existing(path)
    if findmnt:
        found = _from_findmnt(existing, findmnt)
        if found is not None:
            return found
    found = _from_mountinfo(existing, mountinfo)
    if found is not None:
        return found
    return UNKNOWN
