"""Reading the app's mem0 config from outside the app: a JSON/YAML file or a ``module:ATTRIBUTE``.

:func:`load_config` returns the dict the app passes to ``Memory.from_config`` (hygiene section
included), with the command-line shortcuts applied. With nothing given it returns ``{}``: mem0's
defaults.

:func:`for_maintenance` makes such a config usable without any API key, for work that only reads
and deletes (audit, prune, where, relocate, backup): it swaps the embedder and the LLM for the
offline ones. It is kept separate on purpose: a config that must embed new text (add, search) has
to keep the app's real embedder, so :func:`load_config` never swaps anything.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import json
import os
import re
import sys
import types
from typing import Any

from .errors import ConfigError
from .offline import DEFAULT_DIMS, OFFLINE_PROVIDER

MODULE_REF = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
MEM0_DEFAULT_DIMS = 1536  # mem0's default embedding size (text-embedding-3-small, Qdrant's default)
MAX_CONFIG_BYTES = 2**20  # a config file larger than 1 MiB is refused unread
MAX_YAML_ALIASES = 100  # YAML aliases (*name) allowed in one config file
MAX_YAML_NODES = 100_000  # values a YAML config may hold once its aliases are expanded
_BUILTIN_CALLABLES = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


def _copy_dicts(value: Any) -> Any:
    """Copy nested dicts and lists so edits do not reach the caller's object; other objects are shared."""
    if isinstance(value, dict):
        return {k: _copy_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_dicts(v) for v in value]
    return value


def _too_big(path: str, size: int) -> ConfigError:
    return ConfigError(
        f"config file {path} is larger than {MAX_CONFIG_BYTES // 2**20} MiB ({size} bytes), far more "
        "than a mem0 config needs; check that --config names the app's config file"
    )


def _read_text(path: str) -> str:
    """The file's text, refused unread beyond :data:`MAX_CONFIG_BYTES`."""
    try:
        size = os.stat(path).st_size
        if size > MAX_CONFIG_BYTES:
            raise _too_big(path, size)
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)  # a file still growing is cut off here, not read whole
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise _too_big(path, len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); give the "
            "JSON or YAML file the app passes to Memory.from_config"
        ) from None


class _YamlRefused(ValueError):
    """A YAML document refused before it is built (too many aliases, too big once expanded, endless)."""


@functools.cache
def _bounded_yaml_loader() -> type:
    """PyYAML's SafeLoader that refuses alias bombs: at most :data:`MAX_YAML_ALIASES` aliases, and a
    document whose aliases would expand it beyond :data:`MAX_YAML_NODES` values, or into an endless
    structure, is refused after composing (a graph as big as the file) and before anything is built."""
    import yaml

    class BoundedSafeLoader(yaml.SafeLoader):
        aliases_seen = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases_seen += 1
                if self.aliases_seen > MAX_YAML_ALIASES:
                    raise _YamlRefused(f"uses more than {MAX_YAML_ALIASES} YAML aliases (*name)")
            return super().compose_node(parent, index)

        def get_single_node(self) -> Any:
            node = super().get_single_node()
            if node is not None:
                _expanded_size(node)
            return node

    return BoundedSafeLoader


