"""`mem0-hygiene where` and `mem0-hygiene relocate` through click's CliRunner, and config loading."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from mem0_hygiene.cli import cli, hygiene_command, store_options
from mem0_hygiene.config import build_mem0_config, offline_config, split_config
from mem0_hygiene.config_loader import for_maintenance, load_config
from mem0_hygiene.errors import ConfigError, StoreLocked
from mem0_hygiene.stores import qdrant as qdrant_local


@pytest.fixture(autouse=True)
def mem0_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "mem0home"
    monkeypatch.setenv("MEM0_DIR", str(d))
    return d


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def build_store(folder: Path, n: int = 6) -> dict[str, Any]:
    import mem0

    config = offline_config(folder)
    m = mem0.Memory(build_mem0_config(split_config(config)[0]))
    try:
        for i in range(n):
            m.add(f"remembered thing {i}", user_id="u", infer=False)
    finally:
        m.close()
        m.vector_store.client.close()
    return config


def write_config(path: Path, config: dict[str, Any]) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(config))
    else:
        import yaml

        path.write_text(yaml.safe_dump(config))
    return path


# ------------------------------------------------------------------------------------ where


def test_where_json_with_defaults(mem0_home: Path):
    result = run("where", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["copies"] == [] and data["copies_problem"] is None
    roles = {d["role"]: d for d in data["locations"]}
    assert roles["vector_store"]["path"] == "/tmp/qdrant"
    assert roles["vector_store"]["defaulted"] is True
    assert roles["vector_store"]["under_tmp"] is True
    assert roles["history_db"]["path"] == str(mem0_home / "history.db")
    assert roles["mem0_dir"]["path"] == str(mem0_home)


def test_where_lists_each_hosts_history_db_given_as_label_and_path(tmp_path: Path):
    (tmp_path / "web1").mkdir()
    (tmp_path / "web2").mkdir()
    first, second = tmp_path / "web1" / "history.db", tmp_path / "web2" / "history.db"
    result = run(
        "where",
        "--json",
        "--qdrant-path",
        str(tmp_path / "q"),
        "--history-db",
        f"web1={first}",
        "--history-db",
        f"web2={second}",
    )
    assert result.exit_code == 0, result.output
    paths = [d["path"] for d in json.loads(result.output)["locations"]]
    assert str(first) in paths and str(second) in paths
    assert not [p for p in paths if "web2=" in p or "web1=" in p]  # a label is never read as part of a path


def test_where_table_with_shortcuts(tmp_path: Path):
    result = run(
        "where",
        "--qdrant-path",
        str(tmp_path / "q"),
        "--history-db",
        str(tmp_path / "h.db"),
        "--ledger",
        str(tmp_path / "l.db"),
        "--collection",
        "agent",
    )
    assert result.exit_code == 0, result.output
    for text in (
        "vector_store",
        "history_db",
        "ledger",
        "mem0_dir",
        str(tmp_path / "q"),
        "collection agent",
        str(tmp_path / "h.db"),
        str(tmp_path / "l.db"),
        "under /tmp",
    ):
        assert text in result.output


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".conf"])
def test_where_reads_config_files(tmp_path: Path, suffix: str):
    config = offline_config(tmp_path / "store", collection="team")
    path = write_config(tmp_path / f"mem0{suffix}", config)
    data = json.loads(run("where", "--config", str(path), "--json").output)
    vs = data["locations"][0]
    assert vs["path"] == str(tmp_path / "store" / "qdrant")
    assert vs["collection"] == "team"
    assert vs["defaulted"] is False


def test_where_warns_about_tmpfs():
    result = run("where", "--qdrant-path", "/dev/shm/mem0-hygiene-never-created/qdrant")
    assert result.exit_code == 0
    if "tmpfs" in result.output:
        assert "lost at the next reboot" in result.output
        assert "mem0-hygiene relocate" in result.output


def test_where_bad_config_is_a_clean_error(tmp_path: Path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    result = run("where", "--config", str(bad))
    assert result.exit_code == 2  # a ConfigError: bad input
    assert "Error:" in result.output and str(bad) in result.output and "not valid JSON" in result.output
    assert "Traceback" not in result.output
    missing = run("where", "--config", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "no such file" in missing.output


# ------------------------------------------------------------------------------------ relocate


def test_relocate_cli(tmp_path: Path):
    config = build_store(tmp_path / "old")
    cfg_file = write_config(tmp_path / "app.json", config)
    dry = run("relocate", "--config", str(cfg_file), "--to", str(tmp_path / "new"), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "would copy" in dry.output and "nothing was written" in dry.output
    assert not (tmp_path / "new").exists()

    result = run("relocate", "--config", str(cfg_file), "--to", str(tmp_path / "new"), "--with-sqlite")
    assert result.exit_code == 0, result.output
    assert "counts match (mem0=6)" in result.output
    assert "integrity_check ok" in result.output
    assert f"{tmp_path / 'old' / 'qdrant'} is now a link to {tmp_path / 'new' / 'qdrant'}" in " ".join(
        result.output.split()
    )
    snippet = json.loads(result.output[result.output.index("{") :])
    assert snippet["vector_store"]["config"]["path"] == str(tmp_path / "new" / "qdrant")
    assert snippet["history_db_path"] == str(tmp_path / "new" / "history.db")
    assert qdrant_local.collection_counts(tmp_path / "new" / "qdrant") == {"mem0": 6}
    assert (tmp_path / "old" / "qdrant").is_symlink()  # the old path reaches the very same store
    assert qdrant_local.collection_counts(tmp_path / "old" / "qdrant") == {"mem0": 6}

    # the same command again is a no-op: the old path already links to the destination
    again = run("relocate", "--config", str(cfg_file), "--to", str(tmp_path / "new"))
    assert again.exit_code == 0, again.output
    assert "already moved" in again.output
    other = tmp_path / "other"
    (other / "qdrant").mkdir(parents=True)
    (other / "qdrant" / "mine").write_text("not ours")
    taken = run("relocate", "--qdrant-path", str(tmp_path / "new" / "qdrant"), "--to", str(other))
    assert taken.exit_code == 3 and "already exists" in taken.output


def test_relocate_cli_json_and_remove_source(tmp_path: Path):
    build_store(tmp_path / "old", 3)
    result = run(
        "relocate",
        "--qdrant-path",
        str(tmp_path / "old" / "qdrant"),
        "--to",
        str(tmp_path / "new"),
        "--remove-source",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["source_removed"] is True
    assert data["moves"][0]["counts_after"] == {"mem0": 3}
    assert data["moves"][0]["destination"] == str(tmp_path / "new" / "qdrant")
    assert not os.path.lexists(tmp_path / "old" / "qdrant")  # no link left either: readers find nothing

    text = run(
        "relocate",
        "--qdrant-path",
        str(tmp_path / "new" / "qdrant"),
        "--to",
        str(tmp_path / "third"),
        "--remove-source",
    )
    assert text.exit_code == 0, text.output
    said = " ".join(text.output.split())
    assert f"removed {tmp_path / 'new' / 'qdrant'} (and its link)" in said
    assert f"the store is at {tmp_path / 'third' / 'qdrant'}" in said
    assert "change the app's config before it starts again" in said


def test_relocate_cli_update_config_rewrites_the_file_instead_of_printing_a_snippet(tmp_path: Path):
    config = build_store(tmp_path / "old", 2)
    cfg_file = tmp_path / "app.yaml"
    cfg_file.write_text("# the app's settings\n" + __import__("yaml").safe_dump(config))
    result = run("relocate", "--config", str(cfg_file), "--to", str(tmp_path / "new"), "--update-config", str(cfg_file))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"config: rewrote {cfg_file} (vector_store.config.path)" in said
    assert "{" not in result.output  # no snippet to merge by hand
    assert cfg_file.read_text().startswith("# the app's settings\n")
    assert load_config(str(cfg_file))["vector_store"]["config"]["path"] == str(tmp_path / "new" / "qdrant")

    refused = run(
        "relocate",
        "--config",
        str(cfg_file),
        "--to",
        str(tmp_path / "third"),
        "--update-config",
        "myapp.settings:MEM0_CONFIG",
    )
    assert refused.exit_code == 2 and "module:ATTRIBUTE" in refused.output and "Traceback" not in refused.output
    assert not (tmp_path / "third").exists()


@pytest.fixture
def holder(tmp_path: Path, hold_qdrant_lock: Any) -> Path:
    build_store(tmp_path / "old", 2)
    path = tmp_path / "old" / "qdrant"
    hold_qdrant_lock(path)
    return path


def test_relocate_cli_refuses_a_locked_store(tmp_path: Path, holder: Path):
    result = run("relocate", "--qdrant-path", str(holder), "--to", str(tmp_path / "new"))
    assert result.exit_code == 3
    assert "Error:" in result.output
    assert str(holder) in result.output
    assert "stop the app" in result.output and "m.prune()" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "new").exists()


def test_relocate_cli_nothing_there(tmp_path: Path):
    result = run("relocate", "--qdrant-path", str(tmp_path / "none"), "--to", str(tmp_path / "new"))
    assert result.exit_code == 3
    assert "no local Qdrant store" in result.output


def test_relocate_requires_to():
    result = run("relocate")
    assert result.exit_code == 2
    assert "--to" in result.output


# ------------------------------------------------------------------------------------ shared CLI pieces


def test_store_options_and_error_wrapper_are_reusable(tmp_path: Path):
    @click.command()
    @store_options
    @hygiene_command
    def probe(store: Any) -> None:
        click.echo(json.dumps(store.load_for_maintenance()))
        raise StoreLocked("held elsewhere: stop the app")

    result = CliRunner().invoke(probe, ["--collection", "c1", "--ledger", ":memory:"])
    assert result.exit_code == 3
    first_line = result.output.splitlines()[0]
    cfg = json.loads(first_line)
    assert cfg["vector_store"]["config"]["collection_name"] == "c1"
    assert cfg["hygiene"]["ledger_path"] == ":memory:"
    assert cfg["embedder"]["provider"] == "offline" and cfg["llm"]["provider"] == "offline"
    assert "Error: held elsewhere: stop the app" in result.output


# ------------------------------------------------------------------------------------ config_loader


def test_load_config_nothing_is_mem0_defaults():
    assert load_config() == {}


def test_load_config_module_attribute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "appdir"
    pkg.mkdir()
    (pkg / "my_app_settings.py").write_text(
        textwrap.dedent(f"""
        MEM0_CONFIG = {{"vector_store": {{"provider": "qdrant", "config": {{"path": {str(tmp_path / "q")!r}}}}}}}

        def make_config():
            return {{"history_db_path": {str(tmp_path / "h.db")!r}}}

        NOT_A_DICT = [1, 2]
    """)
    )
    monkeypatch.chdir(pkg)
    monkeypatch.delitem(sys.modules, "my_app_settings", raising=False)
    cfg = load_config("my_app_settings:MEM0_CONFIG", collection="c")
    assert cfg["vector_store"]["config"] == {"path": str(tmp_path / "q"), "collection_name": "c"}
    assert load_config("my_app_settings:make_config") == {"history_db_path": str(tmp_path / "h.db")}
    with pytest.raises(ConfigError, match="list, not a dict"):
        load_config("my_app_settings:NOT_A_DICT")
    with pytest.raises(ConfigError, match="has no attribute"):
        load_config("my_app_settings:MISSING")
    with pytest.raises(ConfigError, match="cannot import module"):
        load_config("no_such_module_here:X")
    sys.modules.pop("my_app_settings", None)


def test_load_config_does_not_touch_the_source_dict(tmp_path: Path):
    path = write_config(tmp_path / "c.yaml", {"vector_store": {"provider": "qdrant", "config": {"path": "/x"}}})
    cfg = load_config(str(path), qdrant_path=tmp_path / "y", history_db=tmp_path / "h.db", ledger=tmp_path / "l.db")
    assert cfg["vector_store"]["config"]["path"] == str(tmp_path / "y")
    assert cfg["history_db_path"] == str(tmp_path / "h.db")
    assert cfg["hygiene"]["ledger_path"] == str(tmp_path / "l.db")


def test_load_config_errors(tmp_path: Path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="is empty"):
        load_config(str(empty))
    listy = tmp_path / "list.json"
    listy.write_text("[1]")
    with pytest.raises(ConfigError, match=str(listy)):
        load_config(str(listy))
    bad_yaml = tmp_path / "bad.yml"
    bad_yaml.write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(str(bad_yaml))
    server = tmp_path / "server.json"
    server.write_text(json.dumps({"vector_store": {"provider": "qdrant", "config": {"url": "http://q:6333"}}}))
    with pytest.raises(ConfigError, match="Qdrant server"):
        load_config(str(server), qdrant_path=tmp_path / "q")
    chroma = tmp_path / "chroma.json"
    chroma.write_text(json.dumps({"vector_store": {"provider": "chroma", "config": {}}}))
    with pytest.raises(ConfigError, match="chroma"):
        load_config(str(chroma), qdrant_path=tmp_path / "q")


def test_for_maintenance_needs_no_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import mem0

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    build_store(tmp_path / "s", 2)
    app_config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {"path": str(tmp_path / "s" / "qdrant"), "embedding_model_dims": 256},
        },
        "history_db_path": str(tmp_path / "s" / "history.db"),
        "embedder": {"provider": "openai", "config": {"model": "text-embedding-3-small"}},
        "llm": {"provider": "openai", "config": {"model": "gpt-4.1-nano"}},
    }
    maintenance = for_maintenance(app_config)
    assert app_config["embedder"]["provider"] == "openai"  # the input is not modified
    assert maintenance["embedder"] == {"provider": "offline", "config": {"embedding_dims": 256}}
    assert maintenance["llm"] == {"provider": "offline"}
    m = mem0.Memory(build_mem0_config(split_config(maintenance)[0]))
    try:
        assert len(m.get_all(filters={"user_id": "u"})["results"]) == 2
    finally:
        m.close()
        m.vector_store.client.close()
    assert for_maintenance({})["embedder"]["config"]["embedding_dims"] == 1536  # mem0's default size
