"""The audit report as a stable JSON document, and the JSON Schema (draft 2020-12) that describes it.

The document is ``Report.to_dict()`` serialised as it is: keys keep the order ``to_dict`` gives them
(never sorted), two-space indent, UTF-8 text left readable (``ensure_ascii=False``). Its shape is
versioned by ``schema_version`` (:data:`mem0_hygiene.report.SCHEMA_VERSION`); :data:`JSON_SCHEMA`
spells it out so consumers (and the tests) can validate it.

:func:`to_json` is the one encoder of every ``--json`` output. What it writes is safe to print: credentials
in string values are redacted (unless inside :func:`~mem0_hygiene.render.text.revealing_secrets`), and
every character that could drive or reorder a terminal (C0 and C1 controls, DEL, the bidirectional
controls and line separators of :data:`~mem0_hygiene.render.text.INVISIBLE`) is written as a ``\\uXXXX``
escape, so the document stays valid JSON and parses back to the same text. Other non-ASCII text
(Hebrew, Arabic, accents, "…") stays readable.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from ..display.text import INVISIBLE, redacted_data
from ..report.findings import AREAS, SCHEMA_VERSION, Severity

if TYPE_CHECKING:  # the renderers read a Report; Report.__rich__ imports them when shown
    from ..report import Report

_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_NULLABLE_BOOL: dict[str, Any] = {"type": ["boolean", "null"]}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}

JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "mem0-hygiene audit report",
    "description": "The output of `mem0-hygiene audit --json`, version 1.",
    "type": "object",
    "required": [
        "schema_version",
        "tool",
        "target",
        "started_at",
        "finished_at",
        "summary",
        "findings",
        "skipped",
        "locations",
        "stats",
    ],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION, "description": "Bumped when the document's shape changes."},
        "tool": {"const": "mem0-hygiene"},
        "target": {"type": "string", "description": "What was audited: a config file or 'mem0 defaults'."},
        "started_at": {"type": "string", "description": "UTC ISO 8601 time the run started ('' if unknown)."},
        "finished_at": {"type": "string", "description": "UTC ISO 8601 time the run finished ('' if unknown)."},
        "summary": {
            "type": "object",
            "description": "How many findings of each severity, and how many checks could not run.",
            "required": ["error", "warning", "info", "skipped"],
            "additionalProperties": False,
            "properties": {"error": _COUNT, "warning": _COUNT, "info": _COUNT, "skipped": _COUNT},
        },
        "findings": {
            "type": "array",
            "description": "What the audit saw, most severe first.",
            "items": {"$ref": "#/$defs/finding"},
        },
        "skipped": {
            "type": "array",
            "description": "Checks that could not run; never the same as clean.",
            "items": {"$ref": "#/$defs/skipped"},
        },
        "locations": {
            "type": "array",
            "description": "Where each store lives.",
            "items": {"$ref": "#/$defs/location"},
        },
        "stats": {"type": "object", "description": "Counts the audit gathered (memories, history rows by event...)."},
    },
    "$defs": {
        "finding": {
            "type": "object",
            "required": ["code", "severity", "area", "title", "count", "examples", "why", "fix", "details"],
            "additionalProperties": False,
            "properties": {
                "code": {
                    "type": "string",
                    "pattern": "^[A-Z][A-Z0-9_]*$",
                    "description": "Stable identifier, e.g. STORE_VOLATILE; documented in the README.",
                },
                "severity": {"enum": [s.label for s in sorted(Severity)]},
                "area": {"enum": list(AREAS)},
                "title": {"type": "string", "minLength": 1},
                "count": {**_COUNT, "description": "Memories/rows/files concerned; 0 when not countable."},
                "examples": {"type": "array", "items": {"type": "string"}},
                "why": {"type": "string"},
                "fix": {"type": "string", "description": "A command or code line; may span several lines."},
                "details": {"type": "object"},
            },
        },
        "skipped": {
            "type": "object",
            "required": ["code", "area", "reason"],
            "additionalProperties": False,
            "properties": {
                "code": {"type": "string", "minLength": 1},
                "area": {"type": "string"},
                "reason": {"type": "string", "minLength": 1},
            },
        },
        "filesystem": {
            "type": "object",
            "required": ["fstype"],
            "properties": {
                "fstype": {"type": "string"},
                "target": {"type": "string"},
                "source": {"type": "string"},
                "method": {"enum": ["findmnt", "mountinfo", "unknown"]},
                "volatile": {"type": "boolean"},
            },
        },
        "location": {
            "type": "object",
            "required": ["role"],
            "properties": {
                "role": {"type": "string"},
                "provider": {"type": "string"},
                "path": _NULLABLE_STRING,
                "remote": _NULLABLE_STRING,
                "collection": _NULLABLE_STRING,
                "defaulted": {"type": "boolean"},
                "exists": {"type": "boolean"},
                "size_bytes": {"type": ["integer", "null"], "minimum": 0},
                "writable": _NULLABLE_BOOL,
                "filesystem": {"oneOf": [{"$ref": "#/$defs/filesystem"}, {"type": "null"}]},
                "volatile": {"type": "boolean"},
                "under_tmp": {"type": "boolean"},
                "note": {"type": "string"},
            },
        },
    },
}
"""JSON Schema (draft 2020-12) of the document :func:`format_json` writes."""


def _default(value: Any) -> Any:
    """Turn the odd non-JSON value a check may leave in ``details`` or ``stats`` into JSON."""
    if isinstance(value, enum.Enum):
        return value.value if isinstance(value.value, (str, int, float)) else value.name
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        return to_dict() if callable(to_dict) else dataclasses.asdict(value)
    return str(value)


def _redacted_default(value: Any) -> Any:
    return redacted_data(_default(value))


# json.dumps escapes C0 controls itself (\u001b); these it leaves raw with ensure_ascii=False.
_ESCAPES = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0), *INVISIBLE)}


def to_json(data: Any) -> str:
    """Any JSON-ready value (a result's ``to_dict()``) as an indented JSON document, no trailing newline: the
    one encoder behind every ``--json``. Credentials redacted, control and bidirectional characters escaped."""
    text = json.dumps(redacted_data(data), indent=2, ensure_ascii=False, default=_redacted_default)
    return text.translate(_ESCAPES)


def format_json(report: Report) -> str:
    """``report`` as a JSON document (no trailing newline), keys in ``Report.to_dict()`` order."""
    return to_json(report.to_dict())
