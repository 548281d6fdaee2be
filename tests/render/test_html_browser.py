"""The HTML audit report in a real headless Chromium: the demo's audit at phone, laptop and desktop widths.

Each page is loaded from a file at 375, 1280 and 1920 px, measured through the DevTools protocol (tests/render/
chromium.py: a pipe, no packages), and kept as a full-page screenshot in one folder that the run's summary names
(``$MEM0_HYGIENE_SCREENSHOTS`` to choose it; pytest's temporary folder otherwise: tests/render/conftest.py).
Skipped, with the reason, when no Chromium can be run (Debian: ``apt-get install chromium``; .ci/run installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene.render import format_html
from mem0_hygiene.report import Finding, Report, Severity, Skipped

from .chromium import Browser, BrowserError, Page, find_chromium

WIDTHS = (375, 1280, 1920)

BINARY, WHY_NOT = find_chromium()
pytestmark = pytest.mark.skipif(BINARY is None, reason=WHY_NOT)

# Elements whose content is wider than their own box (spilling out, cut off, or behind a scrollbar of their own);
# inline boxes have no width of their own and are left out.
OVERFLOWING = """
JSON.stringify([...document.querySelectorAll('body *')].filter(el => {
  const style = getComputedStyle(el);
  if (style.display.startsWith('inline') && !style.display.includes('block')) return false;
  if (!el.clientWidth || style.display === 'none') return false;
  return el.scrollWidth > el.clientWidth + 1;
}).map(el => el.tagName.toLowerCase() + '.' + el.className + ' ' + el.scrollWidth + '>' + el.clientWidth))
"""

# Tokens of fix commands that the layout broke across lines although they would fit on one.
SPLIT_TOKENS = """
JSON.stringify([...document.querySelectorAll('.m0h-fix .m0h-tok')].filter(tok => {
  const range = document.createRange();
  range.selectNodeContents(tok);
  const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
  if (lines.size < 2) return false;
  const pre = tok.closest('pre'), style = getComputedStyle(pre);
  const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const alone = tok.cloneNode(true);  // the token on one line, to see whether it would have fitted
  alone.style.cssText = 'position:absolute;white-space:nowrap;display:inline;max-width:none';
  pre.appendChild(alone);
  const natural = alone.getBoundingClientRect().width;
  alone.remove();
  return natural <= room;
}).map(tok => tok.textContent))
"""

WIDTH_FACTS = """
JSON.stringify({scroll: document.documentElement.scrollWidth, inner: innerWidth,
                client: document.documentElement.clientWidth})
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert BINARY is not None
    try:
        chromium = Browser(BINARY)
        chromium.call("Browser.getVersion")
    except (BrowserError, OSError) as exc:
        pytest.skip(f"Chromium ({BINARY}) cannot be run here: {exc}")
    with chromium:
        yield chromium


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    tab = browser.page()
    yield tab
    browser.call("Target.closeTarget", {"targetId": tab.call("Target.getTargetInfo")["targetInfo"]["targetId"]})


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The demo deployment (``mem0-hygiene demo``), its RAM-disk folder removed afterwards."""
    from mem0_hygiene.demo import _ram_folder, build_demo

    folder = tmp_path_factory.mktemp("html-demo") / "demo"
    try:
        yield build_demo(folder)
    finally:
        ram = _ram_folder(folder)
        if ram is not None:
            shutil.rmtree(ram, ignore_errors=True)


@pytest.fixture(scope="module")
def demo_report(demo: Any) -> Report:
    """The demo deployment's audit, as ``mem0-hygiene demo`` runs it."""
    from mem0_hygiene import audit

    config_file = f"{demo.folder}/config.json"
    report = audit(demo.config, description=f"demo ({config_file})", config_hint=f" --config {config_file}")
    assert report.findings and report.locations
    return report


