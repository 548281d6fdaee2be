"""Rewriting the app's own config file with new store paths (``relocate --update-config FILE``).

:func:`plan_config_rewrite` reads a JSON or YAML file, sets the given keys (``vector_store.config.path``,
``history_db_path``, ``hygiene.ledger_path``, ...) and returns the new text without writing anything, so a
caller can check the file before it moves a store; :func:`write_config_file` then writes that text
atomically (a temporary file beside it, the file's mode kept, ``os.replace``; a link is followed, so the
link stays).

- JSON: parsed and dumped again with the file's indentation and key order (JSON has no comments).
- YAML: only the lines of the keys that change are edited (a missing key is inserted under its section),
  so comments, order and quoting elsewhere are kept; the edited text is parsed back and must give exactly
  the intended dict. Where a line edit cannot do it (a key in flow style ``{...}``, a value spanning lines,
  anchors), the whole document is dumped again instead and the result says that comments were not kept.

A ``module:ATTRIBUTE`` config lives in Python code and is refused with the keys to set by hand.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Any

from ..config_loader import MODULE_REF, read_config_source
from ..errors import ConfigError
from ..stores.durable import write_file
from ..stores.staging import remove_stale_copies, staging_prefix

KeyPath = tuple[str, ...]


@dataclass(frozen=True)
class ConfigRewrite:
    """The new contents of a config file, not written yet (see :func:`write_config_file`).

    Fields:
        path: the file to write (a link's target, so the link stays).
        format: "json" or "yaml".
        changes: each key that changes, dotted ("vector_store.config.path"), with its old and new value.
        text: the new contents.
        comments_kept: False when a YAML file had to be dumped again whole (its comments are lost).
    """

    path: str
    format: str
    changes: tuple[tuple[str, Any, Any], ...]
    text: str
    comments_kept: bool = True

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "comments_kept": self.comments_kept,
            "changes": [{"key": k, "old": old, "new": new} for k, old, new in self.changes],
        }


def _get(data: dict[str, Any], key: KeyPath) -> Any:
    node: Any = data
    for part in key:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _set(data: dict[str, Any], key: KeyPath, value: Any, where: str) -> None:
    node = data
    for i, part in enumerate(key[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(
                f"{where}: {'.'.join(key[: i + 1])} is a {type(child).__name__}, not a section; fix the file by hand"
            )
        node = child
    node[key[-1]] = value


def _read(path: str) -> tuple[str, str, dict[str, Any]]:
    if not os.path.exists(path):
        if MODULE_REF.match(path):
            raise ConfigError(
                f"--update-config {path} names a module:ATTRIBUTE: that config is Python code, which "
                "mem0-hygiene does not rewrite. Leave --update-config out and set the printed keys in the code "
                "by hand, or give the JSON/YAML file the app reads"
            )
        raise ConfigError(f"--update-config {path}: no such file (give the app's JSON or YAML config file)")
    if os.path.isdir(path):
        raise ConfigError(f"--update-config {path} is a folder; give the app's JSON or YAML config file")
    data = read_config_source(path)  # the same bounded reader as --config (size, YAML aliases)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    ext = os.path.splitext(path)[1].lower()
    fmt = "json" if ext == ".json" else "yaml"
    if ext not in (".json", ".yaml", ".yml"):
        with contextlib.suppress(ValueError):
            json.loads(text)
            fmt = "json"
    return text, fmt, data


def _json_text(original: str, data: dict[str, Any]) -> str:
    if "\n" not in original.strip():
        return json.dumps(data, ensure_ascii=False) + "\n"
    match = re.search(r"\n([ \t]+)\S", original)
    indent: int | str = 2
    if match:
        indent = match.group(1) if "\t" in match.group(1) else len(match.group(1))
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------------------- YAML line edits


def _yaml_scalar(value: Any) -> str:
    import yaml

    dumped = yaml.safe_dump({"k": value}, default_flow_style=False, allow_unicode=True, width=10_000)
    return dumped.split(":", 1)[1].strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _key_match(line: str, key: str) -> re.Match[str] | None:
    pattern = rf"^(?P<head>\s*(?P<q>[\"']?){re.escape(key)}(?P=q)\s*:)(?P<rest>(?:\s.*)?)$"
    return re.match(pattern, line.rstrip("\r\n"))


def _split_comment(rest: str) -> tuple[str, str]:
    """(value, comment with its leading spaces) of what follows ``key:`` on a line."""
    quote = ""
    for i, ch in enumerate(rest):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and not rest[:i].strip():
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1] in " \t"):
            j = i
            while j > 0 and rest[j - 1] in " \t":
                j -= 1
            return rest[:j], rest[j:]
    return rest, ""


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index after the last line that belongs to the block opened by the key line ``start - 1``."""
    end = start
    for i in range(start, len(lines)):
        if _is_content(lines[i]) and _indent(lines[i]) <= indent:
            break
        end = i + 1
    return end


def _yaml_set(lines: list[str], key: KeyPath, value: Any) -> list[str] | None:
    """``lines`` with ``key`` set to ``value`` by editing or inserting lines; None when that is not possible."""
    start, end, parent_indent, parent_line = 0, len(lines), -1, -1
    step = 2
    for depth, part in enumerate(key):
        child_indent: int | None = None
        found = None
        for i in range(start, end):
            line = lines[i]
            if not _is_content(line):
                continue
            ind = _indent(line)
            if child_indent is None:
                child_indent = ind
            if ind != child_indent:
                continue
            if _key_match(line, part):
                found = i
                break
        if child_indent is not None and parent_indent >= 0:
            step = max(1, child_indent - parent_indent)
        if found is None:
            ind = child_indent if child_indent is not None else parent_indent + step if parent_indent >= 0 else 0
            new = []
            for k, part_k in enumerate(key[depth:]):
                pad = " " * (ind + k * step)
                last = depth + k == len(key) - 1
                new.append(f"{pad}{part_k}: {_yaml_scalar(value)}\n" if last else f"{pad}{part_k}:\n")
            at = parent_line + 1 if parent_line >= 0 else len(lines)
            if at == len(lines) and lines and not lines[-1].endswith("\n"):
                lines = [*lines[:-1], lines[-1] + "\n"]
            return [*lines[:at], *new, *lines[at:]]
        match = _key_match(lines[found], part)
        assert match is not None
        rest_value, comment = _split_comment(match["rest"])
        ind = _indent(lines[found])
        if depth == len(key) - 1:
            v = rest_value.strip()
            below = lines[found + 1 : _block_end(lines, found + 1, ind)]
            if not v or v[0] in "|>{[&*!" or any(_is_content(x) for x in below):
                return None  # a section, a block scalar, flow style, an anchor or a value spanning lines
            newline = "\r\n" if lines[found].endswith("\r\n") else "\n" if lines[found].endswith("\n") else ""
            lines = list(lines)
            lines[found] = f"{match['head']} {_yaml_scalar(value)}{comment}{newline}"
            return lines
        if rest_value.strip():
            return None  # the section is written in flow style or is not a mapping
        parent_indent, parent_line = ind, found
        start, end = found + 1, _block_end(lines, found + 1, ind)
    return None


def _yaml_text(original: str, updates: dict[KeyPath, Any], expected: dict[str, Any]) -> tuple[str, bool]:
    import yaml

    lines: list[str] | None = original.splitlines(keepends=True)
    for key, value in updates.items():
        if lines is None:
            break
        lines = _yaml_set(lines, key, value)
    if lines is not None:
        text = "".join(lines)
        try:
            if yaml.safe_load(text) == expected:
                return text, True
        except yaml.YAMLError:
            pass
    return yaml.safe_dump(expected, sort_keys=False, default_flow_style=False, allow_unicode=True), False


# ---------------------------------------------------------------------------------------------- public


def plan_config_rewrite(path: str | os.PathLike[str], updates: dict[KeyPath, Any]) -> ConfigRewrite:
    """The new contents of the config file at ``path`` with each key of ``updates`` set; nothing is written.

    Raises :class:`~mem0_hygiene.errors.ConfigError` for a ``module:ATTRIBUTE``, a missing or unreadable
    file, or one that does not hold a dict.
    """
    given = os.fspath(path)
    real = os.path.realpath(os.path.expanduser(given)) if os.path.exists(given) else given
    text, fmt, data = _read(real)
    expected = copy.deepcopy(data)
    changes = []
    for key, value in updates.items():
        old = _get(data, key)
        if old != value:
            changes.append((".".join(key), old, value))
        _set(expected, key, value, real)
    if not changes:
        return ConfigRewrite(path=real, format=fmt, changes=(), text=text)
    todo = {k: v for k, v in updates.items() if _get(data, k) != v}
    if fmt == "json":
        return ConfigRewrite(path=real, format=fmt, changes=tuple(changes), text=_json_text(text, expected))
    new_text, kept = _yaml_text(text, todo, expected)
    return ConfigRewrite(path=real, format=fmt, changes=tuple(changes), text=new_text, comments_kept=kept)


def write_config_file(rewrite: ConfigRewrite) -> None:
    """Write the new contents durably (:func:`~mem0_hygiene.stores.durable.write_file`: a temporary file beside
    the file, its mode kept, fsync, ``os.replace``, the folder fsynced). A rewrite without changes writes nothing."""
    if not rewrite.changed:
        return
    remove_stale_copies(rewrite.path)
    try:
        mode = stat.S_IMODE(os.stat(rewrite.path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    write_file(rewrite.path, rewrite.text, mode=mode, prefix=staging_prefix(rewrite.path))
