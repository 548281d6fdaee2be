"""``mem0-hygiene export OUT`` / :func:`export`: every memory of a deployment (its vector-store point, ledger row,
chain links and confirmations, optionally its vector) and mem0's history, written as the portable JSON Lines
format of :mod:`mem0_hygiene.stores.portable` (the format is documented there, field by field).

Streamed: the points are read a page at a time through the provider seam, their ledger rows looked up per
page, and the lines sorted by id in a temporary SQLite file, so memory stays flat whatever the store's size.
Credentials are redacted (:func:`~mem0_hygiene.scan.secrets.redact_secrets`) unless ``include_secrets``.
Nothing in the deployment is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..display.tables import Line, LinesView
from ..display.text import human_size, plural
from ..progress import report
from ..scan.secrets import redact_secrets
from ..stores.ledger import COLUMNS, Ledger, LedgerRow, open_ledger, row_from
from ..stores.locations import redact_url
from ..stores.portable import HISTORY_COLUMNS, SortedLines, Written, dumps, history_path, write_lines
from ..stores.vector import VectorStore, for_target
from ..target import Target, resolve
from ..timeutil import to_iso

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
PAGE = 1000
_LEDGER_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM memories"


@dataclass(frozen=True)
class ExportResult(LinesView):
    """What ``export`` wrote.

    Fields:
        path, history_path: the two files.
        records: memory lines (``points`` of them vector-store points, ``ledger_rows`` with a ledger row).
        history: history lines.
        with_vectors: the lines carry vectors.
        secrets: "redacted" or "included"; ``redactions``: how many values had a credential replaced.
        sha256: the memories file's trailer checksum; size: both files' bytes.
    """

    path: str
    history_path: str
    records: int
    points: int
    ledger_rows: int
    history: int
    with_vectors: bool
    secrets: str
    redactions: int
    sha256: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "history_path": self.history_path,
            "records": self.records,
            "points": self.points,
            "ledger_rows": self.ledger_rows,
            "history": self.history,
            "with_vectors": self.with_vectors,
            "secrets": self.secrets,
            "redactions": self.redactions,
            "sha256": self.sha256,
            "size": self.size,
        }

    def _lines(self) -> list[Line]:
        out: list[Line] = [
            [
                (f"Exported {plural(self.records, 'memory', 'memories')} to ", ""),
                (self.path, "bold"),
                (f" ({self.points} point(s), {self.ledger_rows} ledger row(s)", ""),
                (", with vectors" if self.with_vectors else "", ""),
                (f"; {human_size(self.size)})", ""),
            ],
            [(f"  mem0's history: {self.history} row(s) in ", ""), (self.history_path, "bold")],
            [(f"  checksum sha256 {self.sha256[:16]}... in the trailer", "")],
        ]
        if self.secrets == "redacted":
            out.append([(f"  credentials redacted: {self.redactions} value(s) (--include-secrets keeps them)", "")])
        else:
            out.append([("  credentials included as stored: keep the file as safe as the store", "bold yellow")])
        return out


class Redactor:
    """Credentials replaced in text (or kept, with ``include``), counting the values changed."""

    def __init__(self, include: bool) -> None:
        self.include = include
        self.count = 0

    def text(self, value: Any) -> Any:
        if self.include or not isinstance(value, str) or not value:
            return value
        clean, kinds = redact_secrets(value)
        if kinds:
            self.count += 1
        return clean


def embedder_facts(target: Target, dims: int | None) -> dict[str, Any]:
    """The configured embedder (provider, model) and the vectors' length, for the header."""
    conf = dict(target.mem0_config.get("embedder") or {})
    inner = dict(conf.get("config") or {})
    return {
        "provider": conf.get("provider") or "openai",
        "model": inner.get("model"),
        "dims": dims or inner.get("embedding_dims") or None,
    }


