"""The audit's data model: Severity, Finding, Skipped (in :mod:`.findings`) and Report. Plain frozen
dataclasses; no formatting.

Renderers (terminal, JSON, HTML) live in :mod:`mem0_hygiene.render`; a Report only knows how to
turn itself into a plain dict (the JSON schema, versioned by ``SCHEMA_VERSION``), and its ``__rich__`` and
``_repr_html_`` hand it to the renderers when it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .findings import AREAS, SCHEMA_VERSION, Finding, Severity, Skipped

__all__ = ["AREAS", "SCHEMA_VERSION", "Finding", "Report", "Severity", "Skipped"]


@dataclass(frozen=True)
class Report:
    """Everything one audit run found.

    Fields:
        findings: what was seen, most severe first.
        skipped: checks that could not run, with reasons.
        locations: where each store lives (plain dicts from ``StoreLocation.to_dict``).
        stats: counts the audit gathered (memories, history rows by event, ledger rows by state...).
        started_at, finished_at: UTC ISO times of the run.
        target: a short description of what was audited (config file or "mem0 defaults").
    """

    findings: tuple[Finding, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    locations: tuple[dict[str, Any], ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    finished_at: str = ""
    target: str = ""

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def at_or_above(self, level: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity >= level]

    def counts(self) -> dict[str, int]:
        out = {s.label: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.label] += 1
        return out

    def by_area(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.area, []).append(f)
        return out

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def get(self, code: str) -> Finding | None:
        return next((f for f in self.findings if f.code == code), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": "mem0-hygiene",
            "target": self.target,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "summary": {**self.counts(), "skipped": len(self.skipped)},
            "findings": [f.to_dict() for f in self.findings],
            "skipped": [s.to_dict() for s in self.skipped],
            "locations": [dict(loc) for loc in self.locations],
            "stats": dict(self.stats),
        }

    def __rich__(self) -> Any:
        """The report as a rich ``RenderableType``: ``rich.print(report)`` shows what the CLI shows."""
        from ..render.terminal import report_renderable

        return report_renderable(self)

    def _repr_html_(self) -> str:
        """The report as HTML tables in Jupyter."""
        from ..render.html import report_html_fragment

        return report_html_fragment(self)
