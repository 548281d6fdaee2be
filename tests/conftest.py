"""Shared fixtures: offline mem0 stores on disk in tmp dirs, a clock tests move by hand, deployments built
through the drop-in Memory, plain mem0 over a folder, and a second process holding a local Qdrant folder's lock."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Before mem0 is imported anywhere: no telemetry, and mem0's own folder away from the home dir (removed at exit).
os.environ["MEM0_TELEMETRY"] = "False"
if not os.environ.get("MEM0_DIR"):
    os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="mem0-hygiene-tests-")
    atexit.register(shutil.rmtree, os.environ["MEM0_DIR"], True)

import contextlib  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
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


@dataclass
class Deployment:
    """A drop-in deployment in one folder: local Qdrant on disk, history.db and the ledger beside it."""

    folder: Path
    config: dict[str, Any]  # what the app passes to Memory.from_config, its hygiene settings included
    config_path: Path | None  # the config file the CLI reads (no hygiene settings: a clock is not JSON)
    memory: Memory | None  # the Memory that planted the data: open with keep_open, closed otherwise
    planted: Any  # what plant(memory) returned


@pytest.fixture
def make_deployment(clock: FakeClock) -> Iterator[Callable[..., Deployment]]:
    """Build a deployment in a folder through a real drop-in Memory:

    `make_deployment(folder, plant=None, hygiene=None, keep_open=False, config_file=None)`. `plant(m)` writes
    the test's data; the Memory is closed afterwards (the folder's lock released) unless `keep_open`, and
    open ones are closed when the test ends. Without `plant` or `keep_open` no Memory is opened. `hygiene`
    is the settings in the config (default: the test's clock; `{}` for none); `config_file` is where to
    write the config as JSON."""
    opened: list[Memory] = []

    def build(
        folder: Path,
        *,
        plant: Callable[[Memory], Any] | None = None,
        hygiene: dict[str, Any] | None = None,
        keep_open: bool = False,
        config_file: Path | None = None,
    ) -> Deployment:
        config = offline_config(folder, hygiene={"clock": clock} if hygiene is None else hygiene)
        if config_file is not None:
            config_file.write_text(json.dumps(offline_config(folder)))
        memory, planted = None, None
        if plant is not None or keep_open:
            memory = Memory.from_config(config)
            if keep_open:
                opened.append(memory)
            try:
                planted = plant(memory) if plant is not None else None
            finally:
                if not keep_open:
                    memory.close()
        return Deployment(folder, config, config_file, memory, planted)

    yield build
    for m in opened:
        try:
            m.close()
        except Exception:
            pass


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


CHECKOUT = Path(__file__).resolve().parent.parent


def persistent_root() -> Path | None:
    """Where tests put stores the product must see as persistent (like ~/.mem0 would be): ~/.cache, or where HOME
    is itself under a temp folder or on a RAM disk (containers, CI runners), the checkout's own .test-stores;
    None when neither is on a normal disk."""
    from mem0_hygiene.stores.locations import is_under_tmp
    from mem0_hygiene.stores.mounts import filesystem_of

    for base in (Path.home() / ".cache" / "mem0-hygiene-tests", CHECKOUT / ".test-stores"):
        if not is_under_tmp(str(base)) and not filesystem_of(str(base)).volatile:
            return base
    return None


@pytest.fixture
def persistent_dir() -> Iterator[Path]:
    """A folder on a normal disk, neither under a temp folder nor on a RAM disk (:func:`persistent_root`), so storage
    checks see it as persistent; removed afterwards. Skips, saying why, where there is none."""
    import uuid

    root = persistent_root()
    if root is None:
        pytest.skip("needs a folder on a normal disk: HOME and the checkout are both under a temp folder or in RAM")
    folder = root / uuid.uuid4().hex[:10]
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        root.rmdir()  # the last one out removes the shared folder


def remove_demos_built_under(root: Path) -> None:
    """Remove the RAM-disk folders (/dev/shm/mem0-hygiene-demo-*) of the demos built in a folder under ``root``:
    the demo puts its vector store there, outside its folder, and only a later demo removes it."""
    from mem0_hygiene.demo import OWNER_FILE, RAM_PREFIX, RAM_ROOT

    root = root.resolve()
    for ram in RAM_ROOT.glob(f"{RAM_PREFIX}*") if RAM_ROOT.is_dir() else ():
        try:
            owner = Path((ram / OWNER_FILE).read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            continue
        if owner.is_relative_to(root) and not ram.is_symlink():
            shutil.rmtree(ram, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def no_demo_left_in_ram(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """At the session's end, remove the RAM-disk folders of the demos this session built in its temp folders (this
    session's own: never another run's demo)."""
    yield
    remove_demos_built_under(tmp_path_factory.getbasetemp())


HOLD_QDRANT = """
import sys
from qdrant_client import QdrantClient
c = QdrantClient(path=sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
"""


class LockHolder:
    """A real second process, as a running app would be, that prints "ready" once it holds the lock."""

    def __init__(self, path: str | os.PathLike[str], script: str) -> None:
        self.path = Path(path)
        self.process: subprocess.Popen[str] = subprocess.Popen(
            [sys.executable, "-c", script, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready"
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """End the process: the lock goes with it."""
        self.process.kill()
        self.process.wait()


@pytest.fixture
def hold_qdrant_lock() -> Iterator[Callable[..., LockHolder]]:
    """Start a process that opens a local Qdrant folder and holds its lock until `release()` or the test's end:
    `hold_qdrant_lock(path)`. `script=` runs other code instead, given `path` as sys.argv[1] (say, an app
    with the drop-in Memory open); it must print "ready" once it holds the lock."""
    holders: list[LockHolder] = []

    def hold(path: str | os.PathLike[str], *, script: str = HOLD_QDRANT) -> LockHolder:
        holder = LockHolder(path, script)
        holders.append(holder)
        return holder

    yield hold
    for holder in holders:
        holder.release()


@pytest.fixture(scope="session")
def crash_runner() -> Iterator[Any]:
    """A `faults.CrashRunner` (tests/faults.py): runs an operation in a child process that SIGKILLs itself before
    its k-th file operation, `crash_runner.run(code, *args, kill_at=k)`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mem0_hygiene_test_faults", Path(__file__).with_name("faults.py"))
    assert spec is not None and spec.loader is not None
    faults = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(faults)
    runner = faults.CrashRunner()
    yield runner
    runner.close()
