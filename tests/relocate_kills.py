"""`mem0-hygiene relocate` killed (SIGKILL) before one of its file operations, on a vector store of any
local-folder provider (local Qdrant, Chroma, FAISS), then run again: the scenario, shared by
tests/actions/test_relocate_kills_every_store.py (a sample of the kill points) and benchmarks/relocate_kill_sweep.py
(all of them, every option variant).

A deployment written by the drop-in (four memories, a backup record) is copied into a fresh case folder per kill
point, with the app's config file (JSON) naming ``CASE/old``. :func:`clean_run` relocates one copy uninterrupted
(its file operations are the kill points, its end state the one every rerun must reach); :func:`check_kill_point`
kills another copy before operation ``k`` (:class:`tests.faults.CrashRunner`) and returns what went wrong (empty:
nothing): the app, started with its config file, must find every memory while the old paths still lead to the
stores (plain mem0 and the drop-in, ledger included), and running the same command again must finish the move
with the same files, links and config file as the uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import Memory
from mem0_hygiene.cli import cli
from mem0_hygiene.config import build_mem0_config, split_config
from mem0_hygiene.config_loader import load_config
from mem0_hygiene.stores.vector import forget_cached

from .providers.stores import store_config

PROVIDERS = ("qdrant", "chroma", "faiss")
"""The providers whose store is a local folder relocate moves."""

RELOCATE = """
def operation(argv):
    from mem0_hygiene.cli import cli
    cli.main(argv, standalone_mode=False)
"""

VARIANTS = {
    "vector-store": (),
    "vector-store-remove-source": ("--remove-source",),
    "vector-store-update-config": ("--update-config",),
    "vector-store-remove-source-update-config": ("--remove-source", "--update-config"),
    "with-sqlite": ("--with-sqlite",),
    "with-sqlite-remove-source": ("--with-sqlite", "--remove-source"),
    "with-sqlite-update-config": ("--with-sqlite", "--update-config"),
    "with-sqlite-remove-source-update-config": ("--with-sqlite", "--remove-source", "--update-config"),
}
"""Every combination of the options that change what relocate does."""

STORE_DIRS = ("qdrant", "chroma", "faiss")


def app_config(provider: str, old: Path) -> dict[str, Any]:
    """The app's config: the vector store at ``old/PROVIDER``, history.db and the ledger in ``old``."""
    return store_config(provider, old, collection="mem0", hygiene={})


def write_config(provider: str, path: Path, old: Path) -> Path:
    path.write_text(json.dumps(app_config(provider, old), indent=2))
    return path


def _vector_path(config: dict[str, Any]) -> str:
    return str(config["vector_store"]["config"]["path"])


