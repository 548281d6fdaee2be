"""The audit report as one rich renderable, and as plain or coloured text.

:func:`report_renderable` builds the renderable that ``Report.__rich__`` returns, so
``rich.print(report)``, the CLI and :func:`format_text` all show the same thing:

1. a summary panel (target, counts by severity, skipped checks, verdict, run times);
2. the findings, most severe first (every error before any warning), then by area in the order of
   :data:`mem0_hygiene.report.AREAS`,
   each with its severity, code, title, count, a few examples, why it matters and the fix; the fix
   sits on lines of its own so it can be copied as a command;
3. the skipped checks, always shown (a check that could not run is never silently clean);
4. a compact table of where each store lives.

Every string taken from the stores (memory texts, paths, reasons) goes into ``Text`` objects, never
into console markup, and control characters are made visible, so a memory cannot restyle or drive
the terminal. :func:`summary_line` gives the one-line plain summary meant for stderr.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..display.text import human_size, plural, printable, run_text, yes_no
from ..report.findings import AREAS, Finding, Severity

if TYPE_CHECKING:  # the renderers read a Report; Report.__rich__ imports them when shown
    from ..report import Report

__all__ = ["format_text", "human_size", "printable", "report_renderable", "summary_line", "verdict", "yes_no"]

SEVERITY_STYLES: dict[Severity, str] = {
    Severity.ERROR: "bold red",
    Severity.WARNING: "bold yellow",
    Severity.INFO: "blue",
}
"""Colour of each severity's label (the same colours are used by the HTML renderer)."""

MAX_EXAMPLES = 3
"""How many examples each finding shows; the rest are counted ("+N more")."""

EXAMPLE_CHARS = 160
"""Longest example shown, in characters, before it is shortened with an ellipsis."""

_LABEL_WIDTH = 7  # len("WARNING")
_FIX_INDENT = _LABEL_WIDTH + 4


def summary_line(report: Report) -> str:
    """One plain line for stderr: ``"3 errors, 2 warnings, 1 info, 1 skipped check"``."""
    counts = report.counts()
    return ", ".join(
        [
            plural(counts["error"], "error", "errors"),
            plural(counts["warning"], "warning", "warnings"),
            f"{counts['info']} info",
            plural(len(report.skipped), "skipped check", "skipped checks"),
        ]
    )


def verdict(report: Report) -> str:
    """The overall verdict in a few words; never "clean" while a check was skipped."""
    worst = report.worst()
    skipped = len(report.skipped)
    if report.stats.get("vector_store_unsupported"):
        found = "errors found; " if worst is Severity.ERROR else "warnings found; " if worst is Severity.WARNING else ""
        ran = plural(skipped, "check", "checks")
        return f"{found}incomplete: the vector store could not be read, so {ran} did not run"
    incomplete = f"; {plural(skipped, 'check', 'checks')} could not run" if skipped else ""
    if worst is Severity.ERROR:
        return "errors found" + incomplete
    if worst is Severity.WARNING:
        return "warnings found" + incomplete
    if skipped:
        return f"no problems in the checks that ran, but {plural(skipped, 'check', 'checks')} could not run"
    if worst is Severity.INFO:
        return "no problems found (information only)"
    return "clean: no findings"


def ordered_areas(report: Report) -> list[tuple[str, list[Finding]]]:
    """Findings grouped by area: known areas in :data:`AREAS` order, unknown ones after, most severe first."""
    groups = report.by_area()
    names = [a for a in AREAS if a in groups] + [a for a in groups if a not in AREAS]
    return [(name, sorted(groups[name], key=lambda f: -int(f.severity))) for name in names]


def ordered_sections(report: Report) -> list[tuple[Severity, str, list[Finding]]]:
    """The report's sections, severity first (every ERROR before any WARNING, whatever its area), then area in
    :data:`AREAS` order: one section per (severity, area) that has findings."""
    sections: list[tuple[Severity, str, list[Finding]]] = []
    for severity in sorted(Severity, reverse=True):
        for area, findings in ordered_areas(report):
            chosen = [f for f in findings if f.severity is severity]
            if chosen:
                sections.append((severity, area, chosen))
    return sections


def section_title(severity: Severity, area: str, count: int) -> str:
    """ "Errors: history (2)", the heading of one section of findings."""
    word = "Info" if severity is Severity.INFO else severity.label.capitalize() + "s"
    return f"{word}: {area} ({count})"


def location_where(loc: Mapping[str, Any]) -> str:
    """A location's path, else its remote address, with the collection when there is one."""
    where = loc.get("path") or loc.get("remote") or "-"
    collection = loc.get("collection")
    if collection:
        where = f"{where} (collection {collection})"
    return printable(where)


