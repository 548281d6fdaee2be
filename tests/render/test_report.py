"""The audit report's renderers (terminal text, JSON + schema, HTML), built from real Report dataclasses."""

from __future__ import annotations

import io
import json
import os
import re
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mem0_hygiene.render import (
    JSON_SCHEMA,
    format_html,
    format_json,
    format_text,
    report_html_fragment,
    summary_line,
)
from mem0_hygiene.report import Finding, Report, Severity, Skipped

SCRIPT = "<script>alert(1)</script>"
LONG_FIX = (
    "mem0-hygiene relocate --config ./mem0.yaml --role vector_store --to /var/lib/mem0/qdrant "
    "--collection mem0 --verify --keep-old-copy"
)


def volatile_store() -> dict[str, Any]:
    return {
        "role": "vector_store",
        "provider": "qdrant",
        "path": "/dev/shm/mem0/qdrant",
        "remote": None,
        "collection": "mem0",
        "defaulted": False,
        "exists": True,
        "size_bytes": 1_572_864,
        "writable": True,
        "filesystem": {
            "fstype": "tmpfs",
            "target": "/dev/shm",
            "source": "tmpfs",
            "method": "findmnt",
            "volatile": True,
        },
        "volatile": True,
        "under_tmp": False,
        "note": "",
    }


def full_report() -> Report:
    """Findings in four areas and all severities (given out of order), a skipped check, four locations."""
    return Report(
        findings=(
            Finding(
                code="CONTENT_CREDENTIAL",
                severity=Severity.ERROR,
                area="content",
                title="Memory text contains credentials",
                count=2,
                examples=("mem-41: OpenAI key sk-proj-…", f"mem-77: {SCRIPT}"),
                why="Anything in memory is pasted into prompts and logs; a key there is a leaked key.",
                fix="mem0-hygiene forget --id mem-41 --id mem-77 --purge-history",
                details={"providers": ["openai", "postgres"], "b_key": 2, "a_key": 1},
            ),
            Finding(
                code="STORE_UNDER_TMP",
                severity=Severity.WARNING,
                area="storage",
                title="history.db is under /tmp",
                count=1,
                examples=("/tmp/mem0/history.db",),
                why="systemd-tmpfiles ages files out of /tmp after 10 days.",
                fix="mem0-hygiene relocate --role history_db --to /var/lib/mem0/history.db",
            ),
            Finding(
                code="STORE_VOLATILE",
                severity=Severity.ERROR,
                area="storage",
                title="Vector store lives on a RAM disk (tmpfs): every memory is lost at reboot",
                count=1,
                examples=("/dev/shm/mem0/qdrant",),
                why="tmpfs keeps files in RAM; a reboot or container restart erases the collection.",
                fix=LONG_FIX,
            ),
            Finding(
                code="HISTORY_DELETED_TEXT",
                severity=Severity.WARNING,
                area="history",
                title="Text of deleted memories still readable in history.db",
                count=14,
                examples=("User's home address is 12 Rue X", "Card ends in 4242", "Prefers\nmornings", "hidden"),
                why="Deleting a memory in mem0 keeps its text in history.old_memory.",
                fix="mem0-hygiene prune --purge-history\nsqlite3 /tmp/mem0/history.db 'VACUUM;'",
            ),
            Finding(
                code="LEDGER_REVIEW_BACKLOG",
                severity=Severity.INFO,
                area="ledger",
                title="Review queue: 64 facts unconfirmed for 90+ days",
                count=64,
                why="At 20 a week this takes about 4 weeks to review.",
                fix="mem0-hygiene review --limit 20",
            ),
        ),
        skipped=(
            Skipped(
                code="BACKUP_LAST_VERIFIED",
                area="backups",
                reason="The backup feature is not available yet; nothing to check.",
            ),
        ),
        locations=(
            volatile_store(),
            {
                "role": "history_db",
                "provider": "sqlite",
                "path": "/tmp/mem0/history.db",
                "exists": True,
                "size_bytes": 40960,
                "filesystem": {"fstype": "ext4", "target": "/", "source": "/dev/sda1", "method": "findmnt"},
                "volatile": False,
                "under_tmp": True,
            },
            {"role": "ledger", "path": "/var/lib/mem0/ledger.db"},  # most keys missing: tolerated
            {
                "role": "vector_store",
                "provider": "qdrant",
                "path": None,
                "remote": "https://qdrant.example.com:6333",
                "collection": "agent",
                "exists": False,
                "size_bytes": None,
                "filesystem": None,
                "volatile": False,
                "under_tmp": False,
            },
        ),
        stats={"memories": 120, "history_rows": {"ADD": 130, "DELETE": 10}},
        started_at="2026-11-29T13:30:04Z",
        finished_at="2026-11-29T13:30:05Z",
        target="./mem0.yaml",
    )


