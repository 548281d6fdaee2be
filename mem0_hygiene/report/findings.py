"""The vocabulary of an audit report: Severity, Finding, Skipped, the areas and the JSON schema version.

Plain frozen dataclasses, no formatting and no imports from the package: the checks build these, and the
renderers in :mod:`mem0_hygiene.render` read them without importing :class:`~mem0_hygiene.report.Report`
(whose ``__rich__`` and ``_repr_html_`` import the renderers), so the two never import each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


class Severity(enum.IntEnum):
    """How bad a finding is. Ordered: INFO < WARNING < ERROR."""

    INFO = 10
    WARNING = 20
    ERROR = 30

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(f"severity {value!r} is not one of info, warning, error") from None


@dataclass(frozen=True)
class Finding:
    """One thing the audit saw that an operator should know.

    Fields:
        code: stable identifier, e.g. ``STORE_VOLATILE``; documented in the README.
        severity: info, warning or error.
        area: the group it belongs to: storage, history, ledger, content, backups.
        title: one line saying what is wrong.
        count: how many memories/rows/files it concerns (0 when not countable).
        examples: a few ids or texts, shortest useful evidence.
        why: why it matters, one or two sentences.
        fix: what to do, as a command or a code line.
        details: extra facts (plain JSON-able values).
    """

    code: str
    severity: Severity
    area: str
    title: str
    count: int = 0
    examples: tuple[str, ...] = ()
    why: str = ""
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.label,
            "area": self.area,
            "title": self.title,
            "count": self.count,
            "examples": list(self.examples),
            "why": self.why,
            "fix": self.fix,
            "details": dict(self.details),
        }


@dataclass(frozen=True)
class Skipped:
    """A check that could not run. Never the same as clean.

    Fields:
        code: the check's identifier (the finding code family it would have produced).
        area: its group.
        reason: why it could not run, and what would let it run.
    """

    code: str
    area: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "area": self.area, "reason": self.reason}


AREAS = ("storage", "history", "ledger", "content", "backups")
