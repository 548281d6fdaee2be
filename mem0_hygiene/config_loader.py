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
import importlib
import json
import os
import re
import sys
from typing import Any

from .errors import ConfigError
from .offline import DEFAULT_DIMS, OFFLINE_PROVIDER

MODULE_REF = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
MEM0_DEFAULT_DIMS = 1536  # mem0's default embedding size (text-embedding-3-small, Qdrant's default)


def _copy_dicts(value: Any) -> Any:
    """Copy nested dicts and lists so edits do not reach the caller's object; other objects are shared."""
    if isinstance(value, dict):
        return {k: _copy_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_dicts(v) for v in value]
    return value


def _parse_file(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
    import yaml

    if ext in (".yaml", ".yml"):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is neither JSON nor YAML: {exc}") from exc


def _import_attribute(ref: str, module_name: str, attr: str) -> Any:
    added = False
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # the app's own modules, as `python -m` would find them
        added = True
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import module {module_name!r} for --config {ref}: {exc}") from exc
    except Exception as exc:
        raise ConfigError(
            f"importing module {module_name!r} for --config {ref} failed: {type(exc).__name__}: {exc}"
        ) from exc
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
    if callable(value) and not isinstance(value, dict):
        try:
            value = value()
        except Exception as exc:
            raise ConfigError(f"calling {ref}() failed: {type(exc).__name__}: {exc}") from exc
    return value


def read_config_source(source: str) -> dict[str, Any]:
    """The config dict named by ``source``: a JSON/YAML file, or ``module:ATTRIBUTE``.

    A file is parsed by its extension (``.json``, ``.yaml``/``.yml``), otherwise as JSON and then as
    YAML. ``module:ATTRIBUTE`` imports the module (the current folder is searchable, as with
    ``python -m``) and takes the attribute, a dict or a callable returning one. Importing runs the
    module's top-level code: name a module that does not open the store itself.
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
        raise ConfigError(
            f"{what} holds a {type(data).__name__}, not a dict like the one passed to Memory.from_config"
        )
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
    return apply_shortcuts(base, qdrant_path=qdrant_path, collection=collection, history_db=history_db,
                           ledger=ledger)


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

