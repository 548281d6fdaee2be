"""``mem0-hygiene import IN`` / :func:`import_`: a portable export (:mod:`mem0_hygiene.stores.portable`) written
into a deployment's stores, whichever supported vector store it uses.

Both files are checked whole first (header, every line, the trailer's count and sha256, the two files belonging
together), then the target must be empty (no points, ledger rows or history rows), or hold only what an
interrupted import of this same file wrote (its points, whose ids the file holds; history and ledger each
written whole or not at all): a rerun then finishes it without duplicates. The points go in through mem0's own
vector store (``insert(vectors, payloads, ids)``: ids kept), with the file's vectors when it has them and their
length is the target's, else the text embedded by the target's embedder; mem0's history rows go into
history.db in one transaction; the ledger rows (states, chains, tombstones) and confirmations go into the
ledger in one transaction, last. Verified after by the count and checksum of the target's points.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..display.tables import Line, LinesView
from ..errors import ConfigError, HygieneError, LedgerError
from ..progress import report
from ..stores.embedder_record import configured_embedder, record_embedder
from ..stores.ledger import COLUMNS, Ledger, LedgerRow, open_ledger
from ..stores.ledger.dialect import insert
from ..stores.ledger.schema import CONFIRMATIONS
from ..stores.portable import HISTORY_COLUMNS, PortableFile, PortableFileError, history_path, open_checked
from ..stores.vector import VectorStore, for_target, from_mem0, payload_checksum
from ..target import Target, resolve
from ..timeutil import to_iso

BATCH = 1000


class ImportRefused(ConfigError):
    """The target of an import holds data this import did not write; the message says what and what to do."""


@dataclass(frozen=True)
class ImportResult(LinesView):
    """What ``import`` did (or, with ``dry_run``, would do).

    Fields:
        path: the memories file; destination: the target's vector store, described.
        records, points, ledger_rows, history: what the file holds.
        inserted: points written now (``resumed``: points an interrupted import had written already).
        embedded: points whose vector was computed by the target's embedder (none in the file, or another length).
        history_written, ledger_written: rows written now.
        checksum: the target's points' sha256 after, equal to the file's (verified); dry_run: nothing written.
    """

    path: str
    destination: str
    records: int
    points: int
    ledger_rows: int
    history: int
    inserted: int = 0
    resumed: int = 0
    embedded: int = 0
    history_written: int = 0
    ledger_written: int = 0
    checksum: str = ""
    dry_run: bool = False
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "destination": self.destination,
            "dry_run": self.dry_run,
            "records": self.records,
            "points": self.points,
            "ledger_rows": self.ledger_rows,
            "history": self.history,
            "inserted": self.inserted,
            "resumed": self.resumed,
            "embedded": self.embedded,
            "history_written": self.history_written,
            "ledger_written": self.ledger_written,
            "verified": bool(self.checksum) and not self.dry_run,
            "checksum": self.checksum,
            "notes": list(self.notes),
        }

    def _lines(self) -> list[Line]:
        if self.dry_run:
            return [
                [("dry run: would import ", ""), (self.path, "bold"), (" into ", ""), (self.destination, "bold")],
                [
                    (
                        f"  {self.points} point(s), {self.ledger_rows} ledger row(s), {self.history} history row(s)"
                        + (
                            f"; {self.resumed} point(s) already there from an interrupted import"
                            if self.resumed
                            else ""
                        ),
                        "",
                    )
                ],
            ]
        out: list[Line] = [
            [("Imported ", ""), (self.path, "bold"), (" into ", ""), (self.destination, "bold")],
            [
                (
                    f"  {self.inserted} point(s) written"
                    + (f" ({self.embedded} embedded by the target's embedder)" if self.embedded else "")
                    + (f", {self.resumed} already there from an interrupted import" if self.resumed else "")
                    + f"; {self.ledger_written} ledger row(s); {self.history_written} history row(s)",
                    "",
                )
            ],
        ]
        if self.checksum:
            out.append(
                [
                    (f"  {self.points} point(s), checksum sha256 {self.checksum[:16]}... ", ""),
                    ("verified", "bold green"),
                ]
            )
        out += [[(f"  note: {n}", "")] for n in self.notes]
        return out


@dataclass(frozen=True)
class Checked:
    """Both files of an export, checked whole."""

    memories: PortableFile
    history: PortableFile

    @property
    def with_vectors(self) -> bool:
        return bool(self.memories.header.get("with_vectors"))

    @property
    def dims(self) -> int | None:
        dims = (self.memories.header.get("embedder") or {}).get("dims")
        return int(dims) if dims else None

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.memories.header.get("counts") or {})


def check_files(src: str) -> Checked:
    """The export at ``src`` and its history file, each checked whole, and checked to be one export's."""
    memories = open_checked(src, "memories")
    history = open_checked(history_path(src), "history")
    linked = memories.header.get("history") or {}
    if linked.get("sha256") != history.sha256 or linked.get("records") != history.count:
        raise PortableFileError(
            f"{history.path} is not the history file exported with {src} (its checksum differs from the one "
            "the memories file names); put the two files of one export side by side"
        )
    return Checked(memories, history)


