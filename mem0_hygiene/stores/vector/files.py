"""Snapshots of stores kept as files (Chroma's folder, FAISS's index and docstore): copied, then checked
unchanged at the source (sha256 of every file before and after the copy) and equal in the copy; restored by
copying them beside the store and swapping them in by rename."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

from ...errors import BackupError


def file_digests(paths: list[str], root: str) -> dict[str, str]:
    """``{path relative to root: sha256}`` of each file."""
    out: dict[str, str] = {}
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        out[os.path.relpath(path, root)] = digest.hexdigest()
    return out


def copy_files_verified(paths: list[str], root: str, dest: str, what: str) -> dict[str, str]:
    """Copy ``paths`` (under ``root``) into ``dest`` keeping their relative places; :class:`BackupError` when
    a file changed while it was copied (a writer was busy: retry when the app is stopped) or the copy differs."""
    before = file_digests(paths, root)
    for path in paths:
        target = os.path.join(dest, os.path.relpath(path, root))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(path, target)
    after = file_digests(paths, root)
    copied = file_digests([os.path.join(dest, rel) for rel in before], dest)
    if before != after:
        raise BackupError(f"{what} changed while it was copied: stop the app (or wait until it is idle) and retry")
    if copied != before:
        raise BackupError(f"the copy of {what} in {dest} differs from it (disk full?); nothing was kept")
    return before


def swap_folder_in(source: str, target: str) -> None:
    """Make ``target`` a copy of the folder ``source``: copied beside it first, then swapped in by rename (the
    old one removed after)."""
    parent = os.path.dirname(os.path.abspath(target)) or "."
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".restore-", dir=parent)
    try:
        staged = os.path.join(staging, "new")
        shutil.copytree(source, staged, symlinks=True)
        if os.path.exists(target):
            os.rename(target, os.path.join(staging, "old"))
        os.rename(staged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def folder_files(path: str) -> list[str]:
    """Every file under ``path``, sorted."""
    return sorted(os.path.join(root, name) for root, _, names in os.walk(path) for name in names)
