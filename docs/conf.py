"""Sphinx configuration of the documentation site: Markdown pages (MyST), the furo theme, and reference pages
generated from the code (the CLI by sphinx-click, the Python API by autodoc, the finding codes and the settings by
``_ext/hygiene_reference.py``). Build: ``sphinx-build -W -b html docs docs/_build/html`` (offline).

Why Sphinx rather than MkDocs: the references must come from the code, and sphinx-click (every command and option of
the click group) and autodoc (the public names' docstrings) do that without a second copy; MyST keeps the pages in
Markdown, and ``-W`` turns every broken reference or stray page into a failure."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("MEM0_TELEMETRY", "False")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

from mem0_hygiene.version import __version__  # noqa: E402

project = "mem0-hygiene"
author = "the mem0-hygiene authors"
copyright = "mem0-hygiene authors, Apache-2.0"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_click",
    "hygiene_reference",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Fields", "params_style")]
html_theme = "furo"
html_title = f"mem0-hygiene {__version__}"
html_static_path: list[str] = []
