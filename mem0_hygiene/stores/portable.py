"""The portable export format of a mem0 store: JSON Lines, versioned, checked end to end (format version 1).

``mem0-hygiene export OUT`` writes two files, ``OUT`` (the memories) and ``OUT``'s history file
(:func:`history_path`: ``memories.jsonl`` -> ``memories.history.jsonl``), each UTF-8 JSON Lines made of a
header line, one line per record, and a trailer line. Both files are written to a temporary file beside the
destination, fsynced and renamed into place, so a path never holds half an export; a file cut short anyway
(copied halfway, a full disk) is detected by its trailer before anything is imported.

Header (first line), an object with:

- ``format``: ``"mem0-hygiene-export"``; ``version``: :data:`VERSION` (an importer refuses a newer one);
- ``kind``: ``"memories"`` or ``"history"``;
- ``exported_at``: UTC ISO time of the run (the only field that differs between two exports of one store,
  with ``source``);
- ``source``: the store it came from, for people: ``provider``, ``collection``, ``where`` (a folder, or a
  server's address without user, password or query) and ``ledger`` (likewise);
- ``embedder``: ``provider``, ``model`` and ``dims`` (the vectors' length, when the file holds vectors);
- ``secrets``: ``"redacted"`` (credentials found by :mod:`mem0_hygiene.scan.secrets` in texts, sources,
  invalidation reasons, metadata and history replaced by ``[redacted KIND]``; a redacted text's mem0 ``hash``
  is recomputed) or ``"included"`` (``--include-secrets``: everything as stored);
- ``with_vectors``: whether the memory lines carry ``vector``;
- ``counts``: ``records`` (lines between header and trailer), ``points`` (records that are vector-store
  points) and ``ledger_rows`` (records with a ledger row), in the memories file only (the history file's
  trailer says how many lines it holds);
- ``history`` (memories file only): the history file's name, record count and sha256, so the two files of
  one export are known to belong together.

A memory line (``kind`` "memories"), one per memory id, in id order:

- ``id``: mem0's memory id (kept on import where the store allows: every supported store does);
- ``text``: the memory's text (mem0's payload ``data``); null for a ledger row whose point is gone (a
  tombstone, kept so a deleted memory stays deleted after an import);
- ``scope``: ``user_id`` / ``agent_id`` / ``run_id`` as in the payload (absent keys absent);
- ``metadata``: every other payload key as stored: mem0's ``hash``, ``created_at``, ``updated_at``,
  ``actor_id``, ``role``, the app's own metadata keys, and the drop-in's flat ``hygiene_*`` birth keys;
- ``point``: true when the memory is a vector-store point, false for a ledger row alone;
- ``ledger``: the hygiene ledger row (null when the memory has none: written by plain mem0, never adopted):
  ``source``, ``source_kind``, ``created_at``, ``confirmed_at``, ``expires_at``, ``superseded_by``,
  ``superseded_at`` (the chain link: this memory was replaced by that one), ``invalid_at``,
  ``invalid_reason`` (the invalidation), ``quarantined``, ``last_used_at``, ``use_count``, ``topic_key``,
  ``deleted_at`` (the tombstone), ``adopted``, ``redacted``, ``flag`` and the scope columns ``user_id``,
  ``agent_id``, ``run_id`` (every column of the ledger's ``memories`` table except the id);
- ``state``: the row's state at ``exported_at`` (live, expired, superseded, invalidated, quarantined, deleted;
  "untracked" without a row), for people and filters; the importer recomputes it;
- ``supersedes``: the ids whose ``superseded_by`` is this memory (the chain read backwards, sorted);
- ``confirmations``: the ledger's confirmation log of the memory, ``[[confirmed_at, via], ...]`` in time order;
- ``vector``: the stored embedding (a list of floats), only in a file written ``--with-vectors``.

A history line (``kind`` "history"), one per row of mem0's ``history`` table, ordered by memory id and time:
``memory_id``, ``old_memory``, ``new_memory``, ``event`` (ADD, UPDATE, DELETE), ``created_at``, ``updated_at``,
``is_deleted``, ``actor_id``, ``role`` (the row's own random id is not kept: mem0 gives each row a new one).

Trailer (last line): ``{"trailer": true, "count": N, "sha256": HEX}``: the number of record lines and the
sha256 of their bytes (each line with its ``\\n``). A file without it, or whose lines do not add up to it, is
refused with :class:`PortableFileError`.

Writing is streamed: the records go through a temporary SQLite file that sorts them by id, so an export of a
million memories holds one page of points in memory at a time. Nothing here imports mem0.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .durable import sync_folder, temp_prefix

FORMAT = "mem0-hygiene-export"
VERSION = 1
"""The format version this code writes and the newest it reads."""

KINDS = ("memories", "history")

HISTORY_COLUMNS = (
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)
"""The columns of mem0's ``history`` table a history line holds, in this order."""


class PortableFileError(ConfigError):
    """An export file that cannot be imported (not one, a newer version, cut short, damaged); the message names
    the file, what is wrong and what to do."""


def history_path(path: str) -> str:
    """The history file written beside the memories file ``path`` (``x.jsonl`` -> ``x.history.jsonl``)."""
    base = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
    return f"{base}.history.jsonl"


