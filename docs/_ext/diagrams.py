"""The documentation's two diagrams, drawn as inline SVG from the code's own names (no graph tool, nothing fetched):

- :func:`states_svg`: a memory's states, one box per state the ledger decides (``stores.states.STATE_ORDER``,
  each with the ledger column that puts a memory there, from ``stores.states.RULES``) and ``untracked``, and the
  verbs that move a memory between them (:data:`STATE_EDGES`; the tests check each verb is a method of the drop-in
  ``Memory`` or a command of the CLI);
- :func:`dataflow_svg`: config -> target -> stores -> checks/actions -> results -> renderers, each box naming the
  package that holds that step (:data:`FLOW`; the tests check each exists).

Strokes and text use ``currentColor`` so the pictures follow the theme's light and dark modes. Loaded by path from
``hygiene_reference.py`` and from the tests; it needs no Sphinx.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from mem0_hygiene.stores.states import RULES, STATE_ORDER, UNTRACKED

BOX_W, BOX_H = 150, 50
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"


@dataclass(frozen=True)
class Box:
    key: str
    x: float  # centre
    y: float
    title: str
    note: str = ""
    accent: bool = False
    w: float = BOX_W


@dataclass(frozen=True)
class Edge:
    start: str
    end: str
    label: str
    verbs: tuple[str, ...]
    """The drop-in methods or CLI commands that make this move (checked by the tests)."""
    via: tuple[tuple[float, float], ...] = ()
    label_at: tuple[float, float] | None = None


NEW = "a new fact"
"""Not a state: where the moves of a memory begin (the box the ``add`` arrows leave from)."""

STATE_PLACES: dict[str, tuple[float, float]] = {
    NEW: (95, 55),
    "quarantined": (350, 55),
    UNTRACKED: (95, 175),
    "live": (350, 175),
    "expired": (650, 55),
    "superseded": (650, 175),
    "invalidated": (650, 295),
    "deleted": (910, 175),
}
"""Where each box sits (its centre)."""

STATE_EDGES: tuple[Edge, ...] = (
    Edge(NEW, "quarantined", "tool output", ("add",)),
    Edge(NEW, "live", "add", ("add",), label_at=(232, 110)),
    Edge(NEW, UNTRACKED, "plain mem0's add", (), label_at=(150, 120)),
    Edge(UNTRACKED, "live", "adopt", ("adopt",)),
    Edge("quarantined", "live", "confirm", ("confirm",)),
    Edge("live", "expired", "expires_at passes", ("add",), label_at=(500, 95)),
    Edge("live", "superseded", "supersede, topic_key", ("supersede", "consolidate")),
    Edge("live", "invalidated", "invalidate", ("invalidate", "consolidate"), label_at=(500, 258)),
    Edge("expired", "deleted", "prune", ("prune",)),
    Edge("superseded", "deleted", "prune", ("prune",)),
    Edge("invalidated", "deleted", "prune", ("prune",)),
    Edge(
        "live",
        "deleted",
        "delete, delete_all, reset, forget",
        ("delete", "delete_all", "reset", "forget"),
        via=((350, 360), (910, 360)),
        label_at=(650, 350),
    ),
)
"""The moves between states, each with the verbs that make it."""

FLOW: tuple[tuple[str, str, str], ...] = (
    ("config", "config.py, config_loader.py", 'the app\'s mem0 config and its "hygiene" section'),
    ("target", "target.py", "resolved once: paths, settings, clock, locations"),
    ("stores", "stores/", "ledger, history.db, vector store (one seam per provider)"),
    ("checks / actions", "auditing/, actions/", "audit checks; prune, backup, restore, forget, ..."),
    ("results", "report/", "Report, Finding and result objects: plain data"),
    ("renderers", "render/, cli/", "terminal, JSON, HTML page, notebook"),
)
"""The one-way flow: (step, the package or modules that hold it, what happens there)."""


def _box(box: Box) -> str:
    left, top = box.x - box.w / 2, box.y - BOX_H / 2
    fill = "fill:#3b82f6;fill-opacity:.18" if box.accent else "fill:#808080;fill-opacity:.08"
    parts = [
        f'<rect x="{left}" y="{top}" width="{box.w}" height="{BOX_H}" rx="9" '
        f'style="{fill};stroke:currentColor;stroke-width:1.4"/>',
    ]
    title_y = box.y - 3 if box.note else box.y + 6
    parts.append(
        f'<text x="{box.x}" y="{title_y}" text-anchor="middle" style="font-size:16px;font-weight:600;'
        f'fill:currentColor">{escape(box.title)}</text>'
    )
    if box.note:
        parts.append(
            f'<text x="{box.x}" y="{box.y + 15}" text-anchor="middle" style="font-size:12px;fill:currentColor;'
            f'opacity:.75">{escape(box.note)}</text>'
        )
    return "".join(parts)


def _border_point(box: Box, toward: tuple[float, float]) -> tuple[float, float]:
    """Where the line from ``box``'s centre toward a point leaves the box."""
    dx, dy = toward[0] - box.x, toward[1] - box.y
    if dx == 0 and dy == 0:
        return box.x, box.y
    scale = min(
        (box.w / 2) / abs(dx) if dx else float("inf"),
        (BOX_H / 2) / abs(dy) if dy else float("inf"),
    )
    return box.x + dx * scale, box.y + dy * scale


