"""Whether a store location names a database server rather than a file: the one test every part of the package
asks (``hygiene.ledger_url``, the ledger's location, a backup's or a restore's target)."""

from __future__ import annotations

from typing import Any

DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")
"""The URL schemes of a database server the ledger can live on (PostgreSQL)."""


def is_database_url(location: Any) -> bool:
    """Whether ``location`` names a PostgreSQL database (a URL) rather than a SQLite file (a path)."""
    return isinstance(location, str) and location.startswith(DATABASE_URL_SCHEMES)
