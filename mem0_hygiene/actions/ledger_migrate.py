"""Copying a SQLite ledger into PostgreSQL (``mem0-hygiene ledger migrate --to postgresql://...``): every row
of every table of the file (enumerated: ``memories``, the ``pending`` journal and whatever else the file holds)
in one transaction, verified before it commits by the row count and a checksum of each table on both sides
(:mod:`mem0_hygiene.stores.ledger.tables`, shared with the backup and restore of a PostgreSQL ledger), then the
config change to make. A file older than the current schema is read through an upgraded copy in memory (the
file is left as it was), so rows sharing a topic key arrive chained to the newest instead of meeting the
database's unique index."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..display.tables import Line, LinesView
from ..errors import ConfigError, LedgerError
from ..stores.database_url import is_database_url as is_postgres_url
from ..stores.embedder_record import TABLE as EMBEDDER_TABLE
from ..stores.ledger import open_ledger, scratch_copy
from ..stores.ledger.postgres import PostgresLedger
from ..stores.ledger.postgres_copy import held_for_load, load_rows
from ..stores.ledger.tables import TableCopy
from ..target import resolve


def config_url(url: str) -> str:
    """The URL as the printed config shows it: the user, host, database and options kept, the password (in
    the user part or the query) replaced by ``PASSWORD``."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{parts.username}{':PASSWORD' if parts.password else ''}@{netloc}"
    query = [(k, "PASSWORD" if k.lower() == "password" else v) for k, v in parse_qsl(parts.query)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))


@dataclass(frozen=True)
class LedgerMigration(LinesView):
    """What ``ledger migrate`` did: from which file to which database, each table's count and checksums, and
    the config change (``hygiene.ledger_url`` instead of ``hygiene.ledger_path``)."""

    source: str
    destination: str  # redacted
    tables: tuple[TableCopy, ...]
    config_change: dict[str, Any]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "destination": self.destination,
            "verified": True,
            "tables": [t.to_dict() for t in self.tables],
            "config_change": self.config_change,
            "notes": list(self.notes),
        }

    def _lines(self) -> list[Line]:
        out: list[Line] = [
            [("Copied the ledger ", ""), (self.source, "bold"), (" into ", ""), (self.destination, "bold")]
        ]
        for t in self.tables:
            out.append(
                [(f"  {t.table}: {t.rows} row(s), sha256 {t.copied_sha256[:16]}... ", ""), ("verified", "bold green")]
            )
        out += [[(f"  note: {note}", "")] for note in self.notes]
        url = self.config_change["hygiene"]["ledger_url"]
        out.append(
            [
                ("Set in every replica's config (and remove hygiene.ledger_path): ", ""),
                (f'"hygiene": {{"ledger_url": "{url}"}}', "bold"),
            ]
        )
        out.append([("The SQLite file is left as it was; keep it until the replicas run on the new ledger.", "")])
        return out


def migrate_ledger(target: Any, to_url: str) -> LedgerMigration:
    """Copy the target's SQLite ledger into the PostgreSQL database at ``to_url`` (which must not hold ledger
    rows yet). Stop the app (every replica) first: rows written to the file meanwhile are not copied.
    Raises :class:`ConfigError` for a URL that is not PostgreSQL's, :class:`LedgerError` when the source is
    missing or the destination is not empty, or when the copy does not verify (nothing is committed then)."""
    if not is_postgres_url(to_url):
        raise ConfigError("--to must be a postgresql://USER:PASSWORD@HOST/DATABASE URL")
    source_path = resolve(target).ledger_path
    if is_postgres_url(source_path):
        raise ConfigError(
            "the config's ledger is already on PostgreSQL (hygiene.ledger_url); migrate copies a "
            "SQLite ledger (hygiene.ledger_path or --ledger)"
        )
    if source_path == ":memory:" or not os.path.isfile(source_path):
        raise LedgerError(f"no ledger at {source_path} to migrate; pass the app's --config or --ledger FILE")
    open_ledger(source_path, readonly=True).close()  # refuses what is not a ledger, or a newer one, first
    source = scratch_copy(source_path)  # read-only; an older schema is upgraded in the copy only
    source.path = source_path  # what its messages name (the copy is only read)
    notes = []
    if source.chained_on_upgrade:
        notes.append(
            f"{source_path} is older than schema version 4: {source.chained_on_upgrade} row(s) sharing a "
            "topic_key and scope with a newer row were copied chained to it (superseded, not deleted), "
            "as its own upgrade will do"
        )
    try:
        dest = PostgresLedger(to_url)
        try:
            existing = dest.query("SELECT count(*) FROM memories")[0][0]
            if existing:
                raise LedgerError(
                    f"{dest.shown} already holds {existing} ledger row(s); migrate into an empty "
                    "database or schema (options=-csearch_path%3DNAME in the URL)"
                )
            with held_for_load(dest) as conn:  # verified inside the transaction: a mismatch commits nothing
                copies = load_rows(dest, conn, source, replace=False, records=(EMBEDDER_TABLE,))
            shown = dest.shown
        finally:
            dest.close()
    finally:
        source.close()
    return LedgerMigration(
        source=source_path,
        destination=shown,
        tables=tuple(copies),
        config_change={"hygiene": {"ledger_url": config_url(to_url)}},
        notes=tuple(notes),
    )
