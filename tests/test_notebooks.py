"""Every notebook in notebooks/ runs headless, top to bottom, without an error; and is committed without outputs.

The kernel is this interpreter (a kernelspec written to a temporary folder names ``sys.executable``), so the
notebooks run against the package under test and not whatever a ``python3`` kernelspec elsewhere points at.
The kernel inherits this process's environment (conftest: no telemetry, mem0's folder in a temp dir).
Skipped, with the reason, only when the notebook extra is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXTRA = ("pandas", "matplotlib", "nbclient", "nbformat", "ipykernel")
MISSING = [name for name in EXTRA if importlib.util.find_spec(name) is None]
KERNEL = "mem0-hygiene-test-python"
CELL_TIMEOUT = 180  # seconds per cell; the walkthrough takes a few seconds in all

needs_extra = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the notebook extra is not installed (no {', '.join(MISSING)}): pip install -e '.[test,notebook]'",
)


def test_there_is_a_notebook():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path):
    nb = json.loads(path.read_text())
    dirty = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert dirty == [], f"{path.name}: clear the outputs of cells {dirty} before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_text_names_only_finding_codes_that_exist(path: Path):
    """A code the markdown cites (`DELETED_TEXT_IN_HISTORY`) is one of the audit's finding codes (the registry the
    docs' finding codes page is generated from)."""
    from mem0_hygiene.auditing.checks import REGISTRY

    known = {chk.code for chk in REGISTRY}
    assert "DELETED_TEXT_IN_HISTORY" in known
    nb = json.loads(path.read_text())
    cited = {
        code
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
        for code in re.findall(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`", "".join(cell["source"]))
    }
    assert sorted(cited - known) == []


@pytest.fixture(scope="module")
def kernel_manager_factory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Kernel managers for a kernelspec that runs ipykernel on this very interpreter."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    folder = tmp_path_factory.mktemp("kernels") / KERNEL
    folder.mkdir()
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "mem0-hygiene tests",
        "language": "python",
    }
    (folder / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(folder.parent)], ensure_native_kernel=False)
    return lambda: KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)


@needs_extra
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_without_errors(path: Path, tmp_path: Path, kernel_manager_factory: Any):
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    km = kernel_manager_factory()
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working folder
    )
    started = time.perf_counter()
    try:
        client.execute()  # raises CellExecutionError, naming the cell, on the first error
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    elapsed = time.perf_counter() - started
    errors = [
        o
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert errors == []
    text_only_figures = [
        o["data"]["text/plain"]
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
        if "data" in o and str(o["data"].get("text/plain", "")).startswith("<Figure") and "image/png" not in o["data"]
    ]
    assert text_only_figures == [], "a figure showed as text, not as an image"
    shown = [o["data"] for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", []) if "data" in o]
    figures = [d for d in shown if "image/png" in d]
    no_alt = [
        d.get("text/plain") for d in figures if not re.search(r'<img [^>]*alt="[^"]{40,}"', d.get("text/html", ""))
    ]
    assert figures and no_alt == [], "a plot shows without a text alternative"
    reports = [d["text/html"] for d in shown if 'class="mem0-hygiene-report"' in d.get("text/html", "")[:40]]
    assert reports and all('class="m0h-card' in r and 'class="m0h-fix"' in r for r in reports)
    print(f"{path.name}: {elapsed:.1f} s")