def source_facts(target: Target, store: VectorStore) -> dict[str, Any]:
    """Where the export came from, for people (no user, password or query string)."""
    ledger = target.ledger_path
    return {
        "provider": target.provider,
        "collection": target.collection,
        "where": redact_url(store.where) if "://" in store.where else store.where,
        "ledger": redact_url(ledger) if "://" in ledger else ledger,
    }


def memory_record(
    point: dict[str, Any] | None,
    memory_id: str,
    row: LedgerRow | None,
    supersedes: list[str],
    confirmations: list[tuple[str, str]],
    now: datetime,
    redactor: Redactor,
) -> dict[str, Any]:
    """One memory line (see :mod:`mem0_hygiene.stores.portable`)."""
    payload = dict((point or {}).get("payload") or {})
    text = payload.pop("data", None)
    scope = {k: payload.pop(k) for k in SCOPE_KEYS if k in payload}
    clean = redactor.text(text)
    if clean != text and "hash" in payload:
        payload["hash"] = hashlib.md5(str(clean).encode("utf-8")).hexdigest()  # noqa: S324 - mem0's own hash
    metadata = {k: redactor.text(v) for k, v in payload.items()}
    record: dict[str, Any] = {
        "id": memory_id,
        "text": clean,
        "scope": scope,
        "metadata": metadata,
        "point": point is not None,
        "ledger": None,
        "state": "untracked",
        "supersedes": sorted(supersedes),
        "confirmations": [list(c) for c in confirmations],
    }
    if row is not None:
        facts = {c: getattr(row, c) for c in COLUMNS if c != "memory_id"}
        for key in ("source", "invalid_reason"):
            facts[key] = redactor.text(facts[key])
        record["ledger"] = facts
        record["state"] = row.state(now)
    if point is not None and "vector" in point:
        vector = point.get("vector")
        record["vector"] = [float(x) for x in vector] if vector is not None else None
    return record