def history_rows(path: str) -> int:
    import os
    import sqlite3

    if not os.path.isfile(path):
        return 0
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone():
            return 0
        return int(conn.execute("SELECT count(*) FROM history").fetchone()[0])
    finally:
        conn.close()


def _ledger_count(ledger: Ledger | None) -> int:
    return int(ledger.query("SELECT count(*) FROM memories")[0][0]) if ledger is not None else 0


def present_ids(store: VectorStore, checked: Checked, destination: str) -> set[str]:
    """The ids of the points the target holds already: every one must be a point of the file (an interrupted
    import of it), else :class:`ImportRefused`."""
    if not store.exists() or store.count() == 0:
        return set()
    file_ids = {r["id"] for r in checked.memories.records() if r.get("point")}
    present: set[str] = set()
    for page in store.pages():
        for p in page:
            pid = str(p["id"])
            if pid not in file_ids:
                raise ImportRefused(
                    f"{destination} already holds memories that are not in {checked.memories.path} (e.g. {pid}); "
                    "import into an empty store: another collection_name, path or database in the config"
                )
            present.add(pid)
    return present


def check_rest(checked: Checked, ledger_rows: int, history_rows: int, destination: str, ledger_shown: str) -> None:
    """The target's ledger and history are empty, or hold exactly what this import writes (an interrupted one got
    that far; each is written in one transaction)."""
    want_ledger = int(checked.counts.get("ledger_rows", 0))
    if ledger_rows and ledger_rows != want_ledger:
        raise ImportRefused(
            f"the ledger {ledger_shown} already holds {ledger_rows} row(s); import into a deployment with an "
            "empty ledger (another hygiene.ledger_path or ledger_url)"
        )
    if history_rows and history_rows != checked.history.count:
        raise ImportRefused(
            f"the target's history.db already holds {history_rows} row(s) ({checked.history.count} in the "
            "export); import into a deployment with its own history.db (another history_db_path)"
        )


@contextlib.contextmanager
def _seam(tgt: Target, memory: Any = None) -> Iterator[VectorStore]:
    if memory is not None:
        store = from_mem0(memory.vector_store)
    else:
        store = for_target(tgt, action="import")
    with store:
        yield store


def _open_ledger_readonly(tgt: Target) -> Ledger | None:
    import os

    path = tgt.ledger_path
    if path == ":memory:" or not ("://" in path or os.path.isfile(path)):
        return None
    try:
        return open_ledger(path, readonly=True)
    except LedgerError:
        if "://" in path:  # a database or schema with no ledger yet: the import creates it
            return None
        raise


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    return {**(record.get("metadata") or {}), "data": record.get("text"), **(record.get("scope") or {})}


