"""Moving a store without leaving a second live copy: once the copy is verified, the old path becomes a link.

After a verified copy (:func:`~mem0_hygiene.stores.qdrant.copy_store_verified`,
:func:`~mem0_hygiene.stores.sqlite.copy_database`, :func:`copy_file_verified`) the old path is switched to a
symbolic link to the copy, so every reader of the old path (a plain mem0 app, another tool, an old config)
reaches the very same store, and the moved-from data is removed only once the link is in place:

- a folder (local Qdrant, :func:`swap_folder_for_link`): while this process holds the store's own lock (no
  client can have it open), a link is made under a temporary name (``.NAME.relocating-link``) and exchanged
  with the folder in one atomic ``renameat2(RENAME_EXCHANGE)`` (Linux: ext4, tmpfs, xfs, btrfs, ...), then
  the moved-from folder, now under the temporary name, is deleted. Where the exchange is not available, the
  folder is renamed aside in the same parent (``.NAME.relocating-aside``), the link created at its old name,
  and then the aside copy deleted;
- a file (a SQLite database, the backup record; :func:`swap_file_for_link`): a link made under a temporary
  name (``.NAME.relocating-link``) replaces the file in one ``os.replace``, so the old path is always the
  file or the link; then the old file's ``-wal``/``-shm``/``-journal`` go (SQLite follows the link and keeps
  its sidecars beside the real file).

A crash at any point leaves the old store or the link at the old path (with the aside fallback, the short
moment between the rename and the link leaves the store at the aside name): :func:`finish_swap`,
which every mover runs first, finishes an interrupted switch (or undoes it when the new copy is missing).
Local Qdrant and SQLite both follow the link, and a lock taken through it is the lock of the real folder:
one client at a time, whichever path it opened.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import filecmp
import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from ..errors import RelocateError, StoreLocked
from .qdrant import client_counts, folder_signature, held_lock, is_locked, opened
from .sqlite import SIDECARS, file_signature
from .staging import aside_path, link_tmp_path, remove_path, remove_stale_copies, staging_prefix
from .vectors import qdrant_pages

Signature = tuple[tuple[str, int, int], ...]


def links_to(path: str, target: str) -> bool:
    """``path`` is a symbolic link that leads (possibly through more links) to ``target``."""
    return os.path.islink(path) and os.path.realpath(path) == os.path.realpath(target)


def has_store(path: str, *, folder: bool) -> bool:
    """A store is there: a store folder (``folder``: local Qdrant, Chroma or FAISS) or a file."""
    if not folder:
        return os.path.isfile(path)
    from .vector.folders import FOLDER_PROVIDERS, is_store_folder

    return any(is_store_folder(provider, path) for provider in FOLDER_PROVIDERS)


def replace_with_link(path: str, target: str) -> None:
    """Make ``path`` (a file, a link or nothing; never a folder) a link to ``target`` in one ``os.replace``."""
    tmp = link_tmp_path(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, path)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange_paths(a: str, b: str) -> bool:
    """Swap what the paths ``a`` and ``b`` name, atomically (Linux ``renameat2(RENAME_EXCHANGE)``). False when
    this system or filesystem cannot (nothing changed then); other failures raise ``OSError``."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


def swap_folder_for_link(old: str, new: str, signature: Signature | None = None, *, lock: bool = True) -> None:
    """Replace the store folder ``old`` by a link to its verified copy ``new``.

    Holds the folder's local Qdrant lock throughout (:class:`StoreLocked` when a client has it open; ``lock=False``
    for a provider that takes none, Chroma or FAISS: no lock file is made in its folder) and, given the
    ``signature`` the folder had when it was copied, refuses with :class:`RelocateError` when it changed
    since (the copy would be behind). Then the folder and a new link trade places in one atomic exchange and
    the moved-from folder is deleted; without the exchange: rename ``old`` aside, link ``new`` at ``old``
    (renamed back should that fail), delete the aside copy.
    """
    with held_lock(old, "move") if lock else contextlib.nullcontext():
        if signature is not None and folder_signature(old) != signature:
            raise RelocateError(
                f"{old} changed after it was copied to {new} (a client wrote to it); nothing was switched. "
                "Stop the app and run the same command again"
            )
        remove_stale_copies(new)  # a copy's leftover the crash of an earlier run may have left beside ``new``
        aside, tmp = aside_path(old), link_tmp_path(old)
        if os.path.lexists(aside):
            raise RelocateError(
                f"{aside} is in the way (left by an interrupted move); start again, which finishes that move first"
            )
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(new, tmp, target_is_directory=True)
        if exchange_paths(tmp, old):
            shutil.rmtree(tmp)  # the moved-from folder, under the temporary name now
            return
        os.unlink(tmp)
        os.rename(old, aside)
        try:
            os.symlink(new, old, target_is_directory=True)
        except BaseException:
            with contextlib.suppress(OSError):
                os.rename(aside, old)
            raise
        shutil.rmtree(aside)


def remove_sidecars(path: str) -> list[str]:
    """Delete the ``-wal``/``-shm``/``-journal`` files of the database that was at ``path`` (now a link:
    SQLite keeps the live sidecars beside the real file, so these belong to the moved-from file)."""
    removed = []
    for suffix in SIDECARS:
        side = path + suffix
        if os.path.lexists(side) and not os.path.isdir(side):
            os.unlink(side)
            removed.append(side)
    return removed


def swap_file_for_link(old: str, new: str, signature: Signature | None = None, *, sqlite: bool = True) -> None:
    """Replace the file ``old`` by a link to its verified copy ``new`` (one ``os.replace``), then delete the
    old file's SQLite sidecars (``sqlite``). Given the ``signature`` the file had when it was copied, refuses
    with :class:`RelocateError` when it changed since."""
    if signature is not None and file_signature(old) != signature:
        raise RelocateError(
            f"{old} changed after it was copied to {new} (something wrote to it); nothing was switched. "
            "Stop the app and run the same command again"
        )
    replace_with_link(old, new)
    if sqlite:
        remove_sidecars(old)


