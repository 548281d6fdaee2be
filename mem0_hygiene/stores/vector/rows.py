"""A snapshot kept as rows: ``rows.jsonl`` (one point a line: id, vector, payload) beside the manifest, for stores
read through a client (pgvector, a Qdrant server) rather than copied as files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from ...errors import BackupError
from .base import Point, Snapshot, payload_checksum

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