def _expanded_size(root: Any) -> int:
    """How many values the YAML node graph ``root`` holds once every alias is expanded (each shared node
    counted once per use), refusing above :data:`MAX_YAML_NODES` or for a node that contains itself."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise _YamlRefused("has a YAML alias that refers to itself (an endless structure)")
        open_nodes.add(key)
        total = 1
        value = node.value
        if isinstance(value, list):
            for item in value:
                for child in item if isinstance(item, tuple) else (item,):
                    total += size(child)
                    if total > MAX_YAML_NODES:
                        raise _YamlRefused(
                            f"would expand to more than {MAX_YAML_NODES} values through its YAML aliases (*name)"
                        )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)


def _yaml(text: str, path: str) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=_bounded_yaml_loader())  # a SafeLoader, bounded
    except _YamlRefused as exc:
        raise ConfigError(
            f"config file {path} {exc}; refused without building it (a few aliases can make a "
            "file of some bytes expand to billions of values). Write the values out instead"
        ) from None


def yaml_problem(exc: Exception) -> str:
    """A YAML parser's error on one line, with the place in the file: "expected ',' or '}', but got '<scalar>'
    at line 4, column 1 (while parsing a flow mapping at line 3, column 11)" (PyYAML's own text spans lines and
    names the file "<unicode string>")."""
    problem = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split())
    out = str(problem)
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        out += f" at line {mark.line + 1}, column {mark.column + 1}"
    context, cmark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context:
        out += f" ({context}" + (f" at line {cmark.line + 1}, column {cmark.column + 1}" if cmark is not None else "")
        out += ")"
    return out


def _parse_file(path: str) -> Any:
    import yaml

    text = _read_text(path)
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".json":
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
        if ext in (".yaml", ".yml"):
            try:
                return _yaml(text, path)
            except yaml.YAMLError as exc:
                raise ConfigError(f"config file {path} is not valid YAML: {yaml_problem(exc)}") from exc
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
        try:
            return _yaml(text, path)
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is neither JSON nor YAML: {yaml_problem(exc)}") from exc
    except RecursionError:
        raise ConfigError(
            f"config file {path} is nested too deeply to read; a mem0 config is a few levels deep: "
            "check that --config names the app's config file"
        ) from None


def _not_a_factory(value: Any) -> str | None:
    """Why ``value`` cannot be a config or a config factory (None: a dict, a plain value, or a Python
    function that can be called without arguments). Decided before anything is called."""
    if isinstance(value, dict):
        return None
    if isinstance(value, types.ModuleType):
        return "a module"
    if isinstance(value, type):
        return f"a class ({value.__name__})"
    if isinstance(value, _BUILTIN_CALLABLES):
        return "a built-in function"
    if inspect.isfunction(value) or (inspect.ismethod(value) and inspect.isfunction(value.__func__)):
        if inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value):
            return "an async function"
        try:
            inspect.signature(value).bind()
        except TypeError:
            return "a function that takes arguments"
        except ValueError:
            return "a function whose signature cannot be read"
        return None
    if callable(value):
        return f"a callable {type(value).__name__} (not a plain function)"
    return None  # a plain value: read_config_source says if it is not a dict


def _stopped(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _import_attribute(ref: str, module_name: str, attr: str) -> Any:
    added = False
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # the app's own modules, as `python -m` would find them
        added = True
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"cannot import module {module_name!r} for --config {ref}: {exc}") from exc
    except BaseException as exc:  # SystemExit, KeyboardInterrupt too: the module's top level ran
        raise ConfigError(
            f"importing module {module_name!r} for --config {ref} failed with {_stopped(exc)}; --config imports "
            "the module, so name one that only defines the config (a dict, or a function returning one)"
        ) from None
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(cwd)
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ConfigError(f"module {module_name!r} has no attribute {attr!r} (from --config {ref})") from None
        except BaseException as exc:
            raise ConfigError(
                f"reading {attr!r} of module {module_name!r} for --config {ref} failed with {_stopped(exc)}"
            ) from None
    problem = _not_a_factory(value)
    if problem:
        raise ConfigError(
            f"--config {ref} names {problem}, not a config; name a dict (e.g. myapp.settings:MEM0_CONFIG), or a "
            "function taking no arguments that returns one (nothing was called)"
        )
    if callable(value) and not isinstance(value, dict):
        try:
            value = value()
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: a config factory must not exit
            raise ConfigError(
                f"calling {ref}() for --config failed with {_stopped(exc)}; it must return the config dict"
            ) from None
    return value


def read_config_source(source: str) -> dict[str, Any]:
    """The config dict named by ``source``: a JSON/YAML file, or ``module:ATTRIBUTE``.

    A file is parsed by its extension (``.json``, ``.yaml``/``.yml``), otherwise as JSON and then as
    YAML. ``module:ATTRIBUTE`` imports the module (the current folder is searchable, as with
    ``python -m``) and takes the attribute: a dict, or a plain Python function taking no arguments that
    returns one. Anything else (a built-in such as ``sys:exit`` or ``os:abort``, a class, a module, a
    function that needs arguments) is refused before it is called; an import or a call that raises,
    exits (``SystemExit``) or is interrupted becomes a :class:`ConfigError`. Importing runs the module's
    top-level code: name a module that only defines the config (one that calls ``os._exit`` while
    imported cannot be stopped). A file is refused above :data:`MAX_CONFIG_BYTES`, and YAML with more
    than :data:`MAX_YAML_ALIASES` aliases or expanding beyond :data:`MAX_YAML_NODES` values (an alias
    bomb) is refused without being built.
    """
    if os.path.exists(source):
        if os.path.isdir(source):
            raise ConfigError(f"config {source} is a folder; give a JSON or YAML file")
        data = _parse_file(source)
        what = f"config file {source}"
        if data is None:
            raise ConfigError(f"{what} is empty; omit --config to use mem0's defaults")
    else:
        match = MODULE_REF.match(source)
        if not match:
            raise ConfigError(
                f"config {source!r}: no such file, and not a module:ATTRIBUTE reference "
                "(e.g. myapp.settings:MEM0_CONFIG)"
            )
        data = _import_attribute(source, match["module"], match["attr"])
        what = f"{source}"
    if not isinstance(data, dict):
        raise ConfigError(f"{what} holds a {type(data).__name__}, not a dict like the one passed to Memory.from_config")
    return data


def _section(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        value = {}
        parent[key] = value
    if not isinstance(value, dict):
        raise ConfigError(f"{where} is a {type(value).__name__}, not a dict")
    return value


def apply_shortcuts(
    config: dict[str, Any],
    *,
    qdrant_path: str | os.PathLike[str] | None = None,
    collection: str | None = None,
    history_db: str | os.PathLike[str] | None = None,
    ledger: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """A copy of ``config`` with the shortcut values set (None leaves a key as it is)."""
    out = _copy_dicts(config)
    if qdrant_path is not None or collection is not None:
        vs = _section(out, "vector_store", "vector_store")
        provider = vs.get("provider") or "qdrant"
        vs_conf = _section(vs, "config", "vector_store.config")
        if qdrant_path is not None:
            if provider != "qdrant":
                raise ConfigError(
                    f"--qdrant-path names a local Qdrant folder, but the config's vector store is {provider!r}"
                )
            remote = [k for k in ("url", "host", "client") if vs_conf.get(k)]
            if remote:
                raise ConfigError(
                    f"--qdrant-path names a local Qdrant folder, but the config points at a Qdrant server "
                    f"({', '.join('vector_store.config.' + k for k in remote)}); use one or the other"
                )
            vs["provider"] = "qdrant"
            vs_conf["path"] = os.path.abspath(os.path.expanduser(os.fspath(qdrant_path)))
        if collection is not None:
            vs.setdefault("provider", provider)
            vs_conf["collection_name"] = collection
    if history_db is not None:
        out["history_db_path"] = os.path.abspath(os.path.expanduser(os.fspath(history_db)))
    if ledger is not None:
        hygiene = _section(out, "hygiene", "hygiene")
        path = os.fspath(ledger)
        hygiene["ledger_path"] = path if path == ":memory:" else os.path.abspath(os.path.expanduser(path))
    return out


def load_config(
    config: str | None = None,
    *,
    qdrant_path: str | os.PathLike[str] | None = None,
    collection: str | None = None,
    history_db: str | os.PathLike[str] | None = None,
    ledger: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The app's mem0 config dict, from ``config`` (a file or ``module:ATTRIBUTE``) plus shortcuts.

    Shortcuts override or insert ``vector_store.config.path`` (``qdrant_path``),
    ``vector_store.config.collection_name`` (``collection``), ``history_db_path`` (``history_db``) and
    ``hygiene.ledger_path`` (``ledger``); paths are made absolute. With nothing given the result is
    ``{}``, meaning mem0's defaults. The embedder and LLM are left as configured: use
    :func:`for_maintenance` for work that needs no API key. Raises
    :class:`~mem0_hygiene.errors.ConfigError` naming the file and the problem.
    """
    base = read_config_source(config) if config else {}
    return apply_shortcuts(base, qdrant_path=qdrant_path, collection=collection, history_db=history_db, ledger=ledger)


