"""The matplotlib ``Figure`` the inspection plots draw on: one that carries a text alternative and shows with it.

Imported only once matplotlib is known to be installed (the notebook extra). In Jupyter a :class:`DescribedFigure`
shows as an ``<img>`` whose ``alt`` is :attr:`DescribedFigure.alt_text` (``_repr_html_``, the PNG inline); the PNG
that matplotlib's inline backend adds is in the output too. Everywhere else it is a plain ``Figure``.
"""

from __future__ import annotations

import base64
import html
import io

from matplotlib.figure import Figure

from ..display.text import printable


class DescribedFigure(Figure):
    """A ``Figure`` with ``alt_text``: what the plot shows, in a sentence or two with its numbers."""

    alt_text: str = ""

    def _repr_html_(self) -> str:
        return figure_html(self)


def figure_html(fig: Figure) -> str:
    """``fig`` as an ``<img>``: the PNG inline, its ``alt_text`` as ``alt`` (made printable, escaped)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    alt = html.escape(printable(getattr(fig, "alt_text", "")), quote=True)
    return f'<img src="data:image/png;base64,{data}" alt="{alt}" style="max-width:100%;height:auto">'
