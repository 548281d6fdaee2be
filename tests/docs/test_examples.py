"""Every Python and shell example of the README and the docs runs offline and prints what its page shows (see
:mod:`tests.docs.examples` for how a page states its output, and how an example that cannot run offline is
skipped by name, with its reason)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sybil import Example

from .examples import PAGES, PageRun, example_id, has, output_matches, page_examples

RUNS: dict[Path, tuple[list[Example], PageRun]] = {}
CASES = [(page, i) for page in PAGES for i, _ex in enumerate(page_examples(page))]


def _run(page: Path, tmp_path_factory: pytest.TempPathFactory, upto: int) -> None:
    """Evaluate the page's examples in order up to and including ``upto`` (earlier ones once per session)."""
    if page not in RUNS:
        folder = tmp_path_factory.mktemp(page.stem.lower())
        examples = page_examples(page)
        RUNS[page] = (examples, PageRun(folder))
        for example in examples:
            example.namespace["page"] = RUNS[page][1]
            example.namespace["has"] = has
    examples, run = RUNS[page]
    for i in range(upto + 1):
        if i in run.done:
            continue
        run.done.add(i)  # an earlier example that failed or was skipped is reported by its own test
        if i < upto:
            try:
                examples[i].evaluate()
            except BaseException:  # noqa: BLE001 - its own test reports it; the page goes on as a reader would
                pass
        else:
            examples[i].evaluate()


@pytest.mark.parametrize(("page", "index"), CASES, ids=[example_id(p, page_examples(p)[i]) for p, i in CASES])
def test_the_example_runs_offline_and_prints_what_the_page_shows(
    page: Path, index: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _run(page, tmp_path_factory, index)


def test_a_shown_ellipsis_stands_for_any_lines_or_any_text() -> None:
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "d"], ["a", "d"])
    assert output_matches(["audit of ... memories"], ["audit of 107 memories"])
    assert not output_matches(["a", "d"], ["a", "b", "d"])
    assert not output_matches(["audit of ... memories"], ["audit of 107 points"])
