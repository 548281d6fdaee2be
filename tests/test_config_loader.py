"""Reading the app's config from outside: `module:ATTR` accepts a dict or a plain function returning one and
refuses anything else before calling it, an import or a call that exits or is interrupted becomes a
ConfigError, and a config file cannot blow up when read (size, YAML aliases, nesting)."""

from __future__ import annotations

import itertools
import json
import sys

import pytest

from mem0_hygiene.config_loader import MAX_CONFIG_BYTES, load_config, read_config_source
from mem0_hygiene.errors import ConfigError

_names = itertools.count()


@pytest.fixture
def app_module(tmp_path, monkeypatch):
    """Write a module in a fresh folder that is the current directory; returns its (unique) name."""
    monkeypatch.chdir(tmp_path)

    def write(source: str) -> str:
        name = f"m0h_app_settings_{next(_names)}"
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    yield write


def test_a_dict_attribute_and_a_function_returning_one_are_read(app_module):
    name = app_module(
        "CONFIG = {'history_db_path': 'h.db'}\n"
        "def make():\n    return {'history_db_path': 'made.db'}\n"
        "class Settings:\n    @classmethod\n    def mem0(cls):\n        return {'version': 'v1.1'}\n"
    )
    assert read_config_source(f"{name}:CONFIG") == {"history_db_path": "h.db"}
    assert read_config_source(f"{name}:make") == {"history_db_path": "made.db"}
    assert read_config_source(f"{name}:Settings.mem0") == {"version": "v1.1"}


@pytest.mark.parametrize(
    "ref, what",
    [
        ("sys:exit", "built-in function"),
        ("os:abort", "built-in function"),
        ("os:_exit", "built-in function"),
        ("builtins:dict", "class"),
        ("os:path", "module"),
        ("shutil:rmtree", "takes arguments"),
    ],
)
def test_a_reference_that_is_not_a_config_factory_is_refused_before_it_is_called(ref, what):
    with pytest.raises(ConfigError) as info:
        read_config_source(ref)
    message = str(info.value)
    assert ref in message and what in message
    assert "a dict" in message and "a function" in message  # the fix: what to name instead


@pytest.mark.parametrize(
    "body, raised",
    [
        ("raise SystemExit(0)", "SystemExit"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise GeneratorExit", "GeneratorExit"),
        ("raise RuntimeError('no settings here')", "RuntimeError"),
    ],
)
def test_a_factory_that_exits_or_fails_becomes_a_config_error(app_module, body, raised):
    name = app_module(f"def make():\n    {body}\n")
    with pytest.raises(ConfigError, match=rf"calling {name}:make\(\) .*{raised}"):
        read_config_source(f"{name}:make")


@pytest.mark.parametrize(
    "body, raised",
    [
        ("import sys\nsys.exit(3)", "SystemExit"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise ValueError('bad settings')", "ValueError"),
    ],
)
def test_an_import_that_exits_or_fails_becomes_a_config_error(app_module, body, raised):
    name = app_module(body + "\nCONFIG = {}\n")
    with pytest.raises(ConfigError, match=rf"importing module '{name}' for --config {name}:CONFIG .*{raised}"):
        read_config_source(f"{name}:CONFIG")


def test_a_factory_returning_something_else_is_refused(app_module):
    name = app_module("def make():\n    return ['not', 'a', 'dict']\n")
    with pytest.raises(ConfigError, match="holds a list, not a dict"):
        read_config_source(f"{name}:make")


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"bomb.yaml .*alias"):
        load_config(str(path))


def test_a_self_referencing_yaml_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("vector_store: &loop\n  config: *loop\n")
    with pytest.raises(ConfigError, match=r"loop.yaml .*refers to itself"):
        load_config(str(path))


def test_a_few_yaml_anchors_still_work(tmp_path):
    path = tmp_path / "mem0.yaml"
    path.write_text("common: &c {collection_name: mem0, on_disk: true}\nvector_store: {provider: qdrant, config: *c}\n")
    assert load_config(str(path))["vector_store"]["config"] == {"collection_name": "mem0", "on_disk": True}


@pytest.mark.parametrize("ext", [".json", ".yaml", ""])
def test_a_config_file_over_the_size_limit_is_refused_unread(tmp_path, ext):
    path = tmp_path / f"big{ext}"
    path.write_text(json.dumps({"pad": "x" * MAX_CONFIG_BYTES}))
    with pytest.raises(ConfigError, match=rf"big{ext} is larger than .*MiB"):
        load_config(str(path))


@pytest.mark.parametrize(
    "ext, text", [(".json", "[" * 100_000 + "]" * 100_000), (".yaml", "[" * 100_000 + "]" * 100_000)]
)
def test_a_deeply_nested_config_file_is_refused(tmp_path, ext, text):
    path = tmp_path / f"deep{ext}"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"deep{ext}"):
        load_config(str(path))
