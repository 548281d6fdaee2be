"""Shared fixtures: offline mem0 stores on disk in tmp dirs, and a clock tests move by hand."""

from __future__ import annotations

import os
import tempfile

# Before mem0 is imported anywhere: no telemetry, and mem0's own folder away from the home dir.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-hygiene-tests-"))

from collections.abc import Callable, Iterator  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from mem0_hygiene import Memory, offline_config  # noqa: E402
from mem0_hygiene.config import build_mem0_config, split_config  # noqa: E402


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime) -> None:
        self.current = start

    def __call__(self) -> datetime:
        return self.current

    def advance(self, **kwargs: float) -> datetime:
        self.current += timedelta(**kwargs)
        return self.current


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc))


@pytest.fixture
def make_memory(tmp_path: Path, clock: FakeClock) -> Iterator[Any]:
    """Build drop-in Memory instances over a folder (default: tmp_path/store); closes them after."""
    opened: list[Memory] = []

    def build(folder: Path | None = None, **hygiene: Any) -> Memory:
        hygiene.setdefault("clock", clock)
        m = Memory.from_config(offline_config(folder or tmp_path / "store", hygiene=hygiene))
        opened.append(m)
        return m

    yield build
    for m in opened:
        try:
            m.close()
        except Exception:
            pass


@pytest.fixture
def mem(make_memory: Any) -> Memory:
    return make_memory()


def _open_plain_mem0(folder: Path) -> Any:
    from mem0 import Memory as Mem0Memory

    return Mem0Memory(build_mem0_config(split_config(offline_config(folder))[0]))


def _close_plain_mem0(m: Any) -> None:
    m.close()
    m.vector_store.client.close()


@pytest.fixture
def plain_mem0() -> Callable[[Path], Any]:
    """Opens the real, unwrapped mem0 Memory over an offline store in a folder: `plain_mem0(folder)`."""
    return _open_plain_mem0


@pytest.fixture
def close_plain() -> Callable[[Any], None]:
    """Closes a plain mem0 Memory and its Qdrant client (releases the folder's lock): `close_plain(m)`."""
    return _close_plain_mem0


@pytest.fixture
def persistent_dir() -> Iterator[Path]:
    """A folder outside /tmp (like ~/.mem0 would be), so storage checks see a normal disk."""
    import shutil
    import uuid

    folder = Path.home() / ".cache" / "mem0-hygiene-tests" / uuid.uuid4().hex[:10]
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