def location_fstype(loc: Mapping[str, Any]) -> str:
    """The filesystem type of a location, "-" when not known (servers, missing data)."""
    fs = loc.get("filesystem")
    if isinstance(fs, Mapping) and fs.get("fstype"):
        return printable(fs["fstype"])
    return "-"


def example_lines(finding: Finding) -> tuple[list[str], int]:
    """The examples to show (made printable, shortened) and how many more there are.

    A finding whose ``details["summary"]`` is true lists breakdown lines, not samples: all are shown."""
    if finding.details.get("summary"):
        return [printable(e, EXAMPLE_CHARS) for e in finding.examples], 0
    shown = [printable(e, EXAMPLE_CHARS) for e in finding.examples[:MAX_EXAMPLES]]
    total = max(finding.count, len(finding.examples))
    more = max(total - len(shown), 0) if shown else 0
    return shown, more


def fix_lines(finding: Finding) -> list[str]:
    """The fix split into its lines, blank lines dropped, control characters made visible."""
    return [printable(line.rstrip()) for line in finding.fix.splitlines() if line.strip()]


def _severity_label(severity: Severity) -> Text:
    return Text(severity.label.upper().ljust(_LABEL_WIDTH), style=SEVERITY_STYLES[severity])


def _summary(report: Report) -> Panel:
    counts = report.counts()
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("Target", Text(printable(report.target) or "-"))
    if report.findings:
        parts: list[Text] = []
        for sev in sorted(Severity, reverse=True):
            n = counts[sev.label]
            label = f"{n} info" if sev is Severity.INFO else plural(n, sev.label, sev.label + "s")
            parts.append(Text(label, style=SEVERITY_STYLES[sev] if n else "dim"))
        grid.add_row("Findings", Text(", ").join(parts))
    else:
        grid.add_row("Findings", Text("none"))
    skipped = len(report.skipped)
    grid.add_row(
        "Skipped",
        Text(f"{plural(skipped, 'check', 'checks')} could not run", style="yellow")
        if skipped
        else Text("none: every check ran"),
    )
    worst = report.worst()
    style = SEVERITY_STYLES[worst] if worst and worst > Severity.INFO else ("yellow" if skipped else "green")
    grid.add_row("Verdict", Text(verdict(report), style=style))
    if report.started_at or report.finished_at:
        grid.add_row("Run", Text(run_text(report.started_at, report.finished_at), style="dim"))
    return Panel(grid, title="mem0-hygiene audit", title_align="left", box=box.ROUNDED)


def _finding(finding: Finding, wrap_fix: bool) -> RenderableType:
    head = Table.grid(padding=(0, 2))
    head.add_column(no_wrap=True, width=_LABEL_WIDTH)
    head.add_column(overflow="fold")
    head.add_row(
        _severity_label(finding.severity),
        Text.assemble((printable(finding.code), "bold"), "  ", printable(finding.title)),
    )
    body = Table.grid(padding=(0, 2))
    body.add_column(no_wrap=True, width=_LABEL_WIDTH)
    body.add_column(style="dim", no_wrap=True, width=len("Examples"))
    body.add_column(overflow="fold")
    if finding.count:
        body.add_row("", "Count", Text(str(finding.count)))
    shown, more = example_lines(finding)
    if shown:
        lines = [Text(e, no_wrap=True, overflow="ellipsis") for e in shown]
        if more:
            lines.append(Text(f"(+{more} more)", style="dim"))
        body.add_row("", "Examples", Group(*lines))
    if finding.why:
        body.add_row("", "Why", Text(printable(finding.why)))
    parts: list[RenderableType] = [head, body]
    fixes = fix_lines(finding)
    if fixes:
        body.add_row("", "Fix", Text(""))
        for line in fixes:
            if wrap_fix:
                parts.append(Padding(Text(line, style="green", overflow="fold"), (0, 0, 0, _FIX_INDENT), expand=False))
            else:
                parts.append(Text(" " * _FIX_INDENT + line, style="green", no_wrap=True, overflow="ignore"))
    return Group(*parts)


def _findings(report: Report, wrap_fix: bool) -> list[RenderableType]:
    if not report.findings:
        return [Text(""), Text("No findings.", style="green")]
    out: list[RenderableType] = []
    for severity, area, findings in ordered_sections(report):
        out.append(Text(""))
        out.append(Rule(Text(section_title(severity, area, len(findings)), style="bold"), align="left"))
        for i, finding in enumerate(findings):
            if i:
                out.append(Text(""))
            out.append(_finding(finding, wrap_fix))
    return out