def dumps(record: dict[str, Any]) -> str:
    """One line of the format: compact JSON, keys sorted, non-ASCII kept as it is."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


class SortedLines:
    """Record lines gathered in any order and given back in key order, kept in a temporary SQLite file (not in
    memory) beside the destination; ``with`` removes it."""

    def __init__(self, folder: str) -> None:
        fd, self.path = tempfile.mkstemp(prefix=".mem0-hygiene-export.", suffix=".sort.db", dir=folder)
        os.close(fd)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("PRAGMA cache_size = -65536")  # 64 MiB: a million lines sort with few page reads
        self.db.execute("CREATE TABLE lines (key TEXT PRIMARY KEY, line TEXT NOT NULL) WITHOUT ROWID")

    def add(self, rows: Iterable[tuple[str, str]]) -> None:
        """Keep ``(key, line)`` pairs (a key given again replaces its line)."""
        self.db.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?)", rows)

    def missing(self, keys: list[str]) -> list[str]:
        """The ``keys`` not kept yet."""
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        found = {r[0] for r in self.db.execute(f"SELECT key FROM lines WHERE key IN ({marks})", keys)}
        return [k for k in keys if k not in found]

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM lines").fetchone()[0])

    def lines(self) -> Iterator[str]:
        for (line,) in self.db.execute("SELECT line FROM lines ORDER BY key"):
            yield line

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def __enter__(self) -> SortedLines:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass(frozen=True)
class Written:
    """One file written: where, how many record lines, and the sha256 the trailer holds."""

    path: str
    count: int
    sha256: str
    size: int


def write_lines(path: str, header: dict[str, Any], lines: Iterable[str]) -> Written:
    """Write ``header``, every line of ``lines`` (JSON text, no newline) and the trailer to ``path``: a temporary
    file beside it, fsynced, renamed over it, the folder fsynced. ``header`` gets ``format`` and ``version``."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), dir=folder)
    digest = hashlib.sha256()
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps({"format": FORMAT, "version": VERSION, **header}) + "\n")
            for line in lines:
                data = line + "\n"
                digest.update(data.encode("utf-8"))
                fh.write(data)
                count += 1
            fh.write(
                json.dumps({"trailer": True, "count": count, "sha256": digest.hexdigest()}, separators=(",", ":"))
                + "\n"
            )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    sync_folder(folder)
    return Written(path, count, digest.hexdigest(), os.path.getsize(path))


@dataclass(frozen=True)
class PortableFile:
    """An export file checked whole: its header, its record count and sha256 (equal to its trailer's)."""

    path: str
    header: dict[str, Any]
    count: int
    sha256: str

    @property
    def kind(self) -> str:
        return str(self.header.get("kind"))

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record, in file order (the file was checked whole by :func:`open_checked`)."""
        with open(self.path, encoding="utf-8") as fh:
            next(fh)
            for n, line in enumerate(fh):
                if n >= self.count:
                    return
                yield json.loads(line)


def _bad(path: str, why: str) -> PortableFileError:
    return PortableFileError(
        f"{path} {why}; export the store again with `mem0-hygiene export` (and copy both files whole)"
    )


def _parsed(raw: bytes, path: str, line: int) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:  # UnicodeDecodeError is one
        raise _bad(path, f"has a line that is not JSON (line {line}: {exc})") from None


def open_checked(path: str, kind: str) -> PortableFile:
    """Read the export file ``path`` through once: its header names this format, a version this code reads and
    ``kind``, every line is a whole JSON object, and the trailer's count and sha256 match the lines. Raises
    :class:`PortableFileError` naming what is wrong otherwise."""
    if not os.path.isfile(path):
        raise PortableFileError(
            f"{path} does not exist; pass the file `mem0-hygiene export` wrote"
            + (" (its history file is written beside it)" if kind == "history" else "")
        )
    digest = hashlib.sha256()
    count = 0
    header: dict[str, Any] | None = None
    trailer: dict[str, Any] | None = None
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if header is None:
                    header = _parsed(raw, path, 1)
                    if not isinstance(header, dict) or header.get("format") != FORMAT:
                        raise _bad(path, f"is not a {FORMAT} file (its first line is no header of one)")
                    version = header.get("version")
                    if not isinstance(version, int) or version > VERSION:
                        raise PortableFileError(
                            f"{path} is format version {version}, newer than this mem0-hygiene reads ({VERSION}); "
                            "upgrade mem0-hygiene (pip install -U mem0-hygiene) to import it"
                        )
                    if header.get("kind") != kind:
                        raise _bad(path, f"holds {header.get('kind')!r} lines, not {kind!r}")
                    continue
                if trailer is not None:
                    raise _bad(path, "has lines after its trailer")
                if raw.startswith(b'{"trailer":true'):
                    trailer = _parsed(raw, path, count + 2)
                    continue
                if not raw.endswith(b"}\n") or not raw.startswith(b"{"):  # each line is parsed when it is used
                    raise _bad(path, f"is cut short or damaged (line {count + 2} is no whole JSON object)")
                digest.update(raw)
                count += 1
    except OSError as exc:
        raise PortableFileError(f"cannot read {path}: {exc.strerror or exc}; check the path and permissions") from None
    if header is None:
        raise _bad(path, "is empty")
    if trailer is None:
        raise _bad(path, f"is cut short: no trailer after its {count} record line(s)")
    if trailer.get("count") != count or trailer.get("sha256") != digest.hexdigest():
        raise _bad(
            path,
            f"does not match its trailer ({count} line(s), the trailer says {trailer.get('count')}; "
            f"sha256 {digest.hexdigest()[:12]}, the trailer {str(trailer.get('sha256'))[:12]}): it was changed or "
            "damaged",
        )
    return PortableFile(os.path.abspath(path), header, count, digest.hexdigest())


__all__ = [
    "FORMAT",
    "HISTORY_COLUMNS",
    "KINDS",
    "VERSION",
    "PortableFile",
    "PortableFileError",
    "SortedLines",
    "Written",
    "dumps",
    "history_path",
    "open_checked",
    "write_lines",
]
