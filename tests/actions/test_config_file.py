"""Rewriting the app's config file: JSON keeps its indentation and keys, YAML keeps its comments (one line edited
per key, missing keys inserted under their section), flow-style YAML is dumped again and says so, and the file is
replaced atomically with its mode kept."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from mem0_hygiene.actions.config_file import plan_config_rewrite, write_config_file
from mem0_hygiene.errors import ConfigError

PATHS = {
    ("vector_store", "config", "path"): "/data/mem0/qdrant",
    ("history_db_path",): "/data/mem0/history.db",
    ("hygiene", "ledger_path"): "/data/mem0/hygiene.db",
}


def rewrite(path: Path, updates=PATHS) -> str:
    plan = plan_config_rewrite(path, updates)
    write_config_file(plan)
    return path.read_text()


def test_yaml_edits_only_the_changed_lines(tmp_path: Path):
    path = tmp_path / "mem0.yaml"
    path.write_text(
        "# my app\n"
        "vector_store:\n"
        "  provider: qdrant  # local\n"
        "  config:\n"
        "    path: '/tmp/qdrant'   # the default, moved\n"
        "    collection_name: team\n"
        "hygiene:\n"
        "  retain_superseded: 90d\n"
    )
    plan = plan_config_rewrite(path, PATHS)
    assert plan.comments_kept and plan.format == "yaml"
    assert [c[0] for c in plan.changes] == ["vector_store.config.path", "history_db_path", "hygiene.ledger_path"]
    write_config_file(plan)
    assert path.read_text() == (
        "# my app\n"
        "vector_store:\n"
        "  provider: qdrant  # local\n"
        "  config:\n"
        "    path: /data/mem0/qdrant   # the default, moved\n"
        "    collection_name: team\n"
        "hygiene:\n"
        "  ledger_path: /data/mem0/hygiene.db\n"
        "  retain_superseded: 90d\n"
        "history_db_path: /data/mem0/history.db\n"
    )


def test_yaml_sections_are_created_with_the_files_indentation(tmp_path: Path):
    path = tmp_path / "mem0.yml"
    path.write_text("llm:\n    provider: openai   # keep\n")
    text = rewrite(path)
    assert text.startswith("llm:\n    provider: openai   # keep\n")
    assert yaml.safe_load(text) == {
        "llm": {"provider": "openai"},
        "vector_store": {"config": {"path": "/data/mem0/qdrant"}},
        "history_db_path": "/data/mem0/history.db",
        "hygiene": {"ledger_path": "/data/mem0/hygiene.db"},
    }


def test_yaml_values_that_need_quotes_are_quoted(tmp_path: Path):
    path = tmp_path / "mem0.yaml"
    path.write_text("history_db_path: /old/history.db\n")
    text = rewrite(path, {("history_db_path",): "/data/my: store #1/history.db"})
    assert yaml.safe_load(text) == {"history_db_path": "/data/my: store #1/history.db"}


def test_flow_style_yaml_is_dumped_again_and_says_so(tmp_path: Path):
    path = tmp_path / "mem0.yaml"
    path.write_text("# a comment\nvector_store: {provider: qdrant, config: {path: /tmp/qdrant}}\n")
    plan = plan_config_rewrite(path, PATHS)
    assert not plan.comments_kept
    write_config_file(plan)
    assert yaml.safe_load(path.read_text())["vector_store"] == {
        "provider": "qdrant",
        "config": {"path": "/data/mem0/qdrant"},
    }


def test_json_keeps_indentation_and_every_other_key(tmp_path: Path):
    path = tmp_path / "mem0.json"
    original = {
        "llm": {"provider": "openai"},
        "vector_store": {"provider": "qdrant", "config": {"path": "/tmp/q"}},
        "custom": [1, 2],
    }
    path.write_text(json.dumps(original, indent=3) + "\n")
    text = rewrite(path, {("vector_store", "config", "path"): "/data/q"})
    assert text.startswith('{\n   "llm"')
    assert json.loads(text) == {**original, "vector_store": {"provider": "qdrant", "config": {"path": "/data/q"}}}


def test_write_is_atomic_keeps_the_mode_and_follows_a_link(tmp_path: Path):
    real = tmp_path / "conf" / "mem0.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"history_db_path": "/old/h.db"}))
    os.chmod(real, 0o640)
    link = tmp_path / "mem0.json"
    os.symlink(real, link)
    rewrite(link, {("history_db_path",): "/new/h.db"})
    assert link.is_symlink() and json.loads(real.read_text()) == {"history_db_path": "/new/h.db"}
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["mem0.json"]  # no temporary file left


def test_nothing_to_change_writes_nothing(tmp_path: Path):
    path = tmp_path / "mem0.yaml"
    path.write_text("history_db_path: /new/h.db\n")
    os.utime(path, ns=(1, 1))
    plan = plan_config_rewrite(path, {("history_db_path",): "/new/h.db"})
    assert not plan.changed
    write_config_file(plan)
    assert os.stat(path).st_mtime_ns == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "holds a list"),
        ("{not json", "not valid JSON"),
        ("vector_store: 3\n", "vector_store is a int"),
    ],
)
def test_files_that_cannot_be_rewritten_are_refused(tmp_path: Path, content: str, message: str):
    path = tmp_path / ("mem0.json" if content.startswith(("[", "{")) else "mem0.yaml")
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        plan_config_rewrite(path, PATHS)
    assert path.read_text() == content


def test_a_module_reference_is_refused_with_what_to_do(tmp_path: Path):
    with pytest.raises(ConfigError, match="module:ATTRIBUTE.*set the printed keys in the code by hand"):
        plan_config_rewrite("myapp.settings:MEM0_CONFIG", PATHS)


def test_a_yaml_alias_bomb_is_refused_as_for_config(tmp_path: Path):
    path = tmp_path / "mem0.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    path.write_text("\n".join(lines) + "\nhistory_db_path: /old/h.db\n")
    with pytest.raises(ConfigError, match="alias"):
        plan_config_rewrite(path, PATHS)