def finish_swap(old: str, new: str, *, folder: bool) -> str:
    """Finish (or undo) a switch of ``old`` to a link to ``new`` that a crash interrupted; "" when none was.

    - a temporary link left beside the path is removed (the store or the link is at ``old`` either way); the
      moved-from folder left under that name after an exchange is deleted (``old`` links to ``new`` then);
    - a folder moved aside (``.NAME.relocating-aside``): when ``new`` holds the store (it was verified before
      the switch began), ``old`` becomes the link if it is missing, and the aside copy is deleted; when
      ``new`` is missing, the folder is renamed back to ``old``;
    - a database already switched: sidecar files left beside the link are deleted.

    :class:`StoreLocked` when another process holds the aside folder (it is switching right now).
    """
    notes: list[str] = []
    tmp = link_tmp_path(old)
    if os.path.islink(tmp) or os.path.isfile(tmp):
        os.unlink(tmp)  # made before the exchange (or the replace) that did not happen
        notes.append(f"removed the temporary link {tmp}")
    elif os.path.isdir(tmp):  # the moved-from folder after the exchange: ``old`` is the link already
        if is_locked(tmp):
            raise StoreLocked(
                f"another process is switching {old} to a link right now (it holds {tmp}); start again in a moment"
            )
        if not (links_to(old, new) and has_store(new, folder=True)):
            raise RelocateError(
                f"{tmp} holds a store an interrupted move left, but {old} does not link to "
                f"{new}: compare them and keep one by hand"
            )
        shutil.rmtree(tmp)
        notes.append(f"deleted the moved-from copy {tmp} (its data is at {new})")
    aside = aside_path(old)
    if os.path.lexists(aside):
        if folder and is_locked(aside):
            raise StoreLocked(
                f"another process is switching {old} to a link right now (it holds {aside}); start again in a moment"
            )
        if has_store(new, folder=folder):
            if not os.path.lexists(old):
                os.symlink(new, old, target_is_directory=folder)
                notes.append(f"finished an interrupted switch: {old} now links to {new}")
            remove_path(aside)
            notes.append(f"deleted the moved-from copy {aside} (its data is at {new})")
        elif not os.path.lexists(old):
            os.rename(aside, old)
            notes.append(f"undid an interrupted switch: {new} is missing, so {old} is back")
        else:
            raise RelocateError(
                f"{aside} (a store moved aside by an interrupted switch) and {old} both exist, "
                f"and {new} does not: compare them and keep one by hand"
            )
    if not folder and links_to(old, new):
        notes += [f"deleted {side}, left by the moved-from database" for side in remove_sidecars(old)]
    return "; ".join(notes)


# ---------------------------------------------------------------------------------------------- comparing


@dataclass(frozen=True)
class StoreComparison:
    """Whether two local Qdrant folders hold the same points (ids and payloads, every collection).

    Fields:
        same: the same collections, point ids and payloads.
        counts_a, counts_b: points per collection in each.
        signature_a: the first folder's :func:`~mem0_hygiene.stores.qdrant.folder_signature`, read while it
            was held open (pass it to :func:`swap_folder_for_link`).
    """

    same: bool
    counts_a: dict[str, int]
    counts_b: dict[str, int]
    signature_a: Signature


def _digest(client: Any) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for name, count in client_counts(client).items():
        rows = sorted(
            (str(p["id"]), json.dumps(p["payload"], sort_keys=True, default=str))
            for page in qdrant_pages(client, name)
            for p in page
        )
        h = hashlib.sha256()
        for pid, payload in rows:
            h.update(pid.encode() + b"\0" + payload.encode() + b"\n")
        out[name] = (count, h.hexdigest())
    return out


def compare_stores(a: str, b: str) -> StoreComparison:
    """Read every point of two local Qdrant folders (one after the other) and compare them."""
    with opened(a, "compare") as client:
        digest_a = _digest(client)
        signature = folder_signature(a)
    with opened(b, "compare") as client:
        digest_b = _digest(client)
    return StoreComparison(
        same=digest_a == digest_b,
        counts_a={k: v[0] for k, v in digest_a.items()},
        counts_b={k: v[0] for k, v in digest_b.items()},
        signature_a=signature,
    )


# ---------------------------------------------------------------------------------------------- plain files


def copy_file_verified(src: str, dst: str) -> Signature:
    """Copy a small file (the backup record) to ``dst`` (not overwritten) through a hidden temporary file
    beside it, compared byte for byte before it is linked into place; returns the source's signature."""
    parent = os.path.dirname(dst)
    os.makedirs(parent, exist_ok=True)
    if os.path.lexists(dst):
        raise RelocateError(f"{dst} already exists; choose another destination (nothing was copied)")
    remove_stale_copies(dst)
    fd, tmp = tempfile.mkstemp(prefix=staging_prefix(dst), dir=parent)
    os.close(fd)
    try:
        signature = file_signature(src)
        shutil.copy2(src, tmp)
        if not filecmp.cmp(src, tmp, shallow=False) or file_signature(src) != signature:
            raise RelocateError(f"the copy of {src} does not match it (was it being written?); nothing was switched")
        try:
            os.link(tmp, dst)
        except FileExistsError as exc:
            raise RelocateError(f"{dst} appeared while copying; nothing was switched") from exc
        except OSError:
            if os.path.lexists(dst):
                raise RelocateError(f"{dst} appeared while copying; nothing was switched") from None
            os.rename(tmp, dst)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return signature
