"""The documentation's diagrams (docs/_ext/diagrams.py) say what the code does: the states picture has a box for
every state the ledger decides and only those, each move's verbs are methods of the drop-in or commands of the CLI,
the data-flow picture names packages that exist, and both are well-formed SVG the pages include."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

import mem0_hygiene
from mem0_hygiene.cli import cli
from mem0_hygiene.stores.states import STATE_ORDER, UNTRACKED

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
PACKAGE = Path(mem0_hygiene.__file__).parent
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def diagrams() -> ModuleType:
    spec = importlib.util.spec_from_file_location("diagrams", DOCS / "_ext" / "diagrams.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("diagrams", module)  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return [el.text or "" for el in root.iter(f"{SVG}text")]


def test_the_states_picture_has_a_box_for_every_state_the_ledger_decides_and_no_other(diagrams: ModuleType):
    drawn = set(diagrams.STATE_PLACES) - {diagrams.NEW}
    assert drawn == {*STATE_ORDER, UNTRACKED}
    shown = texts(diagrams.states_svg())
    for state in (*STATE_ORDER, UNTRACKED):
        assert state in shown
    # each box says what puts a memory there, from the ledger's own rules
    assert "superseded_by set" in shown and "expires_at passed" in shown


def test_every_move_in_the_states_picture_is_made_by_a_real_verb(diagrams: ModuleType):
    unknown = [
        (edge.label, verb)
        for edge in diagrams.STATE_EDGES
        for verb in edge.verbs
        if not callable(getattr(mem0_hygiene.Memory, verb, None)) and verb not in cli.commands
    ]
    assert unknown == []
    # only the move plain mem0 makes has no verb of ours
    assert [e.label for e in diagrams.STATE_EDGES if not e.verbs] == ["plain mem0's add"]
    # every state but the last is left by some move, and every state is reached by one
    assert {e.start for e in diagrams.STATE_EDGES} >= set(diagrams.STATE_PLACES) - {"deleted"}
    assert {e.end for e in diagrams.STATE_EDGES} >= set(diagrams.STATE_PLACES) - {diagrams.NEW}


def test_the_data_flow_picture_names_packages_that_exist_in_the_order_data_flows(diagrams: ModuleType):
    steps = [step for step, _, _ in diagrams.FLOW]
    assert steps == ["config", "target", "stores", "checks / actions", "results", "renderers"]
    missing = [
        name
        for _, where, _ in diagrams.FLOW
        for name in (part.strip() for part in where.split(","))
        if not (PACKAGE / name.rstrip("/")).exists()
    ]
    assert missing == []
    shown = texts(diagrams.dataflow_svg())
    assert all(step in shown for step in steps)


def test_the_concept_pages_draw_the_diagrams(diagrams: ModuleType):
    assert "```{diagram} states" in (DOCS / "concepts" / "states.md").read_text(encoding="utf-8")
    assert "```{diagram} dataflow" in (DOCS / "concepts" / "architecture.md").read_text(encoding="utf-8")
    assert set(diagrams.DIAGRAMS) == {"states", "dataflow"}