def import_(
    target: Any,
    src: str,
    *,
    dry_run: bool = False,
    reembed: bool = False,
    ledger: bool = True,
    verify: bool = True,
    vectors: Callable[[list[str]], dict[str, Any]] | None = None,
) -> ImportResult:
    """Import the export at ``src`` (and its history file) into ``target``'s stores. ``dry_run``: check the
    files and the target and say what would be written; nothing is. ``reembed``: every text is embedded by the
    target's embedder, whatever vectors the file holds. ``ledger=False``: the ledger rows are left to the caller
    (``migrate`` copies a SQLite ledger into PostgreSQL with ``ledger migrate``, every table). ``verify=False``:
    the caller verifies the points itself (``migrate`` compares both stores). ``vectors``: where the vectors of
    points the file carries none for come from, by id (``migrate``: its source store, which it leaves untouched;
    a vector it does not give is embedded from the text, as without ``vectors``). Raises
    :class:`~mem0_hygiene.stores.portable.PortableFileError` for a file that is not a whole export and
    :class:`ImportRefused` for a target holding other data, before anything is written."""
    tgt = resolve(target)
    checked = check_files(src)
    counts = checked.counts
    base: dict[str, Any] = {
        "path": checked.memories.path,
        "records": checked.memories.count,
        "points": int(counts.get("points", 0)),
        "ledger_rows": int(counts.get("ledger_rows", 0)),
        "history": checked.history.count,
    }
    destination = ""
    if dry_run or tgt.memory is None:
        with _seam(tgt) as store:
            destination = store.describe()
            resumed = present_ids(store, checked, destination)
        opened = _open_ledger_readonly(tgt) if ledger else None
        try:
            check_rest(checked, _ledger_count(opened), history_rows(tgt.history_path), destination, tgt.ledger_path)
        finally:
            if opened is not None:
                opened.close()
        if dry_run:
            return ImportResult(destination=destination, resumed=len(resumed), dry_run=True, **base)
    with _memory_for_import(tgt, checked, reembed) as m:
        with _seam(tgt, m) as store:
            destination = destination if tgt.memory is None else store.describe()
            present = present_ids(store, checked, destination)
            rows_there = _ledger_count(m.ledger) if ledger else 0
            check_rest(checked, rows_there, history_rows(tgt.history_path), destination, m.ledger.shown)
            inserted, embedded = _write_points(m, checked, present, reembed, vectors)
            history_written = _write_history(m, checked, tgt.history_path)
            repaired: list[str] = []
            ledger_written = _write_ledger(m.ledger, checked, repaired) if ledger else 0
            if ledger:  # which embedder made the vectors now in the store: the file's, or the target's own
                copied = checked.with_vectors and not reembed and embedded == 0
                made_by = dict(checked.memories.header.get("embedder") or {}) if copied else {}
                if not copied:
                    made_by = {**configured_embedder(tgt.mem0_config), "dims": target_dims(m)}
                record_embedder(m.ledger, made_by, to_iso(tgt.now()))
            checksum = _verify(store, checked, destination) if verify else ""
    return ImportResult(
        destination=destination,
        inserted=inserted,
        resumed=len(present),
        embedded=embedded,
        history_written=history_written,
        ledger_written=ledger_written,
        checksum=checksum,
        notes=_repair_notes(repaired),
        **base,
    )


def _repair_notes(repaired: list[str]) -> tuple[str, ...]:
    if not repaired:
        return ()
    return (
        f"{len(repaired)} ledger row(s) superseded by a memory the export has no row of (a broken chain in the "
        f"source, e.g. {repaired[0]}) were written invalidated, saying by what: they stay out of reads",
    )


def target_dims(m: Any) -> int | None:
    """The length of the vectors the target's embedder makes (None when it does not say)."""
    dims = getattr(getattr(m.embedding_model, "config", None), "embedding_dims", None)
    return int(dims) if dims else None


@contextlib.contextmanager
def _memory_for_import(tgt: Target, checked: Checked, reembed: bool = False) -> Iterator[Any]:
    """The drop-in over the target: with its real embedder unless every vector comes from the file."""
    if tgt.memory is not None:
        with tgt.memory_for("import") as m:
            yield m
        return
    real = reembed or not checked.with_vectors
    m = tgt.open_memory(for_writing_text=real, action="import", must_exist=False)
    if not real and checked.dims is not None and target_dims(m) not in (None, checked.dims):
        m.close()  # the file's vectors have another length: its texts are embedded by the target's embedder
        m = tgt.open_memory(for_writing_text=True, action="import", must_exist=False)
    try:
        yield m
    finally:
        m.close()


def _write_points(
    m: Any,
    checked: Checked,
    present: set[str],
    reembed: bool = False,
    given: Callable[[list[str]], dict[str, Any]] | None = None,
) -> tuple[int, int]:
    """Every point of the file not in ``present`` into mem0's vector store, in batches; (written, embedded).
    ``given``: the vectors of the points the file has none for, by id (see :func:`import_`)."""
    dims = target_dims(m)
    total = int(checked.counts.get("points", 0))
    done = inserted = embedded = 0
    batch: list[dict[str, Any]] = []
    report("writing the points", 0, total)

    def flush() -> None:
        nonlocal inserted, embedded
        if not batch:
            return
        vectors = []
        wanted = [] if reembed or given is None else [r["id"] for r in batch if r.get("vector") is None]
        found = given(wanted) if wanted and given is not None else {}
        for rec in batch:
            vector = None if reembed else rec.get("vector")
            if vector is None and not reembed:
                vector = found.get(rec["id"])
            if vector is None or (dims is not None and len(vector) != dims):
                vector = m.embedding_model.embed(rec.get("text") or "", "add")
                embedded += 1
            vectors.append(vector)
        m.vector_store.insert(vectors=vectors, payloads=[_payload(r) for r in batch], ids=[r["id"] for r in batch])
        inserted += len(batch)
        batch.clear()

    for rec in checked.memories.records():
        if not rec.get("point"):
            continue
        done += 1
        if rec["id"] in present:
            continue
        batch.append(rec)
        if len(batch) >= BATCH:
            flush()
            report("writing the points", done, total)
    flush()
    report("writing the points", done, total)
    return inserted, embedded