def _skipped(report: Report) -> list[RenderableType]:
    out: list[RenderableType] = [Rule(Text(f"Skipped checks ({len(report.skipped)})", style="bold"), align="left")]
    if not report.skipped:
        out.append(Text("None: every check ran."))
        return out
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="yellow", no_wrap=True)
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    for skip in report.skipped:
        grid.add_row(Text(printable(skip.code)), Text(printable(skip.area)), Text(printable(skip.reason)))
    out.append(grid)
    return out


def locations_table(locations: Iterable[Mapping[str, Any]]) -> Table:
    """The compact locations table: role, where, filesystem, volatile, under /tmp ("In /tmp"), exists, size."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True, expand=False)
    table.add_column("Role", no_wrap=True)
    table.add_column("Path or remote", overflow="fold")
    table.add_column("FS", no_wrap=True)
    table.add_column("Volatile", no_wrap=True)
    table.add_column("In /tmp", no_wrap=True)
    table.add_column("Exists", no_wrap=True)
    table.add_column("Size", no_wrap=True, justify="right")
    for loc in locations:
        volatile = loc.get("volatile")
        under_tmp = loc.get("under_tmp")
        local = bool(loc.get("path"))
        table.add_row(
            Text(printable(loc.get("role") or "-")),
            Text(location_where(loc)),
            Text(location_fstype(loc)),
            Text(yes_no(volatile), style="bold red" if volatile else ""),
            Text(yes_no(under_tmp), style="yellow" if under_tmp else ""),
            Text(yes_no(loc.get("exists")) if local else "-"),
            Text(human_size(loc.get("size_bytes"))),
        )
    return table


def location_lines(locations: Iterable[Mapping[str, Any]]) -> Group:
    """The locations laid out for any width, 80 columns included: per store one line of facts (role,
    filesystem, RAM-backed or under /tmp, exists, size) and its path on a line of its own, never broken inside
    (a path longer than the screen runs on, whole, so it can be copied)."""
    lines: list[Text] = []
    for loc in locations:
        facts = Text.assemble((printable(loc.get("role") or "-").ljust(13), "bold"), " ")
        fs = loc.get("filesystem") if isinstance(loc.get("filesystem"), Mapping) else None
        if fs and fs.get("fstype"):
            facts.append(printable(fs["fstype"]) + (f" on {printable(fs['target'])}" if fs.get("target") else ""))
        elif loc.get("remote"):
            facts.append("server")
        else:
            facts.append("-")
        if loc.get("volatile"):
            facts.append("  RAM: lost at reboot", style="bold red")
        elif loc.get("under_tmp"):
            facts.append("  under /tmp: may be cleaned", style="yellow")
        if loc.get("path"):
            facts.append(
                "  " + ("exists" if loc.get("exists") else "missing"), style="" if loc.get("exists") else "yellow"
            )
            size = human_size(loc.get("size_bytes"))
            if size != "-":
                facts.append(f"  {size}")
        lines.append(facts)
        where = location_where(loc) + (" (default)" if loc.get("defaulted") else "")
        lines.append(Text("  " + where, no_wrap=True, overflow="ignore"))
    return Group(*lines)


def _locations(report: Report) -> list[RenderableType]:
    out: list[RenderableType] = [Rule(Text("Store locations", style="bold"), align="left")]
    if not report.locations:
        out.append(Text("No store locations recorded."))
    else:
        out.append(location_lines(report.locations))
        out += [
            Text(f"note: {printable(loc.get('role') or '-')}: {printable(str(loc['note']))}")
            for loc in report.locations
            if loc.get("note")
        ]
    return out


def report_renderable(report: Report, *, wrap_fix: bool = True) -> RenderableType:
    """The whole report as one rich renderable (what ``Report.__rich__`` returns).

    ``wrap_fix=True`` folds a fix line longer than the console so nothing is lost on consoles that
    crop; ``wrap_fix=False`` keeps every fix line whole (print it with ``crop=False``, as
    :func:`format_text` does) so commands can be copied as they are.
    """
    parts: list[RenderableType] = [_summary(report)]
    parts.extend(_findings(report, wrap_fix))
    parts.append(Text(""))
    parts.extend(_skipped(report))
    parts.append(Text(""))
    parts.extend(_locations(report))
    return Group(*parts)


def format_text(report: Report, width: int = 100, color: bool = False) -> str:
    """The report as text ``width`` columns wide; ANSI colours only when ``color`` is true.

    Fix lines are never wrapped or cropped, even when longer than ``width``. Without colour,
    trailing spaces are removed from every line.
    """
    console = Console(
        file=io.StringIO(),
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        highlight=False,
        emoji=False,
        legacy_windows=False,
        record=False,
    )
    console.print(report_renderable(report, wrap_fix=False), crop=False)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    if not color:
        out = "\n".join(line.rstrip() for line in out.split("\n"))
    return out
