"""The one durable file writer (and its checked reader) behind every journal, record, registry and config write.

:func:`write_file` writes a temporary file in the same folder, fsyncs it, renames it over the path with
``os.replace`` and fsyncs the folder, so after a crash or a power loss the path holds the old contents or the new
ones, never half of them and never nothing. :func:`write_json` is the same for a JSON document.
:func:`read_json` reads one back: None when the file is not there, otherwise the document, or the caller's error
(which names the file) when it cannot be read or parsed.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from typing import Any


def temp_prefix(path: str) -> str:
    """The name prefix of the temporary files :func:`write_file` makes for ``path`` (beside it, hidden)."""
    return f".{os.path.basename(path)}."


def sync_folder(folder: str) -> None:
    """fsync a folder, so a rename or an unlink in it survives a power loss (best effort: not every filesystem
    lets a folder be opened for that)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_file(
    path: str, data: str | bytes, *, mode: int | None = None, prefix: str | None = None, make_folder: bool = False
) -> str:
    """Replace the file at ``path`` (a link is followed: the real file is written, the link kept) with ``data``,
    durably: temp file beside it (``prefix``, default :func:`temp_prefix`), fsync, ``os.replace``, fsync of the
    folder. ``mode``: the new file's permission bits (default: the temporary file's 0600). ``make_folder``: create
    the folder first. Returns the path written. A temporary file is never left behind by an exception."""
    path = os.path.realpath(path)
    folder = os.path.dirname(path)
    if make_folder:
        os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix if prefix is not None else temp_prefix(path), dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    sync_folder(folder)
    return path


def write_json(path: str, doc: Any, *, sort_keys: bool = False, **options: Any) -> str:
    """:func:`write_file` of ``doc`` as indented JSON ending with a newline (``options``: those of
    :func:`write_file`)."""
    return write_file(path, json.dumps(doc, indent=2, sort_keys=sort_keys) + "\n", **options)


def remove_file(path: str) -> None:
    """Remove the file at ``path`` (nothing when it is not there), durably: the folder is fsynced."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sync_folder(os.path.dirname(path))


def read_json(path: str, error: Callable[[str], Exception]) -> Any | None:
    """The JSON document at ``path``; None when there is no file. When it cannot be read or is not JSON, raises
    ``error(why)``, an exception the caller builds to name the file and what to do."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise error(str(exc)) from None
