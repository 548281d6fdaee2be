"""The inspection plots carry a text alternative and show in Jupyter as an ``<img>`` with it; the inspection
summary shows as a card in the report's style."""

from __future__ import annotations

import base64
import html
import pickle
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the notebook extra is not installed: pip install -e '.[test,notebook]'")
pytest.importorskip("pandas", reason="the notebook extra is not installed: pip install -e '.[test,notebook]'")

PLOTS = ("plot_confirmation_age", "plot_expiries", "plot_events_per_day", "plot_live_vs_stale", "plot_by_source_kind")


@pytest.fixture(scope="module")
def insp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from mem0_hygiene import inspect
    from mem0_hygiene.demo import _ram_folder, build_demo

    folder = tmp_path_factory.mktemp("plots-demo") / "demo"
    try:
        yield inspect(build_demo(folder).config)
    finally:
        ram = _ram_folder(folder)
        if ram is not None:
            shutil.rmtree(ram, ignore_errors=True)


@pytest.mark.parametrize("name", PLOTS)
def test_each_plot_shows_as_an_image_whose_alt_text_says_what_it_shows(insp: Any, name: str):
    from mem0_hygiene.render.plots import alt_text

    fig = getattr(insp, name)()
    text = alt_text(fig)
    assert len(text) > 60 and re.search(r"\d", text), text
    shown = fig._repr_html_()
    img = re.fullmatch(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]*)" style="[^"]*">', shown)
    assert img and html.unescape(img.group(2)) == text
    assert base64.b64decode(img.group(1)).startswith(b"\x89PNG")
    assert alt_text(pickle.loads(pickle.dumps(fig))) == text  # still a picklable matplotlib Figure


def test_the_alt_texts_carry_the_plots_numbers(insp: Any):
    m = insp.memories
    live = int((m["state"] == "live").sum())
    assert f"the {live} live memories" in insp.plot_confirmation_age().alt_text
    assert f"{len(insp.review_due())} due for review" in insp.plot_confirmation_age().alt_text
    events = insp.events()
    assert ", ".join(f"{k} {v}" for k, v in events.items()) in insp.plot_events_per_day().alt_text
    expired = int((m["state"] == "expired").sum())
    assert f"{expired} expired but not pruned" in insp.plot_expiries().alt_text


def test_a_plot_drawn_into_the_callers_axes_keeps_their_figure_and_describes_it(insp: Any):
    from matplotlib.figure import Figure

    from mem0_hygiene.render.plots import alt_text

    mine = Figure()
    fig = insp.plot_by_source_kind(ax=mine.add_subplot())
    assert fig is mine and type(fig) is Figure  # its display stays matplotlib's
    assert alt_text(fig).startswith("Horizontal bar chart of memories per source kind")


def test_an_empty_plot_says_so_in_its_alt_text(insp: Any):
    from dataclasses import replace

    empty = replace(insp, memories=insp.memories.iloc[0:0])
    assert empty.plot_confirmation_age().alt_text.endswith(": no live memories.")


def test_the_inspection_summary_is_a_card_with_the_rows_as_a_list(insp: Any):
    page = insp._repr_html_()
    assert page.startswith('<div class="mem0-hygiene-inspection"><div class="mem0-hygiene-report"><style>')
    rows = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page))
    assert rows["Target"] == "config" and rows["Review due"].startswith(f"{len(insp.review_due())} live memories")
    assert '<span class="m0h-tok"><code>.plot_expiries()</code>,</span>' in rows["Plots"]