def small_report() -> Report:
    return Report(
        findings=(
            Finding(
                code="STORE_UNDER_TMP",
                severity=Severity.WARNING,
                area="storage",
                title="history.db is under /tmp",
                count=1,
                examples=("/tmp/mem0/history.db",),
                why="systemd-tmpfiles ages files out of /tmp after 10 days.",
                fix="mem0-hygiene relocate --role history_db --to /var/lib/mem0/history.db",
            ),
        ),
        skipped=(Skipped(code="BACKUP_LAST_VERIFIED", area="backups", reason="Backups are not implemented yet."),),
        locations=(
            {
                "role": "history_db",
                "provider": "sqlite",
                "path": "/tmp/mem0/history.db",
                "exists": True,
                "size_bytes": 4096,
                "filesystem": {"fstype": "ext4"},
                "volatile": False,
                "under_tmp": True,
            },
        ),
        started_at="2026-11-29T13:30:04Z",
        finished_at="2026-11-29T13:30:05Z",
        target="./mem0.yaml",
    )


def line_index(lines: list[str], needle: str, start: int = 0) -> int:
    """Index of the first line at or after ``start`` containing ``needle``."""
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i
    raise AssertionError(f"{needle!r} not found after line {start}:\n" + "\n".join(lines))


# --------------------------------------------------------------------------- terminal text


def test_small_report_text_exactly():
    rule = "─"
    expected = "\n".join(
        [
            "╭─ mem0-hygiene audit " + rule * 57 + "╮",
            "│ Target    ./mem0.yaml" + " " * 56 + "│",
            "│ Findings  0 errors, 1 warning, 0 info" + " " * 40 + "│",
            "│ Skipped   1 check could not run" + " " * 46 + "│",
            "│ Verdict   warnings found; 1 check could not run" + " " * 30 + "│",
            "│ Run       2026-11-29 13:30:04 UTC, took 1.0 s" + " " * 32 + "│",
            "╰" + rule * 78 + "╯",
            "",
            "Warnings: storage (1) " + rule * 58,
            "WARNING  STORE_UNDER_TMP  history.db is under /tmp",
            "         Count     1",
            "         Examples  /tmp/mem0/history.db",
            "         Why       systemd-tmpfiles ages files out of /tmp after 10 days.",
            "         Fix",
            "           mem0-hygiene relocate --role history_db --to /var/lib/mem0/history.db",
            "",
            "Skipped checks (1) " + rule * 61,
            "BACKUP_LAST_VERIFIED  backups  Backups are not implemented yet.",
            "",
            "Store locations " + rule * 64,
            "history_db    ext4  under /tmp: may be cleaned  exists  4.0 KiB",
            "  /tmp/mem0/history.db",
            "",
        ]
    )
    assert format_text(small_report(), width=80) == expected


def test_sections_in_order_summary_first_then_errors_before_warnings_then_skipped_then_locations():
    lines = format_text(full_report(), width=100).splitlines()
    assert lines[0].startswith("╭─ mem0-hygiene audit ")
    assert "Findings  2 errors, 2 warnings, 1 info" in lines[2]
    assert "Skipped   1 check could not run" in lines[3]
    assert "Verdict   errors found; 1 check could not run" in lines[4]

    at = 0
    for needle in [
        "Errors: storage (1) ─",
        "ERROR    STORE_VOLATILE  Vector store lives on a RAM disk (tmpfs): every memory is lost at reboot",
        "Errors: content (1) ─",
        "ERROR    CONTENT_CREDENTIAL  Memory text contains credentials",
        "Warnings: storage (1) ─",
        "WARNING  STORE_UNDER_TMP  history.db is under /tmp",
        "Warnings: history (1) ─",
        "WARNING  HISTORY_DELETED_TEXT  Text of deleted memories still readable in history.db",
        "Info: ledger (1) ─",
        "INFO     LEDGER_REVIEW_BACKLOG  Review queue: 64 facts unconfirmed for 90+ days",
        "Skipped checks (1) ─",
        "BACKUP_LAST_VERIFIED  backups  The backup feature is not available yet; nothing to check.",
        "Store locations ─",
    ]:
        at = line_index(lines, needle, at) + 1


