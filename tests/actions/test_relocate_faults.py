"""`mem0-hygiene relocate`, killed (SIGKILL) before each of its file operations, in every option variant
(--with-sqlite, --remove-source, --update-config): the app, started with its config file, always finds every memory
(plain mem0 and the drop-in, ledger included) while the old paths still lead to the stores, and running the same
command again finishes the move with the same end state as a run that was never interrupted. Once --remove-source
has removed an old path, an app started with the old config creates empty stores there; the rerun leaves them
alone and never copies them over the finished destination."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli
from mem0_hygiene.config import build_mem0_config, split_config
from mem0_hygiene.config_loader import load_config

RELOCATE = """
def operation(argv):
    from mem0_hygiene.cli import cli
    cli.main(argv, standalone_mode=False)
"""

APP_YAML = """# the app's mem0 config
vector_store:
  provider: qdrant  # local
  config:
    path: {old}/qdrant
    collection_name: mem0
    embedding_model_dims: 256
history_db_path: {old}/history.db  # mem0's changelog
embedder:
  provider: offline
  config:
    embedding_dims: 256
llm:
  provider: offline
"""


def memories(config: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(id -> text through plain mem0, id -> source through the drop-in's ledger)."""
    import mem0

    m = mem0.Memory(build_mem0_config(split_config(config)[0]))
    try:
        plain = {r["id"]: r["memory"] for r in m.get_all(filters={"user_id": "u"}, top_k=100)["results"]}
    finally:
        m.close()
        m.vector_store.client.close()
    d = Memory.from_config(config)
    try:
        sources = {r["id"]: r["hygiene"]["source"] for r in d.get_all(filters={"user_id": "u"}, top_k=100)["results"]}
    finally:
        d.close()
    return plain, sources


def listing(case: Path) -> dict[str, str]:
    """Every path under the case (the stores' insides excluded), as 'link -> target', 'dir' or 'file' (relative)."""
    out = {}
    for entry in sorted(case.rglob("*")):
        rel = str(entry.relative_to(case))
        if any(part == "qdrant" for part in entry.relative_to(case).parts[:-1]):
            continue
        if entry.is_symlink():
            out[rel] = "link -> " + os.path.relpath(os.path.realpath(entry), case)
        else:
            out[rel] = "dir" if entry.is_dir() else "file"
    return out


def leftovers(case: Path) -> list[str]:
    return [str(p) for p in case.rglob("*") if ".relocating-" in p.name]


@pytest.fixture
def template(tmp_path: Path, clock: Any) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A deployment written by the drop-in: qdrant/, history.db, hygiene.db and a backup record."""
    old = tmp_path / "template" / "old"
    m = Memory.from_config(offline_config(old, hygiene={"clock": clock}))
    try:
        for i in range(4):
            m.add(f"remembered thing {i}", user_id="u", infer=False, source=f"chat {i}")
        m.backup(tmp_path / "backups")
    finally:
        m.close()
    assert (old / "hygiene.backups.json").is_file()
    return old, *memories(load_config(str(write_app_config(old.parent, old))))


def write_app_config(case: Path, old: Path) -> Path:
    path = case / "app.yaml"
    path.write_text(APP_YAML.format(old=old))
    return path


def fresh(tmp_path: Path, template_old: Path, name: str) -> tuple[Path, Path, list[str]]:
    case = tmp_path / name
    shutil.copytree(template_old, case / "old", symlinks=True)
    config_file = write_app_config(case, case / "old")
    return case, config_file, []


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


def moved_config(case: Path, with_sqlite: bool) -> dict[str, Any]:
    """The app's config naming the stores where the relocation put them."""
    text = APP_YAML.format(old=case / "new")
    if not with_sqlite:  # only the vector store moved: history.db (and the ledger beside it) stay
        text = text.replace(f"history_db_path: {case / 'new'}/", f"history_db_path: {case / 'old'}/")
    path = case.parent / f"{case.name}.moved.yaml"  # outside the case: its listing is compared
    path.write_text(text)
    return load_config(str(path))


def old_paths(case: Path, with_sqlite: bool) -> list[Path]:
    paths = [case / "old" / "qdrant"]
    return paths + ([case / "old" / name for name in ("history.db", "hygiene.db")] if with_sqlite else [])


@pytest.mark.parametrize("options", list(VARIANTS.values()), ids=list(VARIANTS))
def test_relocate_survives_a_kill_before_each_file_operation(crash_runner, tmp_path: Path, template, options):
    template_old, texts, sources = template
    with_sqlite, remove_source, update_config = (
        o in options for o in ("--with-sqlite", "--remove-source", "--update-config")
    )

    def argv(case: Path, config_file: Path) -> list[str]:
        out = ["relocate", "--config", str(config_file), "--to", str(case / "new")]
        out += [o for o in options if o != "--update-config"]
        return out + (["--update-config", str(config_file)] if update_config else [])

    case, config_file, _ = fresh(tmp_path, template_old, "clean")
    clean = crash_runner.run(RELOCATE, argv(case, config_file))
    assert clean["status"] == "ok", clean.get("error")
    expected_listing, expected_config = listing(case), config_file.read_text().replace(str(case), "CASE")
    calls = clean["calls"]
    if remove_source:
        assert not os.path.lexists(case / "old" / "qdrant")
    else:
        assert expected_listing["old/qdrant"] == "link -> new/qdrant"
    if with_sqlite:
        assert expected_listing["new/hygiene.backups.json"] == "file"
        assert ("new/history.db" in expected_config) == update_config
    assert memories(moved_config(case, with_sqlite)) == (texts, sources)

    for k in range(1, len(calls) + 1):
        case, config_file, _ = fresh(tmp_path, template_old, f"k{k}")
        killed = crash_runner.run(RELOCATE, argv(case, config_file), kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        where = f"killed before call {k} ({calls[k - 1]})"
        gone = not all(os.path.lexists(p) for p in old_paths(case, with_sqlite))
        if update_config or not gone:
            assert memories(load_config(str(config_file))) == (texts, sources), where  # the app, restarted
        else:  # --remove-source took an old path away: the app, started with its old config, makes empty stores
            memories(load_config(str(config_file)))
        rerun = CliRunner().invoke(cli, argv(case, config_file))
        assert rerun.exit_code == 0, (where, rerun.output)
        assert "(mem0=0)" not in rerun.output, (where, rerun.output)
        assert leftovers(case) == [], where
        assert memories(moved_config(case, with_sqlite)) == (texts, sources), where
        assert config_file.read_text().replace(str(case), "CASE") == expected_config, where
        if gone and not update_config:  # the old paths hold what the app made there; the move is as it was
            assert {p: v for p, v in listing(case).items() if not p.startswith("old/")} == {
                p: v for p, v in expected_listing.items() if not p.startswith("old/")
            }, where
        else:
            assert listing(case) == expected_listing, where
    assert len(calls) >= 10
