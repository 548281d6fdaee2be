"""Every Python and shell example of the README and the docs runs offline and prints what its page shows (see
:mod:`tests.docs.examples` for how a page states its output, and how an example that cannot run offline is
skipped by name, with its reason)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sybil import Example

from ..conftest import remove_demos_built_under
from .examples import PAGES, PageRun, example_id, has, output_matches, page_examples

RUNS: dict[Path, tuple[list[Example], PageRun]] = {}
CASES = [(page, i) for page in PAGES for i, _ex in enumerate(page_examples(page))]


@pytest.fixture(scope="session")
def pages_root() -> Iterator[Path]:
    """Where the pages run: a new folder with a short path (/tmp/mh-docs-*, whatever $TMPDIR is), removed after
    the session. A page shows paths as ``...``, but a long one still moves a line's end: the
    CLI's text is as wide as a pipe's console (the audit's tables cut a long path with an ellipsis)."""
    root = Path(tempfile.mkdtemp(prefix="mh-docs-", dir="/tmp" if os.path.isdir("/tmp") else None))
    (root / "t").mkdir()  # the temp folder of the pages' Python blocks (their tempfile.mkdtemp())
    try:
        yield root
    finally:
        remove_demos_built_under(root)  # the pages' demos keep their vector store in /dev/shm
        shutil.rmtree(root, ignore_errors=True)


def _run(page: Path, root: Path, upto: int) -> None:
    """Evaluate the page's examples in order up to and including ``upto`` (earlier ones once per session)."""
    if page not in RUNS:
        folder = root / page.stem.lower()
        folder.mkdir()
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
def test_the_example_runs_offline_and_prints_what_the_page_shows(page: Path, index: int, pages_root: Path) -> None:
    _run(page, pages_root, index)


def test_a_shown_ellipsis_stands_for_any_lines_or_any_text() -> None:
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "d"], ["a", "d"])
    assert output_matches(["audit of ... memories"], ["audit of 107 memories"])
    assert not output_matches(["a", "d"], ["a", "b", "d"])
    assert not output_matches(["audit of ... memories"], ["audit of 107 points"])