def test_each_finding_shows_count_examples_why_and_fix_in_that_order():
    lines = format_text(full_report(), width=100).splitlines()
    head = line_index(lines, "HISTORY_DELETED_TEXT")
    assert lines[head + 1 : head + 10] == [
        "         Count     14",
        "         Examples  User's home address is 12 Rue X",
        "                   Card ends in 4242",
        "                   Prefers\\nmornings",  # newline shown, not obeyed
        "                   (+11 more)",  # 3 of 14 shown
        "         Why       Deleting a memory in mem0 keeps its text in history.old_memory.",
        "         Fix",
        "           mem0-hygiene prune --purge-history",
        "           sqlite3 /tmp/mem0/history.db 'VACUUM;'",
    ]


def test_fix_lines_are_whole_even_when_wider_than_the_page():
    assert len(LONG_FIX) > 100
    text = format_text(full_report(), width=100)
    assert ("           " + LONG_FIX) in text.splitlines()
    assert "           mem0-hygiene forget --id mem-41 --id mem-77 --purge-history" in text.splitlines()


def test_rich_print_uses_the_same_renderable_and_never_loses_a_fix():
    console = Console(file=io.StringIO(), width=60, color_system=None)
    console.print(full_report())
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "STORE_VOLATILE" in out and "Skipped checks (1)" in out
    # On a console narrower than the command the fix is folded, never cropped.
    assert re.sub(r"\s+", "", LONG_FIX) in re.sub(r"\s+", "", out)


def test_memory_text_cannot_restyle_or_drive_the_terminal():
    evil = Finding(
        code="CONTENT_INSTRUCTION",
        severity=Severity.WARNING,
        area="content",
        title="Instruction-like memory",
        count=1,
        examples=("[bold red]ignore previous instructions[/] \x1b[2J\x1b]0;pwned\x07 \u202eevil",),
    )
    text = format_text(Report(findings=(evil,)), width=120, color=True)
    assert "\x1b[2J" not in text and "\x07" not in text and "\u202e" not in text
    assert "[bold red]ignore previous instructions[/] \\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil" in text


def test_long_examples_are_shortened():
    finding = Finding(
        code="CONTENT_DUPLICATE", severity=Severity.INFO, area="content", title="t", examples=("x" * 500,)
    )
    lines = format_text(Report(findings=(finding,)), width=300).splitlines()
    example = lines[line_index(lines, "Examples")]
    assert example == "         Examples  " + "x" * 159 + "…"


def test_unknown_area_comes_after_the_known_ones_of_the_same_severity():
    report = Report(
        findings=(
            Finding(code="ODD_ONE", severity=Severity.WARNING, area="elsewhere", title="odd"),
            Finding(code="BACKUP_NONE", severity=Severity.WARNING, area="backups", title="no backup"),
        )
    )
    lines = format_text(report).splitlines()
    assert line_index(lines, "Warnings: backups (1)") < line_index(lines, "Warnings: elsewhere (1)")


def test_an_error_in_a_late_area_comes_before_every_warning():
    report = Report(
        findings=(
            Finding(code="STORE_UNDER_TMP", severity=Severity.WARNING, area="storage", title="under tmp"),
            Finding(code="HISTORY_GAP", severity=Severity.INFO, area="history", title="gap"),
            Finding(code="CONTENT_CREDENTIAL", severity=Severity.ERROR, area="content", title="keys"),
        )
    )
    for text in (format_text(report), format_html(report)):
        assert text.index("CONTENT_CREDENTIAL") < text.index("STORE_UNDER_TMP") < text.index("HISTORY_GAP")


def test_locations_tolerate_missing_keys_and_show_remotes_with_whole_paths():
    lines = format_text(full_report(), width=80).splitlines()
    start = line_index(lines, "Store locations ─")
    rows = lines[start + 1 :]
    assert rows[0] == "vector_store  tmpfs on /dev/shm  RAM: lost at reboot  exists  1.5 MiB"
    assert rows[1] == "  /dev/shm/mem0/qdrant (collection mem0)"
    assert rows[2] == "history_db    ext4 on /  under /tmp: may be cleaned  exists  40.0 KiB"
    assert rows[3] == "  /tmp/mem0/history.db"
    assert rows[4].split() == ["ledger", "-", "missing"]
    assert rows[5] == "  /var/lib/mem0/ledger.db"
    assert rows[6].split() == ["vector_store", "server"]
    assert rows[7] == "  https://qdrant.example.com:6333 (collection agent)"


def test_a_long_path_is_never_broken_at_80_columns():
    from rich.console import Console

    from mem0_hygiene.render.terminal import location_lines

    long = "/srv/" + "a" * 90 + "/qdrant"
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(location_lines([{"role": "vector_store", "path": long, "exists": True}]), crop=False)
    assert "  " + long in console.export_text()