class _LedgerReader:
    """The ledger's rows, confirmations and back links for a page of ids (nothing when there is no ledger)."""

    def __init__(self, ledger: Ledger | None) -> None:
        self.ledger = ledger

    def for_ids(self, ids: list[str]) -> tuple[dict[str, LedgerRow], dict[str, list[str]], dict[str, Any]]:
        if self.ledger is None or not ids:
            return {}, {}, {}
        rows = self.ledger.get_many(ids)
        back: dict[str, list[str]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = f"SELECT memory_id, superseded_by FROM memories WHERE superseded_by IN ({','.join('?' * len(chunk))})"
            for old, new in self.ledger.query(sql, chunk):
                back.setdefault(str(new), []).append(str(old))
        return rows, back, self.ledger.confirmations(ids)

    def pages(self) -> Iterator[list[LedgerRow]]:
        """Every row, in pages by id (keyset: never the whole table at once)."""
        if self.ledger is None:
            return
        last = ""
        while True:
            found = self.ledger.query(f"{_LEDGER_SELECT} WHERE memory_id > ? ORDER BY memory_id LIMIT {PAGE}", (last,))
            if not found:
                return
            rows = [row_from(r) for r in found]
            yield rows
            last = rows[-1].memory_id


@contextlib.contextmanager
def _ledger_of(target: Target) -> Iterator[Ledger | None]:
    """The deployment's ledger to read: the live drop-in's own, or the configured one opened read-only (None when
    there is none yet)."""
    own = getattr(target.memory, "ledger", None)
    if own is not None:
        target.memory.flush()
        yield own
        return
    path = target.ledger_path
    if path != ":memory:" and ("://" in path or os.path.isfile(path)):
        ledger = open_ledger(path, readonly=True)
        try:
            yield ledger
        finally:
            ledger.close()
        return
    yield None


def history_lines(path: str, redactor: Redactor) -> Iterator[str]:
    """mem0's history rows as lines, ordered by memory id and time (none when history.db is not there)."""
    if not os.path.isfile(path):
        return
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone()
        if not has:
            return
        cols = ", ".join(HISTORY_COLUMNS)
        cursor = conn.execute(f"SELECT {cols} FROM history ORDER BY {cols}")
        for values in cursor:
            row = dict(zip(HISTORY_COLUMNS, values))
            row["old_memory"] = redactor.text(row["old_memory"])
            row["new_memory"] = redactor.text(row["new_memory"])
            yield dumps(row)
    finally:
        conn.close()


def export(target: Any, out: str, *, with_vectors: bool = False, include_secrets: bool = False) -> ExportResult:
    """Write every memory of ``target`` to ``out`` and mem0's history beside it
    (:func:`~mem0_hygiene.stores.portable.history_path`), in the portable format. ``with_vectors``: the lines
    carry the stored vectors (needed to import without re-embedding). ``include_secrets``: credentials stay as
    stored (by default they are redacted). Reads only; the files appear whole or not at all."""
    tgt = resolve(target)
    out = os.path.abspath(out)
    redactor = Redactor(include_secrets)
    now = tgt.now()
    dims: int | None = None
    points = ledger_rows = 0
    with for_target(tgt, action="export") as store, _ledger_of(tgt) as ledger:
        reader = _LedgerReader(ledger)
        with SortedLines(os.path.dirname(out)) as lines:
            total = store.count() if store.exists() else 0
            report("reading the memories", 0, total)
            if store.exists():
                for page in store.pages(PAGE, with_vectors=with_vectors):
                    ids = [str(p["id"]) for p in page]
                    rows, back, confirmed = reader.for_ids(ids)
                    batch = []
                    for p in page:
                        pid = str(p["id"])
                        if with_vectors and dims is None and p.get("vector") is not None:
                            dims = len(p["vector"])
                        rec = memory_record(
                            p, pid, rows.get(pid), back.get(pid, []), confirmed.get(pid, []), now, redactor
                        )
                        batch.append((pid, dumps(rec)))
                    lines.add(batch)
                    points += len(page)
                    ledger_rows += len(rows)
                    report("reading the memories", points, total)
            for rows_page in reader.pages():  # ledger rows whose point is gone: tombstones and lost points
                alone = set(lines.missing([r.memory_id for r in rows_page]))
                if not alone:
                    continue
                only = [r for r in rows_page if r.memory_id in alone]
                _rows, back, confirmed = reader.for_ids([r.memory_id for r in only])
                lines.add(
                    (
                        r.memory_id,
                        dumps(
                            memory_record(
                                None,
                                r.memory_id,
                                r,
                                back.get(r.memory_id, []),
                                confirmed.get(r.memory_id, []),
                                now,
                                redactor,
                            )
                        ),
                    )
                    for r in only
                )
                ledger_rows += len(only)
            records = len(lines)
            header: dict[str, Any] = {
                "exported_at": to_iso(now),
                "source": source_facts(tgt, store),
                "embedder": embedder_facts(tgt, dims),
                "secrets": "included" if include_secrets else "redacted",
                "with_vectors": with_vectors,
            }
            report("writing the export", 0, records)
            hist_path = history_path(out)
            hist = write_lines(
                hist_path,
                {**header, "kind": "history"},
                history_lines(tgt.history_path, redactor),
            )
            written: Written = write_lines(
                out,
                {
                    **header,
                    "kind": "memories",
                    "counts": {"records": records, "points": points, "ledger_rows": ledger_rows},
                    "history": {"file": os.path.basename(hist_path), "records": hist.count, "sha256": hist.sha256},
                },
                lines.lines(),
            )
            report("writing the export", records, records)
    return ExportResult(
        path=written.path,
        history_path=hist.path,
        records=written.count,
        points=points,
        ledger_rows=ledger_rows,
        history=hist.count,
        with_vectors=with_vectors,
        secrets=str(header["secrets"]),
        redactions=redactor.count,
        sha256=written.sha256,
        size=written.size + hist.size,
    )
