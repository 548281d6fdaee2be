"""The last mem0-hygiene with schema version 3, taken from this repository's history and run in its own process,
refuses a ledger of the current version (SQLite and PostgreSQL) saying to upgrade mem0-hygiene, writing nothing to it.
Skipped, saying why, where the history or git is not at hand (a shallow or exported copy)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from mem0_hygiene.stores.ledger import SCHEMA_VERSION, open_ledger

LAST_VERSION_3 = "86855825f4964ff96ea5f63e65a0ba1cc55159f8"
"""The last commit whose ledger schema is version 3."""

REPO = Path(__file__).resolve().parents[2]

OPEN = """
import sys
import mem0_hygiene
assert mem0_hygiene.__file__.startswith(sys.argv[2]), mem0_hygiene.__file__  # the older package, not this one
from mem0_hygiene.errors import LedgerError
from mem0_hygiene.stores.ledger import Ledger
for opening in (Ledger, Ledger.open_readonly):
    try:
        opening(sys.argv[1]).close()
    except LedgerError as exc:
        print(exc)
    else:
        print("opened")
"""


@pytest.fixture(scope="module")
def old_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the older mem0-hygiene is taken from the repository's history")
    found = subprocess.run(["git", "-C", str(REPO), "archive", LAST_VERSION_3, "mem0_hygiene"], capture_output=True)
    if found.returncode != 0:
        pytest.skip(
            f"commit {LAST_VERSION_3[:12]} is not in this copy's history (shallow clone?): "
            f"{found.stderr.decode(errors='replace').strip()[:120]}"
        )
    folder = tmp_path_factory.mktemp("mem0-hygiene-v3")
    with tarfile.open(fileobj=BytesIO(found.stdout)) as tar:
        try:
            tar.extractall(folder, filter="data")
        except TypeError:  # a Python without extraction filters; the archive is our own repository's
            tar.extractall(folder)  # noqa: S202
    return folder


def run_old(package: Path, where: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", OPEN, where, str(package)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(package),
        env={**os.environ, "PYTHONPATH": str(package), "MEM0_TELEMETRY": "False"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_the_last_version_3_release_refuses_a_version_4_sqlite_ledger_saying_upgrade(
    old_package: Path, tmp_path: Path
) -> None:
    path = tmp_path / "hygiene.db"
    open_ledger(str(path)).close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    said = run_old(old_package, str(path))
    assert len(said) == 2 and all(
        f"schema version {SCHEMA_VERSION}" in s and "upgrade mem0-hygiene" in s for s in said
    ), said
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_the_last_version_3_release_refuses_a_version_4_postgres_ledger_saying_upgrade(
    old_package: Path,
    pg_url: str,  # noqa: F811 - the fixture
) -> None:
    open_ledger(pg_url).close()
    said = run_old(old_package, pg_url)
    assert len(said) == 2 and all(
        f"schema version {SCHEMA_VERSION}" in s and "upgrade mem0-hygiene" in s for s in said
    ), said
