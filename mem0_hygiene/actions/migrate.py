"""``mem0-hygiene migrate --to NEW_CONFIG`` / :func:`migrate`: every memory of a deployment copied into another
vector store (any provider of the seam), with its ledger rows and mem0's history, verified, resumable.

1. **Plan** (:func:`plan_migration`, all of ``--dry-run``): the source's points per scope and their size, its
   ledger rows and history rows; the destination must be empty (or hold this migration's own resumable state:
   its journal says so), its embedder the source's (same provider, model and vector length) unless
   ``reembed``; where the ledger goes (a SQLite ledger into a PostgreSQL ``ledger_url`` is copied by ``ledger
   migrate``, every table verified; otherwise its rows come with the import), and what a fleet must do.
2. **Export** the source into the migration's folder (:mod:`.migrate_journal`): the portable format with vectors
   and credentials as stored (:func:`~mem0_hygiene.actions.export.export`), whole or not at all.
3. **Import** it into the destination (:func:`~mem0_hygiene.actions.portable_import.import_`): points through
   mem0's ``insert`` with their ids, vectors as they are (``reembed``: every text embedded by the destination's
   embedder), history in one transaction, the ledger in one transaction; a killed import is finished by the rerun.
4. **Verify**: the same count and the same checksum over every point's id, text and payload on both stores
   (:func:`~mem0_hygiene.stores.vector.payload_checksum`), and the same top-k answers on both to a sample of
   queries (the stored vectors of sampled points; not with ``reembed``, where answers may rightly differ).
5. **Register** the source's local files (vector folder, history.db, SQLite ledger) as a copy of the new
   deployment (:mod:`mem0_hygiene.stores.copies`, kind ``migration_source``), so ``where``, the audit and
   ``forget --scrub`` know them; the source is never changed.

The journal is written before the first write and after every step; a run killed at any point leaves the
source as it was and the destination empty of our writes or resumable, and the rerun finishes without
duplicates. The result prints the config the app should use, credentials redacted.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..config_loader import for_maintenance
from ..display.tables import Line, LinesView
from ..display.text import human_size
from ..errors import CollectionNotFound, ConfigError, LedgerError
from ..progress import report, step
from ..stores.copies import copies_path_for, register_copy
from ..stores.database_url import is_database_url
from ..stores.paths import overlaps
from ..stores.vector import VectorStore, for_target, held
from ..target import Target, resolve
from ..timeutil import to_iso
from .export import embedder_facts, export
from .ledger_migrate import config_url, migrate_ledger
from .migrate_journal import (
    EXPORT,
    MigrationError,
    clear_temporaries,
    done,
    read_journal,
    remove_work,
    work_folder,
    write_journal,
)
from .portable_import import history_rows, import_

SAMPLE_QUERIES = 20
TOP_K = 5
SECRET_KEYS = ("password", "api_key", "apikey", "token", "secret")


@dataclass(frozen=True)
class MigrationPlan(LinesView):
    """What ``migrate`` will do (all of ``--dry-run``).

    Fields:
        source, destination: the two vector stores, described (no credentials).
        points, ledger_rows, history: what the source holds; scopes: points per scope ("user_id=alice", ...);
        size_bytes: the points' payloads, as JSON.
        destination_points: points the destination holds now; resuming: the step an interrupted run of this
            migration finished (None: a new one).
        source_embedder, destination_embedder: provider, model and vector length; reembed: every text is
            embedded by the destination's embedder.
        ledger_route: "ledger migrate" (SQLite into PostgreSQL, every table) or "import" (the rows with the
            points) or "none" (the source has no ledger).
        notes: what the operator must know (a fleet's replicas); problems: why it cannot run (empty: it can).
    """

    source: str
    destination: str
    points: int
    ledger_rows: int
    history: int
    scopes: dict[str, int]
    size_bytes: int
    destination_points: int
    resuming: str | None
    source_embedder: dict[str, Any]
    destination_embedder: dict[str, Any]
    reembed: bool
    ledger_route: str
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "destination": self.destination,
            "points": self.points,
            "ledger_rows": self.ledger_rows,
            "history": self.history,
            "scopes": dict(self.scopes),
            "size_bytes": self.size_bytes,
            "destination_points": self.destination_points,
            "resuming": self.resuming,
            "source_embedder": self.source_embedder,
            "destination_embedder": self.destination_embedder,
            "reembed": self.reembed,
            "ledger_route": self.ledger_route,
            "notes": list(self.notes),
            "problems": list(self.problems),
        }

    def _lines(self) -> list[Line]:
        out: list[Line] = [
            [("Migration plan: ", "bold"), (self.source, ""), (" -> ", ""), (self.destination, "")],
            [
                (
                    f"  {self.points} point(s) ({human_size(self.size_bytes)} of payloads), {self.ledger_rows} "
                    f"ledger row(s), {self.history} history row(s); ledger: {self.ledger_route}",
                    "",
                )
            ],
        ]
        shown = sorted(self.scopes.items(), key=lambda kv: (-kv[1], kv[0]))
        for scope, count in shown[:10]:
            out.append([(f"    {scope}: {count}", "")])
        if len(shown) > 10:
            out.append([(f"    ... and {len(shown) - 10} more scope(s)", "")])
        src, dst = self.source_embedder, self.destination_embedder
        out.append(
            [
                (
                    f"  embedder: {src.get('provider')} {src.get('model') or ''} {src.get('dims') or '?'}d -> "
                    f"{dst.get('provider')} {dst.get('model') or ''} {dst.get('dims') or '?'}d"
                    + ("; every text re-embedded" if self.reembed else "; vectors copied as they are"),
                    "",
                )
            ]
        )
        if self.resuming:
            out.append(
                [
                    (
                        "  already migrated: the destination holds the same points"
                        if self.resuming == "complete"
                        else f"  resuming an interrupted migration (finished: {self.resuming})",
                        "bold yellow",
                    )
                ]
            )
        else:
            out.append([(f"  destination holds {self.destination_points} point(s)", "")])
        out += [[(f"  note: {n}", "")] for n in self.notes]
        out += [[("  cannot migrate: ", "red"), (p, "red")] for p in self.problems]
        return out


@dataclass(frozen=True)
class MigrationResult(LinesView):
    """What ``migrate`` did: the plan, the verification (count, checksum, sampled queries agreeing), the copies
    registered and the config the app should use (credentials redacted)."""

    plan: MigrationPlan
    points: int
    checksum: str
    queries: int
    queries_agreeing: int
    copies: tuple[str, ...]
    config: dict[str, Any]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": self.plan.to_dict(),
            "verified": True,
            "points": self.points,
            "checksum": self.checksum,
            "queries": self.queries,
            "queries_agreeing": self.queries_agreeing,
            "copies": list(self.copies),
            "config": self.config,
            "notes": list(self.notes),
        }

    def _lines(self) -> list[Line]:
        out: list[Line] = [
            [("Migrated ", ""), (self.plan.source, "bold"), (" -> ", ""), (self.plan.destination, "bold")],
            [
                (f"  {self.points} point(s), checksum sha256 {self.checksum[:16]}... equal on both; ", ""),
                ("verified", "bold green"),
            ],
        ]
        if self.queries:
            out.append([(f"  {self.queries_agreeing} of {self.queries} sampled queries give the same top-{TOP_K}", "")])
        out += [[(f"  note: {n}", "")] for n in self.notes]
        for path in self.copies:
            out.append([("  the old store stays, registered as a copy: ", ""), (path, "bold")])
        out.append([("Use this config in the app (credentials redacted):", "bold")])
        out += [[(f"  {line}", "")] for line in json.dumps(self.config, indent=2, sort_keys=True).splitlines()]
        return out


def redacted_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with passwords in URLs and credential-named keys replaced by ``PASSWORD``; live objects (a
    clock, a client) shown by their type."""

    def clean(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: clean(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        if any(s in key.lower() for s in SECRET_KEYS) and value:
            return "PASSWORD"
        if isinstance(value, str) and "://" in value and "@" in value:
            return config_url(value)
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return f"<{type(value).__name__}>"

    return dict(clean(config))


def configured_embedder(tgt: Target) -> dict[str, Any]:
    """The deployment's embedder: provider, model and the vector length mem0 will use."""
    facts = embedder_facts(tgt, None)
    if not facts.get("dims"):
        dims = ((for_maintenance(tgt.config).get("embedder") or {}).get("config") or {}).get("embedding_dims")
        facts["dims"] = int(dims) if dims else None
    return facts


def _stored_dims(store: VectorStore) -> int | None:
    if not store.exists():
        return None
    for page in store.pages(1, with_vectors=True):
        for p in page:
            return len(p["vector"]) if p.get("vector") is not None else None
    return None


def _ledger_rows(location: str) -> int:
    if location == ":memory:" or not (is_database_url(location) or os.path.isfile(location)):
        return 0
    from ..stores.ledger import open_ledger

    try:
        ledger = open_ledger(location, readonly=True)
    except LedgerError:  # a database or schema with no ledger yet
        return 0
    try:
        return int(ledger.query("SELECT count(*) FROM memories")[0][0])
    except Exception:  # noqa: BLE001 - a PostgreSQL schema with no ledger yet
        return 0
    finally:
        ledger.close()


def _replicas_open(url: str) -> bool:
    """Whether a replica (a drop-in Memory) has the PostgreSQL ledger at ``url`` open (False when it cannot be
    asked: a ledger not created yet has no replica)."""
    from ..stores.ledger.postgres import PostgresLedger

    try:
        ledger = PostgresLedger(url, readonly=True)
    except LedgerError:
        return False
    try:
        return ledger.replicas_open()
    finally:
        ledger.close()


def ledger_route(src: Target, dst: Target) -> str:
    if src.ledger_path == ":memory:" or not (is_database_url(src.ledger_path) or os.path.isfile(src.ledger_path)):
        return "none"
    if not is_database_url(src.ledger_path) and is_database_url(dst.ledger_path):
        return "ledger migrate"
    return "import"


def _same_points(src: Target, dst: Target) -> bool:
    """Both stores hold the same points (a migration that finished, its journal removed)."""
    with for_target(src, action="migrate") as a, for_target(dst, action="migrate") as b:
        return a.exists() and b.exists() and a.checksum() == b.checksum()


def plan_migration(target: Any, to: Any, *, reembed: bool = False, scan: bool = True) -> MigrationPlan:
    """What :func:`migrate` would do, and why it cannot (``problems``); reads only. ``scan=False``: the points
    are counted, not read (:func:`migrate` takes the scopes and sizes from its export instead)."""
    src, dst = resolve(target), resolve_destination(to)
    journal = read_journal(work_folder(dst.history_path))
    scopes: dict[str, int] = {}
    points = size = 0
    with for_target(src, action="migrate") as store:
        source = store.describe()
        src_embedder = configured_embedder(src)
        stored = _stored_dims(store)
        if stored:
            src_embedder["dims"] = stored
        if store.exists() and not scan:
            points = store.count()
        elif store.exists():
            for page in store.pages():
                for p in page:
                    payload = p.get("payload") or {}
                    size += len(json.dumps(payload, default=str))
                    label = ", ".join(f"{k}={payload[k]}" for k in ("user_id", "agent_id", "run_id") if payload.get(k))
                    scopes[label or "(no scope)"] = scopes.get(label or "(no scope)", 0) + 1
                    points += 1
                report("reading the source", points, None)
    with for_target(dst, action="migrate") as store:
        destination = store.describe()
        dest_points = store.count() if store.exists() else 0
    dst_embedder = configured_embedder(dst)
    problems: list[str] = []
    notes: list[str] = []
    if destination == source and dst.ledger_path == src.ledger_path:
        problems.append("the destination is the source itself; --to must name another store")
    mine = journal is not None and journal.get("source") == source and journal.get("destination") == destination
    if journal is not None and not mine:
        problems.append(
            f"{work_folder(dst.history_path)} holds the journal of another migration ({journal.get('source')} -> "
            f"{journal.get('destination')}); finish it first (run it again), or remove that folder and the stores "
            "it wrote"
        )
    dest_rows = _ledger_rows(dst.ledger_path)
    dest_history = history_rows(dst.history_path)
    complete = False
    if not mine and (dest_points or dest_rows or dest_history):
        complete = _same_points(src, dst) and dest_rows == _ledger_rows(src.ledger_path)
    if not mine and not complete and (dest_points or dest_rows or dest_history):
        problems.append(
            f"the destination is not empty ({dest_points} point(s), {dest_rows} ledger row(s), {dest_history} "
            "history row(s)); migrate into an empty store (another collection, path, database or history_db_path)"
        )
    if reembed and not dst_embedder.get("provider"):
        problems.append("--reembed needs an embedder in the destination's config")
    if not reembed:
        same = (src_embedder.get("provider"), src_embedder.get("model")) == (
            dst_embedder.get("provider"),
            dst_embedder.get("model"),
        )
        dims_differ = bool(src_embedder.get("dims") and dst_embedder.get("dims")) and src_embedder.get(
            "dims"
        ) != dst_embedder.get("dims")
        if not same or dims_differ:
            problems.append(
                f"the destination's embedder ({dst_embedder.get('provider')} {dst_embedder.get('model') or ''}, "
                f"{dst_embedder.get('dims') or '?'} dims) is not the source's ({src_embedder.get('provider')} "
                f"{src_embedder.get('model') or ''}, {src_embedder.get('dims') or '?'} dims): the stored vectors "
                "would not match it; pass --reembed to embed every text with the destination's embedder"
            )
    route = ledger_route(src, dst)
    if is_database_url(src.ledger_path) or is_database_url(dst.ledger_path):
        notes.append(
            "a ledger on PostgreSQL is shared by replicas: stop every replica (or switch them all to the new "
            "config at once) before migrating; what they write to the old store meanwhile is not copied"
        )
    if is_database_url(src.ledger_path) and _replicas_open(src.ledger_path):
        problems.append(
            "a replica has the source's PostgreSQL ledger open (a drop-in Memory of a running app, or of this "
            "process): what it writes during the copy would be lost. Stop every replica (or close this process's "
            "Memory), then migrate; nothing was changed"
        )
    if is_database_url(src.ledger_path) and not is_database_url(dst.ledger_path):
        notes.append(
            "the source's ledger is on PostgreSQL and the destination's config names a SQLite ledger; set "
            "hygiene.ledger_url in the destination's config to keep it on PostgreSQL"
        )
    return MigrationPlan(
        source=source,
        destination=destination,
        points=points,
        ledger_rows=_ledger_rows(src.ledger_path),
        history=history_rows(src.history_path),
        scopes=scopes,
        size_bytes=size,
        destination_points=dest_points,
        resuming="complete" if complete else (str(journal["step"]) if mine and journal else None),
        source_embedder=src_embedder,
        destination_embedder=dst_embedder,
        reembed=reembed,
        ledger_route=route,
        notes=tuple(notes),
        problems=tuple(problems),
    )


def migrate(
    target: Any, to: Any, *, dry_run: bool = False, reembed: bool = False, sample: int = SAMPLE_QUERIES
) -> MigrationPlan | MigrationResult:
    """Copy every memory of ``target`` into the stores of ``to`` (a config, as ``target``), verified; see the
    module's docstring. ``dry_run``: only the plan. ``reembed``: every text embedded by ``to``'s embedder.
    ``sample``: how many queries are compared on both stores. Raises :class:`~mem0_hygiene.errors.ConfigError`
    naming each problem of the plan before anything is written, and :class:`MigrationError` when the copy does
    not verify (the source is untouched; the journal stays for a rerun)."""
    src, dst = resolve(target), resolve_destination(to)
    # the source's folder opened once for every step that reads it (not when the destination is in the same folder:
    # mem0 opens that one to write it)
    holding = held(src, action="migrate") if not _same_folder(src, dst) else contextlib.nullcontext()
    with holding:
        return _migrate(src, dst, dry_run=dry_run, reembed=reembed, sample=sample)


def resolve_destination(to: Any) -> Target:
    """The migration's destination, resolved; a local Qdrant folder that holds other collections but not the one
    named is refused as a destination, saying so (a new collection beside others in one folder is not supported:
    the folder would be registered as the source's copy, and removed with it)."""
    try:
        return resolve(to)
    except CollectionNotFound as exc:
        raise ConfigError(
            f"cannot migrate into collection {exc.collection!r}: its local Qdrant folder already holds "
            f"{', '.join(repr(n) for n in exc.present)}. Give the destination a folder of its own "
            "(vector_store.config.path in the new config); a new collection beside others in one folder is not "
            "supported"
        ) from exc


def _same_folder(src: Target, dst: Target) -> bool:
    return bool(src.vector_path and dst.vector_path) and os.path.abspath(str(src.vector_path)) == os.path.abspath(
        str(dst.vector_path)
    )


READS_BY_ID = ("qdrant", "pgvector", "chroma")
"""The source providers whose points the seam reads by id (FAISS: only whole): a migration without re-embedding
copies their vectors from the source store, by id, instead of through the export file (JSON numbers: about half the
time of a migration at 10k points)."""


def _migrate(src: Target, dst: Target, *, dry_run: bool, reembed: bool, sample: int) -> MigrationPlan | MigrationResult:
    plan = plan_migration(src, dst, reembed=reembed, scan=dry_run)  # resolved once, by migrate()
    if dry_run:
        return plan
    if plan.problems:
        raise ConfigError("cannot migrate: " + "; ".join(plan.problems))
    folder = work_folder(dst.history_path)
    doc = read_journal(folder)
    if plan.resuming == "complete":  # finished before: verified again, nothing written but the registry
        doc = {"step": "registered"}
    elif doc is None:
        doc = write_journal(
            folder,
            {"source": plan.source, "destination": plan.destination, "reembed": reembed, "route": plan.ledger_route},
            "planned",
        )
    clear_temporaries(folder)
    path = os.path.join(folder, EXPORT)
    by_id = not reembed and src.provider in READS_BY_ID and not _same_folder(src, dst)
    if not done(doc, "exported"):
        export(src, path, with_vectors=not reembed and not by_id, include_secrets=True)
        doc = write_journal(folder, doc, "exported")
    if os.path.isfile(path):  # the scopes and sizes of what is moved, from the export (no second read)
        plan = _scopes_from(path, plan)
    if not done(doc, "imported"):
        with for_target(src, action="migrate") as source:  # the vectors the export left out, read by id
            imported = import_(
                dst,
                path,
                reembed=reembed,
                ledger=plan.ledger_route == "import",
                verify=False,
                vectors=_vectors_of(source) if by_id else None,
            )
        doc = write_journal(folder, {**doc, "notes": list(imported.notes)}, "imported")
    if not done(doc, "ledger"):
        if plan.ledger_route == "ledger migrate" and _ledger_rows(dst.ledger_path) != plan.ledger_rows:
            with step("copying the ledger into PostgreSQL"):
                migrate_ledger(src, dst.ledger_path)
        _record(dst, plan.destination_embedder if reembed else plan.source_embedder)
        doc = write_journal(folder, doc, "ledger")
    points, checksum, queries, agreeing = verify(src, dst, reembed=reembed, sample=sample)
    if not done(doc, "verified"):
        doc = write_journal(folder, doc, "verified")
    copies = register_source(src, dst, plan)
    if not done(doc, "registered"):
        doc = write_journal(folder, doc, "registered")
    if os.path.isdir(folder):
        with step("removing the migration's working copy"):
            remove_work(folder)
    return MigrationResult(
        plan=plan,
        points=points,
        checksum=checksum,
        queries=queries,
        queries_agreeing=agreeing,
        copies=copies,
        config=redacted_config(dst.config),
        notes=plan.notes + tuple(str(n) for n in doc.get("notes") or ()),
    )


def _vectors_of(store: VectorStore) -> Callable[[list[str]], dict[str, Any]]:
    def vectors(ids: list[str]) -> dict[str, Any]:
        return {pid: p.get("vector") for pid, p in store.get(ids, with_vectors=True).items()}

    return vectors


def _scopes_from(path: str, plan: MigrationPlan) -> MigrationPlan:
    from dataclasses import replace

    from ..stores.portable import open_checked

    scopes: dict[str, int] = {}
    size = 0
    for rec in open_checked(path, "memories").records():
        if not rec.get("point"):
            continue
        scope = rec.get("scope") or {}
        label = ", ".join(f"{k}={scope[k]}" for k in ("user_id", "agent_id", "run_id") if scope.get(k)) or "(no scope)"
        scopes[label] = scopes.get(label, 0) + 1
        size += len(json.dumps({**(rec.get("metadata") or {}), "data": rec.get("text"), **scope}, default=str))
    return replace(plan, scopes=scopes, size_bytes=size)


def _record(dst: Target, made_by: dict[str, Any]) -> None:
    """Record in the destination's ledger which embedder made its vectors (the audit's EMBEDDER_MISMATCH)."""
    from ..stores.embedder_record import record_embedder
    from ..stores.ledger import open_ledger

    ledger = open_ledger(dst.ledger_path)
    try:
        record_embedder(ledger, made_by, to_iso(dst.now()))
    finally:
        ledger.close()


def verify(src: Target, dst: Target, *, reembed: bool, sample: int) -> tuple[int, str, int, int]:
    """Count and checksum equal on both stores (else :class:`MigrationError`), then ``sample`` queries' top-k
    ids compared; (points, checksum, queries, queries agreeing)."""
    with step("verifying: count and checksum of both stores"):
        with _mem0_store(src) as a, _seam_of(a, src) as store:
            want = store.checksum()
            vectors = [] if reembed else _sample_vectors(store, sample)
            answers = [_top(a, v) for v in vectors]
        with _mem0_store(dst) as b, _seam_of(b, dst) as store:
            got = store.checksum()
            again = [_top(b, v) for v in vectors]
            stored = store.get({i for ids in answers + again for i in ids}, with_vectors=True) if vectors else {}
    if got != want:
        raise MigrationError(
            f"the destination holds {got[0]} point(s) (checksum {got[1][:12]}), the source {want[0]} "
            f"({want[1][:12]}): the copy does not verify. The source is untouched; run the migration again"
        )
    if not vectors:
        return got[0], got[1], 0, 0
    agreeing = sum(
        1 for v, x, y in zip(vectors, answers, again) if x == y or _closeness(v, x, stored) == _closeness(v, y, stored)
    )
    if agreeing != len(vectors):
        raise MigrationError(
            f"{len(vectors) - agreeing} of {len(vectors)} sampled queries give other top-{TOP_K} answers on the "
            "destination than on the source; the source is untouched: check the destination's distance setting"
        )
    return got[0], got[1], len(vectors), agreeing


def _sample_vectors(store: VectorStore, sample: int) -> list[list[float]]:
    out: list[list[float]] = []
    if sample <= 0 or not store.exists():
        return out
    for page in store.pages(max(sample, 1), with_vectors=True):
        out += [[float(x) for x in p["vector"]] for p in page if p.get("vector") is not None]  # pgvector: ints too
        break
    return out[:sample]


def _top(store: Any, vector: list[float]) -> frozenset[str]:
    return frozenset(str(r.id) for r in store.search(query="", vectors=vector, top_k=TOP_K, filters=None))


def _closeness(query: list[float], ids: frozenset[str], stored: dict[str, Any]) -> list[float]:
    """The answers' cosine similarities to the query, sorted and rounded: two answers differing only among
    points tied at the k-th place are the same answer."""
    import math

    def cosine(a: list[float], b: list[float]) -> float:
        na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
        return sum(x * y for x, y in zip(a, b)) / (na * nb) if na and nb else 0.0

    return sorted(
        (round(cosine(query, list(stored[i]["vector"])), 5) for i in ids if stored.get(i, {}).get("vector")),
        reverse=True,
    )


@contextlib.contextmanager
def _seam_of(mem0_store: Any, tgt: Target) -> Iterator[VectorStore]:
    """The seam over mem0's open store (one opening of a local folder for the checksum and the searches), or the
    target's own when the seam cannot read through that object."""
    from ..stores.vector import UnsupportedVectorStore, from_mem0

    try:
        store = from_mem0(mem0_store)
    except UnsupportedVectorStore:
        store = for_target(tgt, action="migrate")
    with store:
        yield store


@contextlib.contextmanager
def _mem0_store(tgt: Target) -> Iterator[Any]:
    """mem0's own vector-store object for the deployment (the one its ``Memory`` would build), closed after."""
    from mem0.utils.factory import VectorStoreFactory

    from ..config import build_mem0_config, split_config
    from ..stores.vector import held_store
    from ..stores.vector.qdrant_local import QdrantLocalStore

    built = build_mem0_config(split_config(tgt.config)[0])
    holding = held_store(tgt)
    borrowed = holding.live_client() if isinstance(holding, QdrantLocalStore) else None
    if borrowed is not None:  # the folder the migration keeps open: through its client, left open after
        built.vector_store.config.client = borrowed
    with warnings.catch_warnings():  # over a borrowed local client mem0 asks for payload indexes, which do nothing
        warnings.filterwarnings("ignore", message="Payload indexes have no effect in the local Qdrant")
        store = VectorStoreFactory.create(built.vector_store.provider, built.vector_store.config)
    try:
        yield store
    finally:
        client = getattr(store, "client", None)
        if client is not None and client is not borrowed and type(client).__module__.startswith("qdrant_client"):
            client.close()
        pool = getattr(store, "connection_pool", None)
        if pool is not None and hasattr(pool, "close"):
            with contextlib.suppress(Exception):
                pool.close()


def live_paths(tgt: Target) -> list[str]:
    """The deployment's own local store paths: its vector-store folder(s), history.db and a SQLite ledger."""
    out = [os.path.expanduser(tgt.vector_path) if tgt.vector_path else "", tgt.history_path]
    if not is_database_url(tgt.ledger_path):
        out.append(tgt.ledger_path)
    return [p for p in out if p and p != ":memory:"]


def register_source(src: Target, dst: Target, plan: MigrationPlan) -> tuple[str, ...]:
    """The source's local files registered as a copy in the destination's registry (idempotent)."""
    registry = copies_path_for(dst.ledger_path, dst.history_path)
    when = to_iso(dst.now())
    note = f"the store migrated from, to {plan.destination}; remove it with `mem0-hygiene migrate --remove-source`"
    out: list[str] = []
    candidates = [
        ("vector_store", src.vector_path if src.provider in ("qdrant", "chroma", "faiss") else None),
        ("history_db", src.history_path),
        ("ledger", None if is_database_url(src.ledger_path) else src.ledger_path),
    ]
    live = live_paths(dst)
    for role, path in candidates:
        if path and path != ":memory:" and os.path.exists(path):
            if any(overlaps(path, own) for own in live):  # the old collection shares the new store's folder
                continue  # never a copy: removing it would remove the live store
            problem = register_copy(registry, "migration_source", path, roles=(role,), created_at=when, note=note)
            if not problem:
                out.append(os.path.abspath(path))
    return tuple(out)


__all__ = ["MigrationPlan", "MigrationResult", "migrate", "plan_migration"]
