"""Fixtures of the renderer tests: the folder the browser tests keep their screenshots in, named at the end of
the run (``$MEM0_HYGIENE_SCREENSHOTS`` to choose it; a folder in pytest's temporary directory otherwise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHOTS = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def shots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots (and the print PDF) of the HTML report go; the run's summary says where."""
    chosen = os.environ.get("MEM0_HYGIENE_SCREENSHOTS")
    folder = Path(chosen).absolute() if chosen else tmp_path_factory.mktemp("html-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    request.config.stash[SHOTS] = folder
    return folder


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    folder = config.stash.get(SHOTS, None)
    if folder is not None:
        terminalreporter.write_line(f"HTML report screenshots: {folder} ({len(list(folder.iterdir()))} files)")