def _dims(config: dict[str, Any]) -> int:
    """The embedding size the vector store was created with, by mem0's rules."""
    vs_conf = (config.get("vector_store") or {}).get("config") or {}
    if isinstance(vs_conf, dict) and vs_conf.get("embedding_model_dims"):
        return int(vs_conf["embedding_model_dims"])
    embedder = config.get("embedder") or {}
    if embedder.get("provider") == OFFLINE_PROVIDER:  # build_mem0_config gives the store its size
        return int((embedder.get("config") or {}).get("embedding_dims") or DEFAULT_DIMS)
    return MEM0_DEFAULT_DIMS


def for_maintenance(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` that opens the stores without any LLM or embedding API key.

    For commands that only read or delete (they never embed text or call an LLM). The embedder and
    the LLM become mem0-hygiene's offline providers, whether the config named them or not: mem0
    builds both when a ``Memory`` is created, and a hosted provider refuses to start without its key.
    The embedding size stays what the store was created with (the vector store's
    ``embedding_model_dims``, else mem0's default 1536; for a config already offline, its own size),
    so an existing collection is opened as it is and a missing one is created with the app's size.
    Pass the result through :func:`mem0_hygiene.config.build_mem0_config`, which knows the offline
    providers.
    """
    out = _copy_dicts(config)
    dims = _dims(out)
    out["embedder"] = {"provider": OFFLINE_PROVIDER, "config": {"embedding_dims": dims}}
    out["llm"] = {"provider": OFFLINE_PROVIDER}
    return out


def describe_source(config: str | None) -> str:
    """How the config was given, for messages: the file, the module reference, or mem0's defaults."""
    return config if config else "mem0's defaults"


__all__ = [
    "apply_shortcuts",
    "describe_source",
    "for_maintenance",
    "load_config",
    "read_config_source",
]