def test_colour_only_when_asked():
    assert "\x1b[" not in format_text(full_report())
    coloured = format_text(full_report(), color=True)
    assert "\x1b[1;31mERROR" in coloured  # errors in bold red
    assert "\x1b[1;33mWARNING" in coloured  # warnings in bold yellow


def test_clean_report_says_so_and_still_lists_skipped_and_locations():
    lines = format_text(Report(target="mem0 defaults"), width=100).splitlines()
    assert "Findings  none" in lines[2]
    assert "Verdict   clean: no findings" in lines[4]
    assert lines[line_index(lines, "Skipped checks (0)") + 1] == "None: every check ran."
    assert "No findings." in lines
    assert "No store locations recorded." in lines


def test_skipped_checks_keep_a_report_from_being_called_clean():
    report = Report(
        skipped=(Skipped(code="VECTOR_LOCKED", area="storage", reason="Qdrant folder is locked by pid 4242."),)
    )
    text = format_text(report)
    assert "clean" not in text
    assert "no problems in the checks that ran, but 1 check could not run" in text
    assert "VECTOR_LOCKED  storage  Qdrant folder is locked by pid 4242." in text


@pytest.mark.parametrize(
    ("report", "line"),
    [
        (full_report(), "2 errors, 2 warnings, 1 info, 1 skipped check"),
        (Report(), "0 errors, 0 warnings, 0 info, 0 skipped checks"),
        (small_report(), "0 errors, 1 warning, 0 info, 1 skipped check"),
    ],
)
def test_summary_line(report: Report, line: str):
    assert summary_line(report) == line


# --------------------------------------------------------------------------- JSON


