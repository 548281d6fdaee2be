"""A snapshot kept as rows: ``rows.jsonl`` (one point a line: id, vector, payload) beside the manifest, for stores
read through a client (pgvector, a Qdrant server) rather than copied as files. :func:`erase_rows` removes memories
from one (an erasure reaching a backup set), rewritten atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from ...errors import BackupError
from ..durable import write_file, write_json
from .base import MANIFEST, Point, Snapshot, payload_checksum

ROWS_FILE = "rows.jsonl"


def write_rows(dest: str, provider: str, collection: str, pages: Iterable[list[Point]]) -> Snapshot:
    """Write every point of ``pages`` (with vectors) to ``dest/rows.jsonl``, fsynced, and the manifest."""
    kept: list[Point] = []
    with open(os.path.join(dest, ROWS_FILE), "w", encoding="utf-8") as fh:
        for page in pages:
            for p in page:
                fh.write(json.dumps({"id": p["id"], "vector": p.get("vector"), "payload": p.get("payload")}) + "\n")
                kept.append({"id": p["id"], "payload": p.get("payload")})
        fh.flush()
        os.fsync(fh.fileno())
    count, digest = payload_checksum(kept)
    snap = Snapshot(provider, collection, count, digest, dest)
    snap.write()
    return snap


def read_rows(snapshot: Snapshot, page_size: int = 1000) -> Iterator[list[Point]]:
    """The points of a rows snapshot, in pages, checked against its manifest when the last page is read."""
    where = os.path.join(snapshot.path, ROWS_FILE)
    kept: list[Point] = []
    page: list[Point] = []
    try:
        with open(where, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                page.append(row)
                kept.append({"id": row["id"], "payload": row.get("payload")})
                if len(page) >= page_size:
                    yield page
                    page = []
    except (OSError, ValueError, KeyError) as exc:
        raise BackupError(f"{where} cannot be read ({exc}): restore from another backup set") from exc
    if page:
        yield page
    if payload_checksum(kept) != (snapshot.count, snapshot.checksum):
        raise BackupError(f"{where} does not match its manifest (damaged?): restore from another backup set")


def erase_rows(path: str, ids: Iterable[str]) -> tuple[int, Snapshot]:
    """Remove the rows of these ids from the rows snapshot in folder ``path`` (a backup set's copy of a pgvector
    table): ``rows.jsonl`` rewritten without them (temp file, fsync, rename), then the manifest rewritten to its new
    count and checksum whenever they differ, so a run killed between the two is finished by the next. Returns the
    rows removed and the snapshot as it is now; :class:`BackupError` when the file cannot be read."""
    snap = Snapshot.read(path)
    wanted = {str(i) for i in ids}
    where = os.path.join(path, ROWS_FILE)
    lines: list[str] = []
    kept: list[Point] = []
    removed = 0
    try:
        with open(where, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if str(row["id"]) in wanted:
                    removed += 1
                    continue
                lines.append(line if line.endswith("\n") else line + "\n")
                kept.append({"id": row["id"], "payload": row.get("payload")})
    except (OSError, ValueError, KeyError) as exc:
        raise BackupError(f"{where} cannot be read ({exc}): the rows of the erased memories were not removed") from exc
    if removed:
        write_file(where, "".join(lines))
    count, digest = payload_checksum(kept)
    now = Snapshot(snap.provider, snap.collection, count, digest, path)
    if (count, digest) != (snap.count, snap.checksum):
        write_snapshot_manifest(now)
    return removed, now


def write_snapshot_manifest(snap: Snapshot) -> None:
    """Rewrite a snapshot folder's manifest (:data:`~.base.MANIFEST`) durably: temp file, fsync, rename."""
    write_json(
        os.path.join(snap.path, MANIFEST),
        {"provider": snap.provider, "collection": snap.collection, "count": snap.count, "checksum": snap.checksum},
        sort_keys=True,
    )
