"""The audit's figures in the Prometheus text exposition format, for the node exporter's textfile collector
(``mem0-hygiene audit --format prometheus -o /var/lib/node_exporter/textfile/mem0.prom``).

:func:`format_prometheus` writes gauges only (an audit is a snapshot): findings by code (the count of memories,
rows or files each concerns, labelled with severity and area), the number of findings per severity, the checks
that could not run, every numeric figure of ``Report.stats`` (nested figures flattened into a ``key`` label), the
run's time and whether the verdict is complete. No example text or id is written: a label holds only codes,
areas, severities and stat names.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..report.findings import Severity

if TYPE_CHECKING:
    from ..report import Report

PREFIX = "mem0_hygiene_audit"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}" if labels else ""


def _number(value: Any) -> str | None:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    return None


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    number = _number(value)
    if number is not None:
        out.append((prefix, number))
    elif isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)


def _metric(lines: list[str], name: str, help_text: str, samples: list[tuple[dict[str, str], str]]) -> None:
    lines.append(f"# HELP {PREFIX}_{name} {help_text}")
    lines.append(f"# TYPE {PREFIX}_{name} gauge")
    lines += [f"{PREFIX}_{name}{_labels(**labels)} {value}" for labels, value in samples]


def format_prometheus(report: Report) -> str:
    """The report's figures as Prometheus text format (gauges), ending with a newline."""
    lines: list[str] = []
    _metric(
        lines,
        "finding",
        "Memories, rows or files each finding of the last audit concerns (1 when not countable).",
        [({"code": f.code, "severity": f.severity.label, "area": f.area}, str(f.count or 1)) for f in report.findings],
    )
    _metric(
        lines,
        "findings",
        "Findings of the last audit per severity.",
        [({"severity": s.label}, str(sum(1 for f in report.findings if f.severity is s))) for s in Severity],
    )
    _metric(
        lines,
        "skipped_check",
        "Checks of the last audit that could not run (never clean).",
        [({"code": s.code, "area": s.area}, "1") for s in report.skipped],
    )
    figures: list[tuple[str, str]] = []
    _flatten("", report.stats, figures)
    _metric(
        lines,
        "stat",
        "Numeric figures of the last audit (Report.stats, nested keys joined by dots).",
        [({"key": re.sub(r"\s+", "_", k)}, v) for k, v in figures],
    )
    complete = "0" if report.stats.get("vector_store_unsupported") else "1"
    _metric(lines, "complete", "1 when every store could be read (0: the verdict is incomplete).", [({}, complete)])
    when = report.finished_at or report.started_at
    if when:
        stamp = datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
        _metric(lines, "timestamp_seconds", "When the last audit finished (Unix time).", [({}, repr(stamp))])
    return "\n".join(lines) + "\n"


__all__ = ["format_prometheus"]
