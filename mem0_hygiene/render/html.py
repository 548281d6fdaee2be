"""The audit report as HTML: a standalone page (``--html FILE``) and a fragment for Jupyter.

Hand-built tables rather than a styled ``<pre>``, so a notebook shows the report as data: a summary
table, one findings table per area (in :data:`mem0_hygiene.report.AREAS` order), the skipped checks
and the store locations. The content and its order match the terminal renderer.

Everything that comes from a store or a check (memory texts, paths, reasons, details) is escaped
with :func:`html.escape` after :func:`~mem0_hygiene.render.text.printable` (credentials redacted,
control and bidirectional characters made visible; the details go through the JSON encoder, which does
the same); a memory reading ``<script>...`` shows as text and never runs. Colours are inline styles, so
they survive notebook front-ends that drop ``<style>`` elements.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from ..report import Finding, Report, Severity
from .json import to_json
from .terminal import (
    example_lines,
    fix_lines,
    human_size,
    location_fstype,
    location_where,
    ordered_areas,
    printable,
    summary_line,
    verdict,
    yes_no,
)

SEVERITY_COLOURS: dict[Severity, str] = {
    Severity.ERROR: "#c62828",
    Severity.WARNING: "#b26a00",
    Severity.INFO: "#1565c0",
}
"""Text colour of each severity's label (red, amber, blue: the terminal's colours)."""

CELL_STYLE = "border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top"
TABLE_STYLE = "border-collapse:collapse;margin:0.5em 0 1em 0"

_PAGE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em; color: #222; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { margin: 0; white-space: pre; overflow-x: auto; }
"""


def _e(value: object) -> str:
    """Escape a value for HTML text or an attribute, control characters made visible first."""
    return html.escape(printable(value), quote=True)


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]], cls: str) -> str:
    """A table whose cells are already-escaped HTML strings."""
    head = "".join(f'<th style="{CELL_STYLE}">{html.escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f'<td style="{CELL_STYLE}">{cell}</td>' for cell in row) + "</tr>" for row in rows)
    return f'<table class="{cls}" style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _severity(sev: Severity) -> str:
    return f'<strong style="color:{SEVERITY_COLOURS[sev]}">{sev.label.upper()}</strong>'


def _summary(report: Report) -> str:
    worst = report.worst()
    colour = (
        SEVERITY_COLOURS[worst] if worst and worst > Severity.INFO else ("#b26a00" if report.skipped else "#2e7d32")
    )
    rows = [
        ("Target", _e(report.target or "-")),
        ("Findings", _e(summary_line(report))),
        ("Verdict", f'<strong style="color:{colour}">{_e(verdict(report))}</strong>'),
    ]
    if report.started_at or report.finished_at:
        rows.append(("Run", _e(f"{report.started_at or '?'} -> {report.finished_at or '?'}")))
    body = "".join(f'<tr><th style="{CELL_STYLE}">{k}</th><td style="{CELL_STYLE}">{v}</td></tr>' for k, v in rows)
    return f'<table class="m0h-summary" style="{TABLE_STYLE}"><tbody>{body}</tbody></table>'


def _examples(finding: Finding) -> str:
    shown, more = example_lines(finding)
    if not shown:
        return ""
    items = "".join(f"<li>{html.escape(e, quote=True)}</li>" for e in shown)
    if more:
        items += f"<li><em>(+{more} more)</em></li>"
    return f'<ul style="margin:0;padding-left:1.2em">{items}</ul>'


def _fix(finding: Finding) -> str:
    lines = fix_lines(finding)
    if not lines:
        return ""
    return "<pre><code>" + html.escape("\n".join(lines), quote=True) + "</code></pre>"


def _details(finding: Finding) -> str:
    if not finding.details:
        return ""
    text = to_json(finding.details)
    return f"<details><summary>details</summary><pre>{html.escape(text, quote=True)}</pre></details>"


def _findings(report: Report) -> str:
    if not report.findings:
        return '<p class="m0h-none" style="color:#2e7d32">No findings.</p>'
    parts: list[str] = []
    for area, findings in ordered_areas(report):
        parts.append(f"<h3>{_e(area.capitalize())} ({len(findings)})</h3>")
        rows = [
            [
                _severity(f.severity),
                f"<code>{_e(f.code)}</code>",
                _e(f.title) + _details(f),
                str(f.count) if f.count else "",
                _examples(f),
                _e(f.why),
                _fix(f),
            ]
            for f in findings
        ]
        parts.append(_table(["Severity", "Code", "Title", "Count", "Examples", "Why", "Fix"], rows, "m0h-findings"))
    return "".join(parts)


def _skipped(report: Report) -> str:
    head = f"<h3>Skipped checks ({len(report.skipped)})</h3>"
    if not report.skipped:
        return head + "<p>None: every check ran.</p>"
    rows = [[f"<code>{_e(s.code)}</code>", _e(s.area), _e(s.reason)] for s in report.skipped]
    return head + _table(["Code", "Area", "Reason"], rows, "m0h-skipped")


def _locations(report: Report) -> str:
    head = "<h3>Store locations</h3>"
    if not report.locations:
        return head + "<p>No store locations recorded.</p>"
    rows = []
    for loc in report.locations:
        volatile, under_tmp = loc.get("volatile"), loc.get("under_tmp")
        rows.append(
            [
                _e(loc.get("role") or "-"),
                f"<code>{html.escape(location_where(loc), quote=True)}</code>",
                html.escape(location_fstype(loc)),
                '<strong style="color:#c62828">yes</strong>' if volatile is True else yes_no(volatile),
                '<span style="color:#b26a00">yes</span>' if under_tmp is True else yes_no(under_tmp),
                yes_no(loc.get("exists")) if loc.get("path") else "-",
                human_size(loc.get("size_bytes")),
            ]
        )
    headers = ["Role", "Path or remote", "FS", "Volatile", "Under /tmp", "Exists", "Size"]
    return head + _table(headers, rows, "m0h-locations")


def report_html_fragment(report: Report) -> str:
    """The report as an HTML ``<div>`` (no ``<html>``/``<head>``): what Jupyter shows for a Report."""
    return (
        '<div class="mem0-hygiene-report">'
        "<h2>mem0-hygiene audit</h2>"
        + _summary(report)
        + _findings(report)
        + _skipped(report)
        + _locations(report)
        + "</div>"
    )


def format_html(report: Report) -> str:
    """The report as a standalone UTF-8 HTML page (for ``--html FILE``)."""
    title = "mem0-hygiene audit" + (f": {printable(report.target)}" if report.target else "")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title, quote=True)}</title>\n"
        f"<style>{_PAGE_CSS}</style>\n"
        "</head>\n<body>\n" + report_html_fragment(report) + "\n</body>\n</html>\n"
    )