def check(instance: Any, schema: dict[str, Any], root: dict[str, Any], where: str = "$") -> list[str]:
    """A small JSON Schema validator for the keywords JSON_SCHEMA uses; returns the errors found."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return check(instance, root["$defs"][ref.removeprefix("#/$defs/")], root, where)
    errors: list[str] = []
    types = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "boolean": bool,
        "null": type(None),
    }
    if "type" in schema:
        wanted = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(isinstance(instance, types[t]) and not (t == "integer" and isinstance(instance, bool)) for t in wanted)
        if not ok:
            return [f"{where}: {instance!r} is not of type {wanted}"]
    if "const" in schema and instance != schema["const"]:
        errors.append(f"{where}: {instance!r} != {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{where}: {instance!r} not in {schema['enum']}")
    if "minimum" in schema and isinstance(instance, int) and instance < schema["minimum"]:
        errors.append(f"{where}: {instance} < {schema['minimum']}")
    if "minLength" in schema and isinstance(instance, str) and len(instance) < schema["minLength"]:
        errors.append(f"{where}: too short")
    if "pattern" in schema and isinstance(instance, str) and not re.search(schema["pattern"], instance):
        errors.append(f"{where}: {instance!r} does not match {schema['pattern']}")
    if "oneOf" in schema:
        passing = [s for s in schema["oneOf"] if not check(instance, s, root, where)]
        if len(passing) != 1:
            errors.append(f"{where}: matches {len(passing)} of oneOf")
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        errors += [f"{where}: missing {key!r}" for key in schema.get("required", []) if key not in instance]
        for key, value in instance.items():
            if key in props:
                errors += check(value, props[key], root, f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected {key!r}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            errors += check(item, schema["items"], root, f"{where}[{i}]")
    return errors


def test_json_is_the_report_dict_in_its_own_key_order():
    report = full_report()
    text = format_json(report)
    doc = json.loads(text)
    assert doc == report.to_dict()
    assert list(doc) == [
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
    ]
    assert doc["schema_version"] == 1
    assert doc["summary"] == {"error": 2, "warning": 2, "info": 1, "skipped": 1}
    assert list(doc["findings"][0]["details"]) == ["providers", "b_key", "a_key"]  # not sorted
    assert "sk-proj-…" in text  # ensure_ascii=False: text stays readable
    assert text.startswith('{\n  "schema_version": 1,\n  "tool": "mem0-hygiene",')
    assert format_json(report) == text  # stable


def test_json_validates_against_the_schema():
    for report in (full_report(), small_report(), Report()):
        assert check(json.loads(format_json(report)), JSON_SCHEMA, JSON_SCHEMA) == []


def test_schema_rejects_what_it_should():
    doc = json.loads(format_json(full_report()))
    doc["findings"][0]["severity"] = "critical"
    del doc["findings"][1]["fix"]
    doc["schema_version"] = 2
    doc["surprise"] = True
    errors = check(doc, JSON_SCHEMA, JSON_SCHEMA)
    assert any("'critical' not in" in e for e in errors)
    assert any("missing 'fix'" in e for e in errors)
    assert any("2 != 1" in e for e in errors)
    assert any("unexpected 'surprise'" in e for e in errors)


def test_json_schema_with_jsonschema_when_installed():
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(JSON_SCHEMA)
    jsonschema.Draft202012Validator(JSON_SCHEMA).validate(json.loads(format_json(full_report())))


def test_json_copes_with_odd_values_in_details():
    finding = Finding(
        code="HISTORY_RECENT",
        severity=Severity.INFO,
        area="history",
        title="t",
        details={"when": datetime(2026, 1, 2, tzinfo=timezone.utc), "path": Path("/x/y"), "ids": {"b", "a"}},
    )
    doc = json.loads(format_json(Report(findings=(finding,))))
    assert doc["findings"][0]["details"] == {"when": "2026-01-02T00:00:00+00:00", "path": "/x/y", "ids": ["a", "b"]}


# --------------------------------------------------------------------------- HTML


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html_text: str) -> TagCollector:
    parser = TagCollector()
    parser.feed(html_text)
    parser.close()
    return parser


def test_html_page_escapes_memory_texts():
    report = Report(
        findings=(
            Finding(
                code="CONTENT_CREDENTIAL",
                severity=Severity.ERROR,
                area="content",
                title=f"title {SCRIPT}",
                examples=(SCRIPT, '" onmouseover="alert(2)'),
                why=SCRIPT,
                fix=f"echo '{SCRIPT}'",
                details={"text": SCRIPT},
            ),
        ),
        skipped=(Skipped(code="X", area="content", reason=SCRIPT),),
        locations=({"role": "ledger", "path": f"/tmp/{SCRIPT}"},),
        target=SCRIPT,
    )
    page = format_html(report)
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot; onmouseover=&quot;alert(2)" in page
    parsed = parse(page)
    assert "script" not in parsed.tags
    assert sum(SCRIPT in chunk for chunk in parsed.text) >= 6  # shown as text, everywhere it appears


def test_html_page_has_the_same_sections_as_the_terminal():
    page = format_html(full_report())
    positions = [
        page.index(s)
        for s in [
            "mem0-hygiene audit",
            "errors found; 1 check could not run",
            "<h3>Errors: storage (1)</h3>",
            "STORE_VOLATILE",
            "<h3>Errors: content (1)</h3>",
            "<h3>Warnings: storage (1)</h3>",
            "STORE_UNDER_TMP",
            "<h3>Warnings: history (1)</h3>",
            "<h3>Info: ledger (1)</h3>",
            "<h3>Skipped checks (1)</h3>",
            "BACKUP_LAST_VERIFIED",
            "<h3>Store locations</h3>",
            "https://qdrant.example.com:6333",
        ]
    ]
    assert positions == sorted(positions)
    assert LONG_FIX in "".join(parse(page).text)  # the fix whole, in one block
    assert parse(page).tags.count("article") == len(full_report().findings)  # one card per finding
    assert parse(page).tags.count("table") == 1  # the store map


def test_repr_html_is_a_fragment_with_the_codes():
    report = full_report()
    fragment = report._repr_html_()
    assert fragment == report_html_fragment(report)
    assert fragment.startswith('<div class="mem0-hygiene-report">') and fragment.endswith("</div>")
    assert "<html" not in fragment and "<body" not in fragment
    for code in report.codes() + ["BACKUP_LAST_VERIFIED"]:
        assert code in fragment


def test_clean_report_html():
    fragment = report_html_fragment(Report())
    assert "No findings." in fragment and "None: every check ran." in fragment
    assert "clean: no findings" in fragment


def test_a_long_copy_path_in_where_is_never_broken_at_80_columns():
    from datetime import datetime, timezone

    from rich.console import Console

    from mem0_hygiene.actions.where import Where
    from mem0_hygiene.stores.copies import StoreCopy

    long = "/var/backups/mem0/" + "b" * 90 + "/2026-12-01T120000Z"
    copy = StoreCopy("backup_set", long, ("vector_store", "history_db"), "2026-11-29T12:00:00+00:00", True, 2048)
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(Where(locations=(), copies=(copy,), now=datetime(2026, 12, 1, 12, tzinfo=timezone.utc)), crop=False)
    lines = console.export_text().splitlines()
    assert "  " + long in lines
    facts = lines[lines.index("  " + long) - 1]
    assert facts.split() == ["backup_set", "holds", "vector_store,", "history_db", "2.0", "days", "old", "2.0", "KiB"]