def memories(provider: str, config: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(id -> text through plain mem0, id -> source through the drop-in's ledger); nothing of the store is held
    open in this process afterwards (Chroma's cached system is dropped)."""
    import mem0

    m = mem0.Memory(build_mem0_config(split_config(config)[0]))
    try:
        plain = {r["id"]: r["memory"] for r in m.get_all(filters={"user_id": "u"}, top_k=100)["results"]}
    finally:
        m.close()
        if provider == "qdrant":
            m.vector_store.client.close()
        forget_cached(provider, _vector_path(config))
    d = Memory.from_config(config)
    try:
        sources = {r["id"]: r["hygiene"]["source"] for r in d.get_all(filters={"user_id": "u"}, top_k=100)["results"]}
    finally:
        d.close()
        forget_cached(provider, _vector_path(config))
    return plain, sources


def listing(case: Path) -> dict[str, str]:
    """Every path under the case (the stores' insides excluded), as 'link -> target', 'dir' or 'file' (relative)."""
    out = {}
    for entry in sorted(case.rglob("*")):
        rel = str(entry.relative_to(case))
        if any(part in STORE_DIRS for part in entry.relative_to(case).parts[:-1]):
            continue
        if entry.is_symlink():
            out[rel] = "link -> " + os.path.relpath(os.path.realpath(entry), case)
        else:
            out[rel] = "dir" if entry.is_dir() else "file"
    return out


def leftovers(case: Path) -> list[str]:
    return [str(p) for p in case.rglob("*") if ".relocating-" in p.name]


def make_template(provider: str, folder: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A deployment written by the drop-in in ``folder/old`` (its store, history.db, hygiene.db, a backup record);
    (that folder, its memories as :func:`memories` reads them)."""
    old = folder / "old"
    config = app_config(provider, old)
    m = Memory.from_config(config)
    try:
        for i in range(4):
            m.add(f"remembered thing {i}", user_id="u", infer=False, source=f"chat {i}")
        m.backup(folder / "backups")
    finally:
        m.close()
        forget_cached(provider, _vector_path(config))
    assert (old / "hygiene.backups.json").is_file()
    return old, *memories(provider, config)


@dataclass(frozen=True)
class Variant:
    """One option variant of relocate on one provider, with its template deployment."""

    provider: str
    options: tuple[str, ...]
    template: Path
    texts: dict[str, str]
    sources: dict[str, str]

    @property
    def with_sqlite(self) -> bool:
        return "--with-sqlite" in self.options

    @property
    def remove_source(self) -> bool:
        return "--remove-source" in self.options

    @property
    def update_config(self) -> bool:
        return "--update-config" in self.options

    def fresh(self, root: Path, name: str) -> tuple[Path, Path]:
        """A copy of the template in ``root/name`` and its app config file."""
        case = root / name
        shutil.copytree(self.template, case / "old", symlinks=True)
        return case, write_config(self.provider, case / "app.json", case / "old")

    def argv(self, case: Path, config_file: Path) -> list[str]:
        out = ["relocate", "--config", str(config_file), "--to", str(case / "new")]
        out += [o for o in self.options if o != "--update-config"]
        return out + (["--update-config", str(config_file)] if self.update_config else [])

    def moved_config(self, case: Path) -> dict[str, Any]:
        """The app's config naming the stores where the relocation put them."""
        config = app_config(self.provider, case / "new")
        if not self.with_sqlite:  # only the vector store moved: history.db (and the ledger beside it) stay
            config["history_db_path"] = str(case / "old" / "history.db")
        return config

    def old_paths(self, case: Path) -> list[Path]:
        paths = [case / "old" / self.provider]
        return paths + ([case / "old" / name for name in ("history.db", "hygiene.db")] if self.with_sqlite else [])


@dataclass(frozen=True)
class CleanRun:
    """An uninterrupted run: its file operations (the kill points) and the end state every rerun must reach."""

    calls: list[str]
    listing: dict[str, str]
    config_text: str


def clean_run(runner: Any, variant: Variant, root: Path) -> CleanRun:
    case, config_file = variant.fresh(root, "clean")
    clean = runner.run(RELOCATE, variant.argv(case, config_file))
    assert clean["status"] == "ok", clean.get("error")
    expected = listing(case)
    old_store = f"old/{variant.provider}"
    if variant.remove_source:
        assert old_store not in expected, expected
    else:
        assert expected[old_store] == f"link -> new/{variant.provider}", expected
    assert memories(variant.provider, variant.moved_config(case)) == (variant.texts, variant.sources)
    return CleanRun(clean["calls"], expected, config_file.read_text().replace(str(case), "CASE"))


def check_kill_point(runner: Any, variant: Variant, clean: CleanRun, root: Path, k: int) -> list[str]:
    """Kill a fresh copy's relocation before file operation ``k``, restart the app, rerun; what went wrong."""
    case, config_file = variant.fresh(root, f"k{k}")
    killed = runner.run(RELOCATE, variant.argv(case, config_file), kill_at=k)
    if killed["status"] != "killed":
        return [f"not killed: {killed.get('status')} {str(killed.get('error'))[-500:]}"]
    wrong: list[str] = []
    want = (variant.texts, variant.sources)
    gone = not all(os.path.lexists(p) for p in variant.old_paths(case))
    restarted = memories(variant.provider, load_config(str(config_file)))  # the app, restarted
    if (variant.update_config or not gone) and restarted != want:
        wrong.append(f"the app restarted after the kill finds {restarted}, not {want}")
    rerun = CliRunner().invoke(cli, variant.argv(case, config_file))
    if rerun.exit_code != 0:
        return [*wrong, f"the rerun failed ({rerun.exit_code}): {rerun.output[-800:]}"]
    if "(mem0=0)" in rerun.output:
        wrong.append(f"the rerun moved an empty store: {rerun.output[-800:]}")
    if leftovers(case):
        wrong.append(f"left behind: {leftovers(case)}")
    moved = memories(variant.provider, variant.moved_config(case))
    if moved != want:
        wrong.append(f"the moved stores hold {moved}, not {want}")
    if config_file.read_text().replace(str(case), "CASE") != clean.config_text:
        wrong.append("the config file differs from the uninterrupted run's")
    now = listing(case)
    if gone and not variant.update_config:  # the old paths hold what the app made there; the move is as it was
        now = {p: v for p, v in now.items() if not p.startswith("old/")}
        expected = {p: v for p, v in clean.listing.items() if not p.startswith("old/")}
    else:
        expected = clean.listing
    if now != expected:
        wrong.append(f"files and links differ from the uninterrupted run's: {now} != {expected}")
    return wrong


def sample(calls: list[str], every: int) -> list[int]:
    """Kill points 1..len(calls): the first, the last, every ``every``-th between, and the store folder's switch
    (the atomic exchange and the operation after it, which deletes the moved-from folder)."""
    total = len(calls)
    points = {1, total, *range(every, total, every)}
    if "exchange_paths" in calls:
        at = calls.index("exchange_paths") + 1
        points |= {at, min(at + 1, total)}
    return sorted(p for p in points if 1 <= p <= total)
