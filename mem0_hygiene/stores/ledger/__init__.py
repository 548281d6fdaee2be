"""The sidecar ledger: one row per mem0 memory_id with provenance, confirmation, expiry, supersession,
invalidation, use and tombstone facts, in a SQLite file or a PostgreSQL database.

- :mod:`.base`: :class:`Ledger`, the queries both databases share over a :mod:`.connection` (the dialect's
  few differing fragments in :mod:`.dialect`);
- :mod:`.sqlite` (with :mod:`.sqlite_file`, what a file named as the ledger is) and :mod:`.postgres` (with
  :mod:`.postgres_reads` and :mod:`.postgres_copy`: snapshots, dumps and loads): one module per database;
- :mod:`.schema`: both dialects' schema side by side, each table's columns listed once, and the migrations;
- :mod:`.rows`: :class:`LedgerRow`; :mod:`.tables`: every table of either database enumerated, copied and
  verified;
- :mod:`.open`: :func:`open_ledger`, the one place that chooses the database from the location.

The names other modules import from ``mem0_hygiene.stores.ledger`` are re-exported here.
"""

from __future__ import annotations

from ..database_url import is_database_url
from .base import Ledger
from .open import open_ledger, scratch_copy
from .rows import COLUMNS, PENDING_ACTIONS, SOURCE_KINDS, LedgerRow, parse_stamp, row_from
from .schema import APPLICATION_ID, SCHEMA_VERSION, MigrationStep, seed_and_chain
from .sqlite import SqliteLedger, connect
from .sqlite_file import (
    FileIdentity,
    damaged_message,
    identify,
    newer_schema_message,
    not_sqlite_message,
    refuse_unless_ledger,
    restore_hint,
)

__all__ = [
    "APPLICATION_ID",
    "COLUMNS",
    "PENDING_ACTIONS",
    "SCHEMA_VERSION",
    "SOURCE_KINDS",
    "FileIdentity",
    "Ledger",
    "LedgerRow",
    "MigrationStep",
    "SqliteLedger",
    "connect",
    "damaged_message",
    "identify",
    "is_database_url",
    "newer_schema_message",
    "not_sqlite_message",
    "open_ledger",
    "parse_stamp",
    "refuse_unless_ledger",
    "restore_hint",
    "row_from",
    "scratch_copy",
    "seed_and_chain",
]