@pytest.fixture(scope="module")
def demo_page(demo_report: Report, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's audit as a page on disk (what ``mem0-hygiene demo --html FILE`` writes)."""
    path = tmp_path_factory.mktemp("html-page") / "demo-audit.html"
    path.write_text(format_html(demo_report), encoding="utf-8")
    return path


def measure(page: Page) -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(page.eval(WIDTH_FACTS))
    facts["overflowing"] = json.loads(page.eval(OVERFLOWING))
    facts["split"] = json.loads(page.eval(SPLIT_TOKENS))
    return facts


def assert_fits(facts: dict[str, Any], width: int) -> None:
    assert facts["inner"] == width
    assert facts["scroll"] <= facts["inner"] and facts["scroll"] <= facts["client"], facts
    assert facts["overflowing"] == []
    assert facts["split"] == []


# ------------------------------------------------------------------------------------------- the measurement


def test_the_measurement_catches_a_page_that_scrolls_sideways_or_breaks_a_command(page: Page, tmp_path: Path):
    """The checks below can fail: a wide table, a fix behind its own scrollbar, a command broken at a hyphen."""
    wide = tmp_path / "wide.html"
    wide.write_text(
        '<!DOCTYPE html><meta charset="utf-8"><body>'
        '<table><tr><td style="white-space:nowrap">'
        + "mem0-hygiene relocate --to /var/lib/mem0 "
        * 12
        + "</td></tr></table>"
        '<pre style="overflow-x:auto;width:200px">' + "x" * 400 + "</pre>"
        '<pre class="m0h-fix" style="width:12ch;padding:0;white-space:pre-wrap;font:16px monospace">'
        '<span class="m0h-tok">xxxxxxx</span> <span class="m0h-tok">ab-cd-ef</span></pre>'
    )
    page.load(wide, 1280)
    facts = measure(page)
    assert facts["scroll"] > facts["inner"]
    assert any(item.startswith("pre") for item in facts["overflowing"])
    assert facts["split"] == ["ab-cd-ef"]  # broken at a hyphen, though it fits a line


# ------------------------------------------------------------------------------------------- the demo's report


@pytest.mark.parametrize("width", WIDTHS)
def test_the_demo_report_fits_the_width_with_no_horizontal_scrolling(
    page: Page, demo_page: Path, shots: Path, width: int
):
    page.load(demo_page, width)
    facts = measure(page)
    page.screenshot(shots / f"demo-audit-{width}.png")
    assert_fits(facts, width)
    # the fix commands are whole, and wrap between words: text, not pictures of text
    assert page.eval("document.querySelectorAll('.m0h-card').length") >= 8
    assert page.eval("document.querySelectorAll('pre.m0h-fix').length") >= 8


@pytest.mark.parametrize("width", (375, 1280))
def test_title_and_why_get_a_readable_measure(page: Page, demo_page: Path, width: int):
    """Not ~80 px columns: the why text gets most of the card (at least 280 px on a phone, 600 px on a laptop)."""
    page.load(demo_page, width)
    narrowest = page.eval(
        "Math.min(...[...document.querySelectorAll('.m0h-why, .m0h-title')]"
        ".map(el => el.getBoundingClientRect().width))"
    )
    assert narrowest >= (280 if width < 500 else 600)


def test_the_page_loads_nothing_and_runs_nothing(page: Page, demo_page: Path):
    page.load(demo_page, 1280)
    assert page.requests() == [demo_page.resolve().as_uri()]
    assert page.eval("document.scripts.length") == 0
    assert page.eval("document.querySelectorAll('link, img, iframe, object, embed').length") == 0


def test_examples_open_and_show_the_memories(page: Page, demo_page: Path):
    page.load(demo_page, 1280)
    assert page.eval(
        "[...document.querySelectorAll('details.m0h-examples:not([open]) li')].every(li => !li.checkVisibility())"
    )
    page.eval("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.eval("[...document.querySelectorAll('details li, details dd')].every(el => el.checkVisibility())")
    assert "Dana prefers short answers with code first" in page.eval("document.body.innerText")
    assert_fits(measure(page), 1280)


def test_print_shows_the_folded_examples_and_fits_the_paper(page: Page, demo_page: Path, shots: Path):
    page.load(demo_page, 700)  # about an A4 page's printable width at 96 dpi
    page.media("print")
    try:
        assert page.eval(
            "[...document.querySelectorAll('details:not([open]) li, details:not([open]) dd')]"
            ".every(el => el.checkVisibility() && el.getBoundingClientRect().height > 0)"
        )
        assert_fits(measure(page), 700)
        page.screenshot(shots / "demo-audit-print.png")
        pdf = page.pdf(shots / "demo-audit.pdf")
        assert pdf.read_bytes().startswith(b"%PDF")
    finally:
        page.media("")


# ------------------------------------------------------------------------------------------- hostile text

PAYLOADS = (
    "<script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "</code></pre></details></article><h1 id=pwned>injected</h1>",
    '" onmouseover="document.title=\'pwned\'" x="',
    "ab\u202edlrow\u2066 olleh\u2069 \x9b31m\x85 \x1b[2J end",
)
LONG_TOKEN = "x" * 300 + "/" + "y" * 200


def hostile_report() -> Report:
    texts = PAYLOADS + (LONG_TOKEN,)
    return Report(
        findings=(
            Finding(
                code="SECRET_IN_MEMORY",
                severity=Severity.ERROR,
                area="content",
                title="title " + PAYLOADS[0],
                count=len(texts),
                examples=texts,
                why=PAYLOADS[1] + " " + PAYLOADS[4],
                fix=f"mem0-hygiene forget '{PAYLOADS[0]}' --scrub  # {PAYLOADS[2]}",
                details={
                    "text": PAYLOADS[2],
                    "ids": list(texts),
                    PAYLOADS[3]: PAYLOADS[4],
                    "key": "sk-proj-" + "A1b2C3d4E5" * 4,
                    "nested": {"path": LONG_TOKEN},
                },
            ),
            Finding(
                code=PAYLOADS[3],
                severity=Severity.WARNING,
                area=PAYLOADS[0],
                title=LONG_TOKEN,
                why=LONG_TOKEN,
                fix=LONG_TOKEN,
            ),
        ),
        skipped=(Skipped(code="X", area=PAYLOADS[1], reason=PAYLOADS[4] + " " + LONG_TOKEN),),
        locations=({"role": PAYLOADS[0], "path": f"/tmp/{PAYLOADS[1]}/{LONG_TOKEN}", "note": PAYLOADS[2]},),
        target=PAYLOADS[3],
    )


@pytest.mark.parametrize("width", (375, 1280))
def test_hostile_memory_text_shows_as_text_runs_nothing_and_still_fits(
    page: Page, tmp_path: Path, shots: Path, width: int
):
    path = tmp_path / "hostile.html"
    path.write_text(format_html(hostile_report()), encoding="utf-8")
    page.load(path, width)
    page.eval("document.querySelectorAll('details').forEach(d => d.open = true)")
    facts = measure(page)
    page.screenshot(shots / f"hostile-{width}.png")
    assert page.eval("document.title").startswith("mem0-hygiene audit")
    assert page.eval("document.scripts.length + document.images.length") == 0
    assert page.eval("document.getElementById('pwned')") is None
    assert (
        page.eval(
            "[...document.querySelectorAll('*')].some(el => [...el.attributes].some(a => a.name.startsWith('on')))"
        )
        is False
    )
    shown = page.eval("document.body.innerText")
    assert PAYLOADS[0] in shown and "</code></pre></details>" in shown
    assert not any(ch in shown for ch in "\u202e\u2066\u2069\x9b\x85\x1b")
    assert "\\u202e" in shown and "\\x9b" in shown and "\\x1b" in shown
    assert "sk-proj-" not in shown and "[redacted" in shown
    assert page.requests() == [path.resolve().as_uri()]
    assert_fits(facts, width)


# ------------------------------------------------------------------------------------------- inside a notebook

NOTEBOOK_HOST = """<!DOCTYPE html><meta charset="utf-8">
<style>
/* What a notebook front-end does to HTML outputs, in general terms: the rules that squeezed and broke the old
   tables (fixed table layout, right-aligned cells, its own code backgrounds, narrow output area). */
body { margin: 0; font: 13px sans-serif; }
.output { padding: 0 20px 0 70px; }
.output table { table-layout: fixed; margin-left: auto; margin-right: auto; border-collapse: collapse; }
.output td, .output th, .output tr { text-align: right; vertical-align: middle; padding: 0.5em; white-space: normal; }
.output tbody tr:nth-child(even) { background: #f5f5f5; }
.output pre, .output code { white-space: pre-wrap; font-size: inherit; padding: 0; background: #fff; }
.output :not(pre) > code { background: #eee; padding: 1px 5px; }
.output p { margin: 0 0 1em; }
.output ul { padding-left: 2em; }
</style>
<div class="output">%s</div>
"""


@pytest.mark.parametrize("width", (375, 1280))
def test_the_notebook_fragment_keeps_its_cards_inside_a_notebooks_css(
    page: Page, demo_report: Report, tmp_path: Path, shots: Path, width: int
):
    path = tmp_path / "notebook.html"
    path.write_text(NOTEBOOK_HOST % demo_report._repr_html_(), encoding="utf-8")
    page.load(path, width)
    facts = measure(page)
    page.screenshot(shots / f"notebook-fragment-{width}.png")
    assert_fits(facts, width)
    assert page.eval("getComputedStyle(document.querySelector('.m0h-code')).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert page.eval("getComputedStyle(document.querySelector('.m0h-locations td')).textAlign") in ("left", "start")


@pytest.mark.parametrize("width", (375, 1280))
def test_the_inspection_summary_fits_a_notebook_too(page: Page, demo: Any, tmp_path: Path, shots: Path, width: int):
    from mem0_hygiene import inspect

    path = tmp_path / "inspection.html"
    path.write_text(NOTEBOOK_HOST % inspect(demo.config)._repr_html_(), encoding="utf-8")
    page.load(path, width)
    facts = measure(page)
    page.screenshot(shots / f"inspection-{width}.png")
    assert_fits(facts, width)
    assert "Review due" in page.eval("document.body.innerText")


# ------------------------------------------------------------------------------------------- the docs' picture

DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "_static" / "audit-report.png"
UPDATE_DOCS = "MEM0_HYGIENE_UPDATE_DOCS_IMAGES"
SHOT_SIZE = (1100, 820)
DIFFERENT = 1.0
"""Mean difference of the grey levels (0-255) of two pictures shrunk tenfold above which they show different
pages: measured, a rerun differs by 0.02 (its run time's digits), the same report without its errors by 3.3."""


def docs_page(report: Report, demo: Any, path: Path) -> Path:
    """The report as the docs show it: what ``mem0-hygiene audit --config demo/config.json --html`` writes in the
    folder holding ``demo``, with this machine's folders written as a reader's (no path of this machine)."""
    html = format_html(report).replace(str(demo.folder), "demo").replace(str(Path.home()), "~")
    path.write_text(re.sub(r"mem0-hygiene-demo-[0-9a-f]+", "mem0-hygiene-demo", html), encoding="utf-8")
    return path


def shrunk_difference(a: Path, b: Path) -> float:
    image = pytest.importorskip("PIL.Image")
    first, second = (image.open(p).convert("L") for p in (a, b))
    assert first.size == second.size, (first.size, second.size)
    size = (first.size[0] // 10, first.size[1] // 10)
    x, y = (im.resize(size, image.Resampling.BOX).tobytes() for im in (first, second))
    return sum(abs(p - q) for p, q in zip(x, y)) / (size[0] * size[1])


def test_the_docs_screenshot_is_the_demo_audit_as_the_browser_shows_it(
    page: Page, demo: Any, tmp_path: Path, shots: Path
):
    """docs/_static/audit-report.png (the auditing guide's picture) is made here: with $MEM0_HYGIENE_UPDATE_DOCS_IMAGES
    set this test writes it; otherwise it fails when the report no longer looks like the picture."""
    from mem0_hygiene import audit

    hint = " --config demo/config.json"
    report = audit(demo.config, description="demo/config.json", config_hint=hint)
    page.load(docs_page(report, demo, tmp_path / "docs.html"), *SHOT_SIZE)
    fresh = page.screenshot(shots / "docs-audit-report.png", full_page=False)
    text = page.eval("document.body.textContent")
    assert [p for p in (str(demo.folder), str(Path.home()), "pytest-of") if p in text] == []  # no folder of ours
    if os.environ.get(UPDATE_DOCS):
        shutil.copyfile(fresh, DOCS_SHOT)
    assert DOCS_SHOT.exists(), f"no {DOCS_SHOT.name}: run this test with {UPDATE_DOCS}=1 and commit the picture"
    assert shrunk_difference(fresh, DOCS_SHOT) < DIFFERENT, (
        f"docs/_static/{DOCS_SHOT.name} no longer shows the report as it looks ({fresh}): run this test with "
        f"{UPDATE_DOCS}=1 and commit the picture"
    )
    # the comparison tells another page apart: the same deployment's report without its errors
    calmer = replace(report, findings=tuple(f for f in report.findings if f.severity is not Severity.ERROR))
    page.load(docs_page(calmer, demo, tmp_path / "calmer.html"), *SHOT_SIZE)
    other = page.screenshot(tmp_path / "calmer.png", full_page=False)
    assert shrunk_difference(other, DOCS_SHOT) > DIFFERENT
