"""The audit report as HTML: a standalone page (``--html FILE``) and the fragment Jupyter shows.

One renderer for both. The page is self-contained: its stylesheet (:mod:`.html_style`) is inline, it loads
nothing (a Content-Security-Policy forbids scripts and fetches) and it prints cleanly. It reads top to bottom
as the terminal report does:

1. a header: the verdict, the target and run, counts per severity and one small bar per area;
2. the findings as cards, most severe first (every error before any warning), then by area in
   :data:`mem0_hygiene.report.AREAS` order: severity badge, code, count, title, why, the fix as a code block
   that wraps at spaces (one click selects all of it, so it copies whole), the examples and the details (a
   key/value list) folded in ``<details>``;
3. the skipped checks, always shown (a check that could not run is never silently clean);
4. the store map: where each store lives, and which of them are volatile or under a temp folder.

Everything that comes from a store or a check (memory texts, paths, reasons, details, keys too) goes through
:func:`~mem0_hygiene.render.text.printable` (credentials redacted, control and bidirectional characters made
visible) and then :func:`html.escape`: a memory reading ``<script>...`` shows as text and never runs.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..display.text import plural, run_text
from ..report.findings import Finding, Severity
from .html_style import CONTENT_SECURITY_POLICY, PAGE_CSS, REPORT_CSS
from .json import to_json
from .terminal import (
    example_lines,
    fix_lines,
    human_size,
    location_fstype,
    location_where,
    ordered_areas,
    ordered_sections,
    printable,
    section_title,
    verdict,
    yes_no,
)

if TYPE_CHECKING:  # the renderers read a Report; Report.__rich__ imports them when shown
    from ..report import Report

SEVERITY_COLOURS: dict[Severity, str] = {
    Severity.ERROR: "#b42318",
    Severity.WARNING: "#8a4b00",
    Severity.INFO: "#175cd3",
}
"""Text colour of each severity's label (red, amber, blue: the terminal's colours), also inline on the badges so
they keep their colour where a front-end drops ``<style>`` elements."""

FIX_STYLE = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"
"""Inline style of a fix block, so it wraps at spaces even where the stylesheet is dropped."""

HIDDEN_DETAILS = frozenset({"summary"})
"""Detail keys that steer the rendering (``summary``: the examples are a breakdown) and are not shown."""


def e(value: object) -> str:
    """A value as escaped HTML text (safe in an attribute too): made printable first, credentials redacted."""
    return html.escape(printable(value), quote=True)


def verdict_class(worst: Severity | None, *, skipped: bool = False) -> str:
    """The CSS class that colours the verdict: the worst severity when it is a warning or an error; else amber
    when a check could not run, green when all ran (information only is no problem)."""
    if worst is not None and worst > Severity.INFO:
        return f"m0h-sev-{worst.label}"
    return "m0h-sev-skipped" if skipped else "m0h-sev-ok"


def _count_items(report: Report) -> str:
    counts = report.counts()
    items = []
    for sev in sorted(Severity, reverse=True):
        n = counts[sev.label]
        label = "info" if sev is Severity.INFO else (sev.label if n == 1 else sev.label + "s")
        some = " m0h-some" if n else ""
        items.append(f'<li class="m0h-sev-{sev.label}{some}"><b>{n}</b> {label}</li>')
    skipped = len(report.skipped)
    some = " m0h-some" if skipped else ""
    noun = "check" if skipped == 1 else "checks"
    items.append(f'<li class="m0h-sev-skipped{some}"><b>{skipped}</b> skipped {noun}</li>')
    return f'<ul class="m0h-counts" aria-label="findings per severity">{"".join(items)}</ul>'


def area_id(area: str) -> str:
    """The id of an area's section (the header's bars link to it)."""
    return "m0h-area-" + "".join(ch if ch.isalnum() else "-" for ch in printable(area).lower())


def _area_bars(report: Report) -> str:
    groups = dict(ordered_areas(report))
    skipped: dict[str, int] = {}
    for skip in report.skipped:
        skipped[skip.area] = skipped.get(skip.area, 0) + 1
    areas = list(groups) + [a for a in skipped if a not in groups]
    if not areas:
        return ""
    widest = max(len(groups.get(a, [])) + skipped.get(a, 0) for a in areas)
    rows = []
    for area in areas:
        findings = groups.get(area, [])
        segments, words = [], []
        for sev in sorted(Severity, reverse=True):
            n = sum(1 for f in findings if f.severity is sev)
            if n:
                segments.append(f'<span class="m0h-sev-{sev.label}" style="width:{100 * n / widest:.2f}%"></span>')
                words.append(f"{n} {sev.label}" if sev is Severity.INFO else plural(n, sev.label, sev.label + "s"))
        if skipped.get(area):
            segments.append(
                f'<span class="m0h-sev-skipped" style="width:{100 * skipped[area] / widest:.2f}%;opacity:0.45"></span>'
            )
            words.append(f"{skipped[area]} skipped")
        name = e(area.capitalize())
        label = f'<a href="#{area_id(area)}">{name}</a>' if findings else name
        rows.append(
            f'<dt>{label}</dt><dd><div class="m0h-bar" role="img" aria-label="{e(", ".join(words))}">'
            f'{"".join(segments)}</div></dd><dd class="m0h-n">{e(", ".join(words))}</dd>'
        )
    return f'<dl class="m0h-areas" aria-label="findings per area">{"".join(rows)}</dl>'


def _header(report: Report) -> str:
    cls = verdict_class(report.worst(), skipped=bool(report.skipped))
    meta = [("Target", e(report.target or "-"))]
    if report.started_at or report.finished_at:
        meta.append(("Run", e(run_text(report.started_at, report.finished_at, "\u00a0"))))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta)
    return (
        f'<header class="m0h-head {cls}"><p class="m0h-kicker">mem0-hygiene audit</p>'
        f'<h2 class="m0h-verdict">{e(verdict(report))}</h2>'
        f'<dl class="m0h-meta">{dl}</dl>{_count_items(report)}{_area_bars(report)}</header>'
    )


def _tokens(text: str) -> str:
    """``text`` escaped, each run of non-spaces in a ``m0h-tok`` span: lines wrap at the spaces between them, never
    inside ``--with-sqlite`` or a path, unless one token alone is wider than the line. The text copies unchanged."""
    return "".join(
        f'<span class="m0h-tok">{html.escape(part, quote=True)}</span>' if part.strip() else part
        for part in re.split(r"( +)", text)
        if part
    )


def _fix_line(line: str) -> str:
    """One fix line, a trailing shell comment (``  # ...``) in a muted colour."""
    cut = 0 if line.startswith("#") else line.find("  # ")
    if cut < 0:
        return _tokens(line)
    return _tokens(line[:cut]) + f'<span class="m0h-comment">{_tokens(line[cut:])}</span>'


def _fix(finding: Finding) -> str:
    lines = fix_lines(finding)
    if not lines:
        return ""
    code = "\n".join(_fix_line(line) for line in lines)
    return (
        '<p class="m0h-label">Fix</p>'
        f'<pre class="m0h-fix" style="{FIX_STYLE}" title="one click selects the whole fix to copy">'
        f"<code>{code}</code></pre>"
    )


def _examples(finding: Finding) -> str:
    shown, more = example_lines(finding)
    if not shown:
        return ""
    items = "".join(f"<li>{html.escape(ex, quote=True)}</li>" for ex in shown)
    if finding.details.get("summary"):
        return f'<details class="m0h-examples" open><summary>Breakdown</summary><ul>{items}</ul></details>'
    if more:
        items += f"<li><em>+{more} more</em></li>"
    total = len(shown) + more
    head = f"Examples ({len(shown)} of {total})" if more else f"Example{'s' if total > 1 else ''} ({total})"
    return f'<details class="m0h-examples"><summary>{head}</summary><ul>{items}</ul></details>'


def detail_label(key: object) -> str:
    """A details key as a label: ``foreign_key_check_rows`` -> ``Foreign key check rows``."""
    text = printable(key).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def detail_value(value: Any) -> str:
    """A plain JSON value (as :func:`json.loads` gives it) as escaped HTML: lists as lists, dicts as nested lists."""
    if isinstance(value, dict):
        if not value:
            return "-"
        return kv_list(value.items())
    if isinstance(value, list):
        if not value:
            return "-"
        if all(not isinstance(v, (dict, list)) for v in value) and sum(len(str(v)) for v in value) <= 80:
            return ", ".join(detail_value(v) for v in value)
        return "<ul>" + "".join(f"<li>{detail_value(v)}</li>" for v in value) + "</ul>"
    if value is None:
        return "-"
    if isinstance(value, bool):
        return yes_no(value)
    return e(value)


def kv_list(items: Iterable[tuple[object, Any]]) -> str:
    """Key/value pairs as a ``<dl>``: keys as labels, values through :func:`detail_value`."""
    rows = "".join(f"<dt>{e(detail_label(k))}</dt><dd>{detail_value(v)}</dd>" for k, v in items)
    return f'<dl class="m0h-kv">{rows}</dl>'


def _details(finding: Finding) -> str:
    # Through the JSON encoder first: dates, paths and sets become plain values, credentials are redacted.
    plain = json.loads(to_json(finding.details)) if finding.details else {}
    shown = [(k, v) for k, v in plain.items() if k not in HIDDEN_DETAILS]
    if not shown:
        return ""
    return f'<details class="m0h-details"><summary>Details</summary>{kv_list(shown)}</details>'


def _card(finding: Finding) -> str:
    sev = finding.severity
    count = f'<span class="m0h-count">count <b>{finding.count}</b></span>' if finding.count else ""
    why = f'<p class="m0h-why">{e(finding.why)}</p>' if finding.why else ""
    return (
        f'<article class="m0h-card m0h-sev-{sev.label}"><div class="m0h-card-head">'
        f'<span class="m0h-badge" style="color:{SEVERITY_COLOURS[sev]}">{sev.label.upper()}</span>'
        f'<code class="m0h-code">{e(finding.code)}</code>{count}</div>'
        f'<h4 class="m0h-title">{e(finding.title)}</h4>{why}{_fix(finding)}{_examples(finding)}'
        f"{_details(finding)}</article>"
    )


def _findings(report: Report) -> str:
    if not report.findings:
        return '<h3>Findings</h3><p class="m0h-none">No findings.</p>'
    parts = []
    seen: set[str] = set()
    for severity, area, findings in ordered_sections(report):
        cards = "".join(_card(f) for f in findings)
        heading = f"<h3>{e(section_title(severity, area, len(findings)))}</h3>"
        anchor = f' id="{area_id(area)}"' if area not in seen else ""  # the area bars link to its first section
        seen.add(area)
        parts.append(f"<section{anchor}>{heading}{cards}</section>")
    return "".join(parts)


def _skipped(report: Report) -> str:
    head = f"<h3>Skipped checks ({len(report.skipped)})</h3>"
    if not report.skipped:
        return f'<section>{head}<p class="m0h-none">None: every check ran.</p></section>'
    items = "".join(
        f'<li><code class="m0h-code">{e(s.code)}</code> <span class="m0h-area">{e(s.area)}</span>'
        f"<p>{e(s.reason)}</p></li>"
        for s in report.skipped
    )
    return f'<section>{head}<ul class="m0h-skipped">{items}</ul></section>'


def _flag(value: object, sev: str) -> str:
    return f'<span class="m0h-flag m0h-sev-{sev}">yes</span>' if value is True else yes_no(value)


LOCATION_HEADERS = ("Role", "Path or remote", "FS", "Volatile", "Under /tmp", "Exists", "Size")
"""The store map's columns (the terminal's, "In /tmp" spelt out)."""


def _location_row(loc: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    note = loc.get("note")
    where = f"<code>{html.escape(location_where(loc), quote=True)}</code>"
    if note:
        where += f'<br><small class="m0h-area">{e(note)}</small>'
    return [
        ("", e(loc.get("role") or "-")),
        ("m0h-where", where),
        ("", html.escape(location_fstype(loc), quote=True)),
        ("", _flag(loc.get("volatile"), "error")),
        ("", _flag(loc.get("under_tmp"), "warning")),
        ("", yes_no(loc.get("exists")) if loc.get("path") else "-"),
        ("m0h-num", html.escape(human_size(loc.get("size_bytes")))),
    ]


def _cell(label: str, cls: str, value: str) -> str:
    """A store map cell; ``data-label`` names its column where the table is stacked (narrow screens)."""
    attr = f' class="{cls}"' if cls else ""
    return f'<td{attr} data-label="{label}">{value}</td>'


def _locations(report: Report) -> str:
    head = "<h3>Store locations</h3>"
    if not report.locations:
        return f'<section>{head}<p class="m0h-none">No store locations recorded.</p></section>'
    rows = []
    for loc in report.locations:
        cells = "".join(_cell(label, cls, value) for label, (cls, value) in zip(LOCATION_HEADERS, _location_row(loc)))
        rows.append(f"<tr>{cells}</tr>")
    headers = "".join(f"<th>{h}</th>" for h in LOCATION_HEADERS)
    return (
        f'<section>{head}<div class="m0h-table-wrap"><table class="m0h-locations"><thead><tr>{headers}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _footer() -> str:
    from ..version import __version__

    return f'<p class="m0h-foot">Made by mem0-hygiene {e(__version__)}.</p>'


def report_body(report: Report) -> str:
    """The report's content, ``<div class="m0h">`` (styled by :data:`~.html_style.REPORT_CSS`, not included)."""
    return (
        f'<div class="m0h">{_header(report)}{_findings(report)}{_skipped(report)}{_locations(report)}{_footer()}</div>'
    )


def report_html_fragment(report: Report) -> str:
    """The report as an HTML ``<div>`` carrying its own ``<style>`` (no ``<html>``/``<head>``): what Jupyter shows."""
    return f'<div class="mem0-hygiene-report"><style>{REPORT_CSS}</style>{report_body(report)}</div>'


def page(title: str, body: str) -> str:
    """A standalone UTF-8 page around ``body`` (already-escaped HTML), with the report's stylesheet inline."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light">\n'
        f"<title>{html.escape(title, quote=True)}</title>\n"
        f"<style>{REPORT_CSS}{PAGE_CSS}</style>\n"
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def format_html(report: Report) -> str:
    """The report as a standalone UTF-8 HTML page (for ``--html FILE``)."""
    title = "mem0-hygiene audit" + (f": {printable(report.target)}" if report.target else "")
    return page(title, f'<div class="mem0-hygiene-report">{report_body(report)}</div>')