def _edge(edge: Edge, boxes: dict[str, Box]) -> str:
    start, end = boxes[edge.start], boxes[edge.end]
    points = [*edge.via]
    first = _border_point(start, points[0] if points else (end.x, end.y))
    last = _border_point(end, points[-1] if points else (start.x, start.y))
    if points:  # a routed edge leaves and enters its boxes straight down / up
        first = (start.x, start.y + BOX_H / 2)
        last = (end.x, end.y + BOX_H / 2 + 6)
    else:  # stop short of the box so the arrowhead shows
        dx, dy = last[0] - first[0], last[1] - first[1]
        length = max((dx * dx + dy * dy) ** 0.5, 1)
        last = (last[0] - dx / length * 6, last[1] - dy / length * 6)
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in [first, *points, last])
    lx, ly = edge.label_at or ((first[0] + last[0]) / 2, (first[1] + last[1]) / 2 - 8)
    return (
        f'<polyline points="{path}" style="fill:none;stroke:currentColor;stroke-width:1.4" '
        f'marker-end="url(#m0h-arrow)"/>'
        f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" style="font-size:13px;fill:currentColor;'
        f'font-style:italic">{escape(edge.label)}</text>'
    )


def _svg(width: int, height: int, title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'style="width:100%;height:auto;max-width:{width}px;{FONT}" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
        '<defs><marker id="m0h-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" style="fill:currentColor"/></marker></defs>'
        f"{body}</svg>"
    )


def state_notes() -> dict[str, str]:
    """What puts a memory in each state, from the ledger's rules (the column, and how it is tested)."""
    how = {"set": "{} set", "flag": "{} = 1", "past": "{} passed"}
    notes = {state: how[test].format(column) for state, column, test in RULES}
    notes["live"] = "served by reads"
    notes[UNTRACKED] = "no ledger row yet"
    notes[NEW] = ""
    return notes


def states_svg() -> str:
    """A memory's states and the verbs that move it between them."""
    notes = state_notes()
    boxes = {
        state: Box(state, *STATE_PLACES[state], state, notes[state], accent=state == "live")
        for state in (*STATE_ORDER, UNTRACKED, NEW)
    }
    body = "".join(_box(box) for box in boxes.values()) + "".join(_edge(edge, boxes) for edge in STATE_EDGES)
    return _svg(1000, 385, "A memory's states and what moves it between them", body)


def dataflow_svg() -> str:
    """The one-way data flow, top to bottom, each step with the package that holds it."""
    step, width, left = 78, 210, 20
    boxes = [
        Box(name, left + width / 2, 35 + i * step, name, where, w=width) for i, (name, where, _) in enumerate(FLOW)
    ]
    body = []
    for i, box in enumerate(boxes):
        body.append(_box(box))
        body.append(
            f'<text x="{left + width + 24}" y="{box.y + 5}" style="font-size:14px;fill:currentColor">'
            f"{escape(FLOW[i][2])}</text>"
        )
        if i:
            above = boxes[i - 1]
            body.append(
                f'<line x1="{box.x}" y1="{above.y + BOX_H / 2}" x2="{box.x}" y2="{box.y - BOX_H / 2 - 6}" '
                'style="stroke:currentColor;stroke-width:1.4" marker-end="url(#m0h-arrow)"/>'
            )
    height = int(35 + (len(FLOW) - 1) * step + BOX_H / 2 + 15)
    return _svg(
        760, height, "Data flows one way: config, target, stores, checks and actions, results, renderers", "".join(body)
    )


DIAGRAMS = {"states": states_svg, "dataflow": dataflow_svg}
"""The diagrams by the name the ``diagram`` directive takes."""
