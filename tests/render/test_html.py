"""The HTML audit report's markup, without a browser: cards, the fix as copyable text, details as a key/value
list, the header's counts and bars, a self-contained page, and hostile text escaped everywhere.
(How it lays out at real widths is tests/render/test_html_browser.py.)"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from pathlib import Path

from mem0_hygiene.render import format_html, report_html_fragment
from mem0_hygiene.render.html_style import REPORT_CSS
from mem0_hygiene.render.text import run_text
from mem0_hygiene.report import Finding, Report, Severity, Skipped

KEY = "sk-proj-" + "Zx9Yw8Vu7T" * 4
FIX = (
    "mem0-hygiene forget ID --scrub --config /srv/app/mem0.yaml  # then rotate the credential\n"
    "mem0-hygiene relocate --to /var/lib/mem0 --with-sqlite --config /srv/app/mem0.yaml"
)


def finding(**kw: object) -> Finding:
    base: dict[str, object] = dict(
        code="SECRET_IN_MEMORY",
        severity=Severity.ERROR,
        area="content",
        title="1 memories contain credentials",
        count=10,
        examples=tuple(f"mem-{i}: text {i}" for i in range(5)),
        why="Memories are pasted into prompts.",
        fix=FIX,
    )
    base.update(kw)
    return Finding(**base)  # type: ignore[arg-type]


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def fix_blocks(page: str) -> list[str]:
    return re.findall(r'<pre class="m0h-fix"[^>]*><code>(.*?)</code></pre>', page, re.S)


def test_the_fix_is_one_code_block_whose_text_is_the_fix_exactly():
    page = format_html(Report(findings=(finding(),)))
    (block,) = fix_blocks(page)
    assert text_of(block) == FIX  # what a copy gives: every line whole, no wrapping characters added
    assert '<span class="m0h-comment">' in block and "--with-sqlite" in block
    assert re.search(r'<span class="m0h-tok">--with-sqlite</span>', block)  # wraps between words only
    assert "white-space:pre-wrap" in page and "user-select: all" in REPORT_CSS


def test_a_finding_is_a_card_with_badge_code_count_title_and_why():
    page = report_html_fragment(Report(findings=(finding(),)))
    card = re.search(r'<article class="m0h-card m0h-sev-error">.*?</article>', page, re.S)
    assert card
    shown = text_of(card.group(0))
    for part in (
        "ERROR",
        "SECRET_IN_MEMORY",
        "count 10",
        "1 memories contain credentials",
        "Memories are pasted into prompts.",
    ):
        assert part in shown


def test_examples_fold_into_details_and_say_how_many_are_left_out():
    page = format_html(Report(findings=(finding(),)))
    folded = re.search(r'<details class="m0h-examples"><summary>Examples \(3 of 10\)</summary>(.*?)</details>', page)
    assert folded and folded.group(1).count("<li>") == 4 and "+7 more" in folded.group(1)
    breakdown = finding(
        code="HISTORY_ACTIVITY", severity=Severity.INFO, examples=("ADD: 36", "DELETE: 2"), details={"summary": True}
    )
    page = format_html(Report(findings=(breakdown,)))
    assert '<details class="m0h-examples" open><summary>Breakdown</summary>' in page
    assert "ADD: 36" in page and "m0h-details" not in page  # the summary flag itself is not a detail to show


def test_details_are_a_readable_key_value_list_not_json():
    details = {
        "foreign_key_check_rows": 1,
        "kinds": ["openai_api_key", "aws"],
        "volatile": True,
        "missing": None,
        "when": datetime(2026, 1, 2, tzinfo=timezone.utc),
        "path": Path("/x/y"),
        "ids": {"b", "a"},
        "nested": {"role": "ledger", "size_bytes": 12},
    }
    page = format_html(Report(findings=(finding(details=details),)))
    block = re.search(
        r'<details class="m0h-details"><summary>Details</summary>(<dl class="m0h-kv">.*?)</details>', page
    )
    assert block
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block.group(1))
    assert pairs[:7] == [
        ("Foreign key check rows", "1"),
        ("Kinds", "openai_api_key, aws"),
        ("Volatile", "yes"),
        ("Missing", "-"),
        ("When", "2026-01-02T00:00:00+00:00"),
        ("Path", "/x/y"),
        ("Ids", "a, b"),
    ]
    assert '<dt>Nested</dt><dd><dl class="m0h-kv"><dt>Role</dt><dd>ledger</dd>' in block.group(1)
    assert not set('{}"[]') & set(text_of(block.group(1)))


def test_the_header_has_the_verdict_counts_per_severity_and_a_bar_per_area():
    report = Report(
        findings=(
            finding(),
            finding(code="A", severity=Severity.WARNING, area="storage"),
            finding(code="B", severity=Severity.WARNING, area="storage"),
            finding(code="C", severity=Severity.INFO, area="storage"),
        ),
        skipped=(Skipped(code="BACKUP_RESTORABLE", area="backups", reason="no backup folder"),),
        target="/srv/app/mem0.yaml",
        started_at="2026-12-01T12:00:00.250000+00:00",
        finished_at="2026-12-01T12:00:03.750000+00:00",
    )
    page = format_html(report)
    header = re.search(r'<header class="m0h-head m0h-sev-error">(.*?)</header>', page, re.S)
    assert header
    shown = text_of(header.group(1))
    assert "errors found; 1 check could not run" in shown and "/srv/app/mem0.yaml" in shown
    assert "2026-12-01 12:00:00 UTC, took 3.5\u00a0s" in shown
    assert re.findall(r"<li class=\"m0h-sev-(\w+)[^\"]*\"><b>(\d+)</b>", header.group(1)) == [
        ("error", "1"),
        ("warning", "2"),
        ("info", "1"),
        ("skipped", "1"),
    ]
    areas = re.search(r'<dl class="m0h-areas"[^>]*>(.*?)</dl>', header.group(1))
    assert areas
    bars = re.findall(
        r'<dt>(.*?)</dt><dd><div class="m0h-bar" role="img" aria-label="([^"]*)">(.*?)</div>', areas.group(1)
    )
    assert [(re.sub(r"<[^>]+>", "", name), label) for name, label, _ in bars] == [
        ("Storage", "2 warnings, 1 info"),
        ("Content", "1 error"),
        ("Backups", "1 skipped"),
    ]
    storage_widths = re.findall(r"width:([\d.]+)%", bars[0][2])
    assert storage_widths == ["66.67", "33.33"]  # shares of the busiest area, so bars compare across areas
    assert '<a href="#m0h-area-storage">' in header.group(1) and 'id="m0h-area-storage"' in page


def test_run_times_read_as_a_date_to_the_second_and_a_duration():
    assert (
        run_text("2026-12-01T12:00:00.206352+00:00", "2026-12-01T12:00:00.252556+00:00")
        == "2026-12-01 12:00:00 UTC, took 46 ms"
    )
    assert (
        run_text("2026-12-01T12:00:00+00:00", "2026-12-01T12:00:02.5+00:00", "\u00a0")
        == "2026-12-01 12:00:00 UTC, took 2.5\u00a0s"
    )
    assert run_text("yesterday", "") == "yesterday -> ?"


def test_the_page_is_self_contained_and_forbids_scripts_and_fetches():
    page = format_html(Report(findings=(finding(),), locations=({"role": "ledger", "path": "/srv/h.db"},)))
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<style>" in page.split("</head>")[0] and "<link" not in page and "<script" not in page
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page) and "url(" not in page and "@import" not in page
    assert "@media print" in page


def test_the_notebook_fragment_carries_its_own_scoped_style():
    fragment = report_html_fragment(Report(findings=(finding(),)))
    assert fragment.startswith('<div class="mem0-hygiene-report"><style>') and "<html" not in fragment
    css = re.sub(r"/\*.*?\*/", "", REPORT_CSS, flags=re.S)
    selectors = [
        part.strip()
        for head in re.findall(r"([^{}]+)\{[^{}]*\}", css)
        for part in re.sub(r"^\s*@[^{]*\{", "", head).split(",")
    ]
    assert len(selectors) > 50
    assert [s for s in selectors if not s.startswith(".mem0-hygiene-report")] == []


def test_hostile_text_is_escaped_and_redacted_in_every_part_of_the_page():
    evil = f"<script>alert(1)</script>\u202e\x9b\x85\x1b[2J {KEY}"
    report = Report(
        findings=(
            Finding(
                code=evil,
                severity=Severity.WARNING,
                area=evil,
                title=evil,
                count=1,
                examples=(evil,),
                why=evil,
                fix=f"echo '{evil}'  # {evil}",
                details={evil: evil, "list": [evil, {"k": evil}]},
            ),
        ),
        skipped=(Skipped(code=evil, area=evil, reason=evil),),
        locations=({"role": evil, "path": f"/tmp/{evil}", "note": evil, "filesystem": {"fstype": evil}},),
        target=evil,
        started_at=evil,
    )
    for rendered in (format_html(report), report_html_fragment(report)):
        assert "<script" not in rendered and KEY not in rendered
        assert not any(ch in rendered for ch in "\u202e\x9b\x85\x1b")
        assert rendered.count("&lt;script&gt;alert(1)&lt;/script&gt;\\u202e\\x9b\\x85\\x1b[2J [redacted") >= 12
