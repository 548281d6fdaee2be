"""Opening a ledger: :func:`open_ledger` is the one place that chooses the database from the location (a
PostgreSQL URL, else a SQLite file, :func:`~mem0_hygiene.stores.database_url.is_database_url`), and
:func:`scratch_copy` gives an in-memory SQLite copy of either for dry runs and reads from outside the app."""

from __future__ import annotations

from ..database_url import is_database_url
from .base import Ledger
from .sqlite import SqliteLedger
from .sqlite import scratch_copy as sqlite_scratch_copy


def open_ledger(location: str, *, readonly: bool = False) -> Ledger:
    """The ledger at ``location``: a PostgreSQL database for a ``postgresql://`` URL (``hygiene.ledger_url``),
    else a SQLite file (``":memory:"``: a new in-memory one). Opened for writing, it is created or migrated to
    the current schema; ``readonly`` opens an existing ledger as it is (no migration, nothing created; the
    database refuses writes), raising :class:`~mem0_hygiene.errors.LedgerError` when there is none, it is not a
    ledger, or its schema is newer than this mem0-hygiene's."""
    if is_database_url(location):
        from .postgres import PostgresLedger  # psycopg is an extra: imported only for a database URL

        return PostgresLedger(location, readonly=readonly)
    return SqliteLedger(location, readonly=readonly)


def scratch_copy(location: str) -> SqliteLedger:
    """An in-memory SQLite copy of the ledger at ``location`` (an empty ledger when a file is not there yet): the
    same rows and schema, and every write to it goes nowhere; the ledger itself is only read. A PostgreSQL
    ledger's copy holds its rows read in one snapshot. Raises :class:`~mem0_hygiene.errors.LedgerError` for
    what is not a ledger or has a newer schema, before anything is done."""
    if not is_database_url(location):
        return sqlite_scratch_copy(location)
    source = open_ledger(location, readonly=True)
    try:
        return source.to_scratch()
    finally:
        source.close()
