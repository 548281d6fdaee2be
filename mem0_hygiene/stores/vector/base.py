"""What the layers above stores/ need from a vector store, whatever its provider: :class:`VectorStore`.

A store pages through every point (``{"id", "payload"}`` dicts, ``"vector"`` added on request), counts them,
looks points up by id and by flat payload fields, converts the provider's search score to cosine terms
(:mod:`mem0_hygiene.stores.scores`, from the store's own distance setting), takes a
consistent snapshot of itself into a folder and restores one, and describes itself (provider, where, the
password left out). A snapshot folder holds :data:`MANIFEST` (provider, collection, count and
:func:`payload_checksum` of what was taken) beside the provider's own data; a restore is verified against it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ...errors import BackupError
from ..scores import ScoreScale, score_scale
from ..vectors import PAGE_SIZE

MANIFEST = "vector-manifest.json"
"""The file in a snapshot folder that says what it holds (:class:`Snapshot`)."""

Point = dict[str, Any]
"""``{"id": str, "payload": dict}``, with ``"vector": list[float]`` when asked for."""


@dataclass(frozen=True)
class Snapshot:
    """What a snapshot folder holds: the provider and collection it came from, its point count and the checksum
    of its ids and payloads (:func:`payload_checksum`), and where it is."""

    provider: str
    collection: str
    count: int
    checksum: str
    path: str

    def write(self) -> None:
        data = {k: v for k, v in asdict(self).items() if k != "path"}
        with open(os.path.join(self.path, MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())

    @classmethod
    def read(cls, path: str) -> Snapshot:
        """The snapshot in folder ``path``; :class:`~mem0_hygiene.errors.BackupError` naming the file when it is
        missing or unreadable."""
        where = os.path.join(path, MANIFEST)
        try:
            with open(where, encoding="utf-8") as fh:
                data = json.load(fh)
            return cls(path=path, **{k: data[k] for k in ("provider", "collection", "count", "checksum")})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BackupError(
                f"{where} is missing or unreadable ({exc}): this is not a vector-store snapshot; "
                "restore from a complete backup set"
            ) from exc


SPILL_AT = 100_000
"""Points a checksum sorts in memory; past it the lines are sorted in a temporary SQLite file (a million
memories' lines would take a few hundred MB)."""


def payload_checksum(points: Iterable[Point], *, spill_at: int = SPILL_AT) -> tuple[int, str]:
    """The number of points and a sha256 over their ids and payloads (JSON, keys sorted), in id order, so the
    same points give the same checksum on every provider and in every page order. Memory stays flat whatever
    the number of points: past ``spill_at`` lines they are sorted on disk (SQLite orders text as UTF-8 bytes,
    which is the order of the code points Python sorts by)."""
    lines: list[str] = []
    count = 0
    with contextlib.ExitStack() as stack:
        spilled: sqlite3.Connection | None = None
        for p in points:
            lines.append(f"{p['id']}\t{json.dumps(p.get('payload') or {}, sort_keys=True, default=str)}")
            count += 1
            if len(lines) >= spill_at:
                spilled = spilled or _spill_file(stack)
                spilled.executemany("INSERT INTO lines VALUES (?)", ((line,) for line in lines))
                lines.clear()
        if spilled is not None:
            spilled.executemany("INSERT INTO lines VALUES (?)", ((line,) for line in lines))
            ordered: Iterable[str] = (row[0] for row in spilled.execute("SELECT line FROM lines ORDER BY line"))
        else:
            ordered = sorted(lines)
        digest = hashlib.sha256()
        for line in ordered:
            digest.update(line.encode("utf-8"))
            digest.update(b"\n")
    return count, digest.hexdigest()


def _spill_file(stack: contextlib.ExitStack) -> sqlite3.Connection:
    """A temporary SQLite database for a checksum's lines, closed when ``stack`` closes. SQLite's own temporary
    database (an empty name): its file is unlinked as it is created, so the lines (memories' texts) leave no copy
    behind even when the process is killed."""
    db = sqlite3.connect("")
    stack.callback(db.close)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("CREATE TABLE lines (line TEXT NOT NULL)")
    return db


def payload_fields(pid: Any, payload: Any, keys: tuple[str, ...]) -> tuple[Any, ...]:
    """``(str(pid), payload.get(key) for key in keys)`` (:meth:`VectorStore.field_pages`)."""
    get = payload.get
    return (str(pid), *[get(k) for k in keys])


def flat_match(payload: dict[str, Any] | None, fields: dict[str, Any]) -> bool:
    """Every ``field: value`` is in the payload, compared as text (as SQL's ``payload->>field``)."""
    payload = payload or {}
    return all(k in payload and str(payload[k]) == str(v) for k, v in fields.items())


class VectorStore(ABC):
    """One collection of one vector store, read (and snapshotted or restored) through its provider's own API or
    files. Use as a context manager, or :meth:`close` it."""

    provider: ClassVar[str] = ""

    def __init__(self, collection: str, where: str) -> None:
        self.collection = collection
        self.where = where
        """Where the store is, for people: a folder, or a server's address without its password."""

    # -- reading ---------------------------------------------------------------------------------
    @abstractmethod
    def exists(self) -> bool:
        """The collection is there (a store not written yet has none: nothing to read)."""

    @abstractmethod
    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        """Every point, in pages of at most ``page_size``; ``"vector"`` only ``with_vectors``."""

    def field_pages(self, keys: tuple[str, ...], page_size: int = PAGE_SIZE) -> Iterator[list[tuple[Any, ...]]]:
        """Every point as ``(id, payload.get(key) for key in keys)``, in pages of at most ``page_size``: what a
        reader needs of the payloads without the rest (the audit reads seven keys). From :meth:`pages`; a provider
        that can read only those keys (pgvector, in SQL) or skip building the points (Chroma, FAISS) does."""
        for page in self.pages(page_size):
            yield [payload_fields(p["id"], p.get("payload") or {}, keys) for p in page]

    def count(self) -> int:
        """How many points the collection holds (0 when it is not there)."""
        return sum(len(page) for page in self.pages()) if self.exists() else 0

    def get(self, ids: Iterable[str], *, with_vectors: bool = False) -> dict[str, Point]:
        """The points with these ids, by id (ids not there are absent)."""
        wanted = {str(i) for i in ids}
        if not wanted or not self.exists():
            return {}
        return {p["id"]: p for page in self.pages(with_vectors=with_vectors) for p in page if p["id"] in wanted}

    def find(self, **fields: Any) -> list[Point]:
        """The points whose payload holds every ``field=value`` (flat fields, compared as text)."""
        if not self.exists():
            return []
        return [p for page in self.pages() for p in page if flat_match(p.get("payload"), fields)]

    def checksum(self) -> tuple[int, str]:
        """:func:`payload_checksum` of the whole collection."""
        if not self.exists():
            return payload_checksum([])
        return payload_checksum(p for page in self.pages() for p in page)

    def score_scale(self) -> ScoreScale:
        """How this store's search scores read as cosine similarity
        (:func:`~mem0_hygiene.stores.scores.score_scale`, from the store's own distance setting); a
        :class:`~mem0_hygiene.errors.ConfigError` naming the setting when it cannot be known."""
        return score_scale(self.provider, self._scale_source())

    def cosine(self, score: float) -> float:
        """The provider's search score for this store as a cosine similarity."""
        return self.score_scale().cosine(score)

    def _scale_source(self) -> Any:
        """What :func:`~mem0_hygiene.stores.scores.score_scale` reads the distance from (mem0's store's shape)."""
        return None

    def holds_text(self, text: str) -> list[str]:
        """Where the store still keeps ``text`` in its raw data (files, or a table by query): [] when nowhere.
        Used to verify an erasure."""
        needle = text.encode("utf-8")
        return [path for path in self.raw_files() if _file_holds(path, needle)]

    def raw_files(self) -> list[str]:
        """The files this store's data is kept in ([] for a server)."""
        return []

    # -- snapshots -------------------------------------------------------------------------------
    @abstractmethod
    def snapshot(self, dest: str) -> Snapshot:
        """Take a consistent copy of the collection into the new folder ``dest`` (it must not exist), verified
        against the store; :class:`~mem0_hygiene.errors.BackupError` when it cannot be."""

    @abstractmethod
    def restore(self, snapshot: Snapshot) -> Snapshot:
        """Put the collection back as ``snapshot`` holds it, verified by count and checksum; the app must not be
        writing meanwhile. Returns what the store now holds."""

    def verify_against(self, snapshot: Snapshot, what: str) -> Snapshot:
        """What the store holds now, checked equal to ``snapshot`` (else :class:`BackupError` naming ``what``)."""
        count, digest = self.checksum()
        if (count, digest) != (snapshot.count, snapshot.checksum):
            raise BackupError(
                f"{what}: the {self.provider} store {self.where} (collection {self.collection!r}) holds {count} "
                f"points (checksum {digest[:12]}), the snapshot {snapshot.count} ({snapshot.checksum[:12]})"
            )
        return Snapshot(self.provider, self.collection, count, digest, snapshot.path)

    # -- describing and closing ------------------------------------------------------------------
    def describe(self) -> str:
        return f"{self.provider} {self.where} (collection {self.collection})"

    def close(self) -> None:  # noqa: B027 - most stores hold nothing open
        """Release what this object opened (nothing by default)."""

    held = False
    """Kept open by :func:`~mem0_hygiene.stores.vector.held` for a whole operation: a ``with`` block of one of its
    steps leaves it open."""

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.held:
            self.close()


def new_snapshot_folder(dest: str) -> str:
    """Create the snapshot folder ``dest``, which must not exist yet."""
    if os.path.exists(dest):
        raise BackupError(f"{dest} already exists: a snapshot goes into a new folder; pass another path")
    os.makedirs(dest)
    return dest


def _file_holds(path: str, needle: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return needle in fh.read()
    except OSError:
        return False