def _write_history(m: Any, checked: Checked, path: str) -> int:
    """mem0's history rows into the target's history.db, in one transaction on mem0's own connection (none when
    an interrupted import wrote them already)."""
    if not checked.history.count or history_rows(path) == checked.history.count:
        return 0
    cols = ", ".join(("id", *HISTORY_COLUMNS))
    sql = f"INSERT INTO history ({cols}) VALUES ({', '.join('?' * (len(HISTORY_COLUMNS) + 1))})"
    import uuid

    db = m.db
    written = 0
    report("writing mem0's history", 0, checked.history.count)
    with db._lock:
        conn = db.connection
        conn.execute("BEGIN")
        try:
            rows = []
            for rec in checked.history.records():
                rows.append((str(uuid.uuid4()), *(rec.get(c) for c in HISTORY_COLUMNS)))
                if len(rows) >= 1000:
                    conn.executemany(sql, rows)
                    written += len(rows)
                    rows = []
            conn.executemany(sql, rows)
            written += len(rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    report("writing mem0's history", written, checked.history.count)
    return written


def dangling(facts: dict[str, Any]) -> dict[str, Any]:
    """A row superseded by a memory the export has no row of (a broken chain in the source, which enforced no
    foreign keys): written invalidated instead, saying by what, so it stays out of reads as it was."""
    return {
        **facts,
        "superseded_by": None,
        "superseded_at": None,
        "invalid_at": facts.get("invalid_at") or facts.get("superseded_at") or facts.get("created_at"),
        "invalid_reason": facts.get("invalid_reason")
        or f"superseded by {facts['superseded_by']}, which the export holds no ledger row of",
    }


def _write_ledger(ledger: Ledger, checked: Checked, notes: list[str]) -> int:
    """Every ledger row and confirmation of the file, in one transaction (links checked at its commit), unless an
    interrupted import committed them already."""
    want = int(checked.counts.get("ledger_rows", 0))
    if not want or _ledger_count(ledger) == want:
        return 0
    rows_sql = insert("memories", COLUMNS)
    conf_sql = insert("confirmations", CONFIRMATIONS.column_names)
    written = 0
    held = {r["id"] for r in checked.memories.records() if r.get("ledger") is not None}
    report("writing the ledger", 0, want)
    with ledger.transaction() as conn:
        ledger.link_guard(conn)
        ledger.defer_links(conn)
        rows: list[tuple[Any, ...]] = []
        confirmations: list[tuple[Any, ...]] = []
        for rec in checked.memories.records():
            facts = rec.get("ledger")
            if facts is None:
                continue
            if facts.get("superseded_by") and facts["superseded_by"] not in held:
                facts = dangling(facts)  # kept out of reads, never resurrected: the link had nothing to point at
                notes.append(rec["id"])
            rows.append(LedgerRow.of(memory_id=rec["id"], **facts).as_tuple())
            confirmations += [(rec["id"], at, via) for at, via in rec.get("confirmations") or []]  # rows held
            if len(rows) >= 1000:
                conn.executemany(rows_sql, rows)
                written += len(rows)
                rows = []
        if rows:
            conn.executemany(rows_sql, rows)
            written += len(rows)
        if confirmations:
            conn.executemany(conf_sql, confirmations)
    report("writing the ledger", written, want)
    return written


def _verify(store: VectorStore, checked: Checked, destination: str) -> str:
    """The target's points' count and checksum equal the file's (as payloads); their checksum."""
    want = payload_checksum({"id": r["id"], "payload": _payload(r)} for r in checked.memories.records() if r["point"])
    got = store.checksum()
    if got != want:
        raise HygieneError(
            f"the import into {destination} does not verify: it holds {got[0]} point(s) (checksum {got[1][:12]}), "
            f"the export {want[0]} ({want[1][:12]}); run the import again into an empty store"
        )
    return got[1]
