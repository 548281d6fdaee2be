"""Plots of an :class:`~mem0_hygiene.auditing.inspection.Inspection`, drawn with matplotlib.

Each function takes the inspection (and optionally an ``ax`` to draw into) and returns the
``matplotlib.figure.Figure``. Figures are made with ``Figure()`` (a :class:`~.plot_figure.DescribedFigure`),
not ``pyplot``: nothing is registered with pyplot's global figure list, so a library call never leaks figures
or shows one twice in Jupyter, where the returned figure shows once, as an image. ``fig.savefig(...)`` works
with no backend set up.

States have one colour each, in every plot (:data:`STATE_COLOURS`).

Every figure a plot makes carries a text alternative: one or two sentences saying what the plot shows, with its
numbers (:func:`alt_text`). Jupyter shows the figure as an ``<img>`` with that ``alt`` (``_repr_html_``; the PNG
is in the output too), so a screen reader, a text-only viewer or a broken image still says what is in it.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from ..errors import require
from ..stores.states import STATE_ORDER, UNTRACKED
from .terminal import printable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..auditing.inspection import Inspection

STATE_COLOURS = {
    "live": "#2e7d32",
    "expired": "#ef6c00",
    "quarantined": "#6a1b9a",
    "invalidated": "#757575",
    "superseded": "#1565c0",
    "deleted": "#bdbdbd",
    UNTRACKED: "#c62828",
}
"""One colour per memory state."""

EVENT_COLOURS = {"ADD": "#2e7d32", "UPDATE": "#1565c0", "DELETE": "#c62828"}
"""history.db event colours; other events are grey."""

LABEL_CHARS = 48
"""Longest memory text shown as a label before it is shortened."""


def _jupyter_display() -> None:
    """In a Jupyter kernel, load the inline backend's IPython hook so a returned Figure shows as an image.

    pyplot loads it with its first figure, and these plots never touch pyplot; without the hook IPython
    shows a bare Figure as ``<Figure size ...>``. The hook does nothing unless the inline backend (the
    kernel's default) is the one selected.
    """
    if "ipykernel" in sys.modules:
        with contextlib.suppress(ImportError):
            import matplotlib_inline.backend_inline  # noqa: F401


def alt_text(fig: Figure) -> str:
    """The text alternative of a figure one of these plots drew ("" for any other figure)."""
    return str(getattr(fig, "alt_text", "") or "")


def _described(fig: Figure, text: str) -> Figure:
    """``fig`` with its text alternative (also on a caller's own figure, drawn into through ``ax=``)."""
    fig.alt_text = text  # type: ignore[attr-defined]
    return fig


def _axes(ax: Axes | None, size: tuple[float, float] = (9.0, 4.5)) -> tuple[Figure, Axes]:
    if ax is not None:
        fig = ax.get_figure()
        return fig, ax  # type: ignore[return-value]
    require("matplotlib", "plotting")
    from .plot_figure import DescribedFigure

    _jupyter_display()

    fig = DescribedFigure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def _empty(ax: Axes, title: str, message: str) -> None:
    ax.set_title(title, loc="left")
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#555555")
    ax.set_xticks([])
    ax.set_yticks([])


def _naive(values: Any) -> Any:
    """tz-aware UTC pandas times as naive UTC numpy datetimes (what matplotlib's date axis takes)."""
    return values.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()


def _date_axis(ax: Axes, axis: str = "x") -> None:
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    locator = AutoDateLocator()
    target.set_major_locator(locator)
    target.set_major_formatter(ConciseDateFormatter(locator))


def confirmation_age(insp: Inspection, ax: Axes | None = None) -> Figure:
    """Live memories by days since their last confirmation; the review line and who is past it."""
    np = require("numpy", "plotting")
    fig, ax = _axes(ax)
    title = "Days since each live memory was last confirmed"
    m = insp.memories
    live = m[(m["state"] == "live") & m["age_days"].notna()]
    line = insp.review_older_than.total_seconds() / 86400.0
    if live.empty:
        _empty(ax, title, "no live memories")
        return _described(fig, f"{title}: no live memories.")
    ages = live["age_days"].astype(float)
    drifting = live["expires_at"].isna()
    top = max(float(ages.max()), line * 1.15)
    width = 7.0 if top > 35 else 1.0
    bins = np.arange(0.0, top + width, width)
    groups = [
        (ages[drifting & (ages <= line)], "confirmed within the review line", STATE_COLOURS["live"]),
        (ages[drifting & (ages > line)], "due for review", STATE_COLOURS["expired"]),
        (ages[~drifting], "has an expiry (not reviewed)", "#90a4ae"),
    ]
    shown = [(g.to_numpy(), label, colour) for g, label, colour in groups if len(g)]
    ax.hist(
        [g for g, _, _ in shown],
        bins=bins,
        stacked=True,
        color=[c for _, _, c in shown],
        label=[f"{label} ({len(g)})" for g, label, _ in shown],
        edgecolor="white",
        linewidth=0.5,
    )
    ax.axvline(line, color="#c62828", linestyle="--", linewidth=1.5)
    ax.text(line, 0.98, f"  review line: {line:g} days", color="#c62828", va="top", transform=ax.get_xaxis_transform())
    ax.set_title(title, loc="left")
    ax.set_xlabel(f"days since last confirmation (bins of {width:g} day{'s' if width != 1 else ''})")
    ax.set_ylabel("memories")
    ax.set_xlim(0, top + width)
    ax.legend(loc="upper left", frameon=False)
    ax.yaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
    parts = ", ".join(f"{len(g)} {label}" for g, label, _ in shown)
    return _described(
        fig,
        f"Histogram of the {len(live)} live memories by days since they were last confirmed: "
        f"{parts}. The review line is at {line:g} days; the oldest confirmation is "
        f"{float(ages.max()):.0f} days old.",
    )


def expiries(insp: Inspection, limit: int = 25, ax: Axes | None = None) -> Figure:
    """Memories with an expiry on a time line: upcoming (soonest first) and expired but not pruned."""
    pd = require("pandas", "plotting")
    m = insp.memories
    timed = m[m["expires_at"].notna() & m["state"].isin(["live", "expired", "quarantined"])]
    timed = timed.sort_values("expires_at")
    now = pd.Timestamp(insp.now)
    upcoming, past = timed[timed["expires_at"] > now], timed[timed["expires_at"] <= now]
    picked = pd.concat([past.tail(max(limit - len(upcoming), limit // 3)), upcoming]).head(limit)
    fig, ax = _axes(ax, (9.0, max(2.5, 0.9 + 0.32 * len(picked))))
    title = "Expiries: expired but not pruned, and coming up"
    if picked.empty:
        _empty(ax, title, "no memories with an expiry")
        return _described(fig, f"{title}: no memories with an expiry.")
    labels = [
        printable(f"{text or mid} ({scope})" if scope else (text or mid), LABEL_CHARS)
        for mid, text, scope in zip(picked["id"], picked["text"], picked["user_id"].fillna(""))
    ]
    y = list(range(len(picked)))[::-1]
    when = _naive(picked["expires_at"])
    expired = (picked["expires_at"] <= now).to_numpy()
    colours = [STATE_COLOURS["expired"] if e else STATE_COLOURS["live"] for e in expired]
    created = _naive(picked["created_at"].fillna(picked["expires_at"]))
    ax.hlines(y, created, when, colors=colours, alpha=0.35, linewidth=3)
    ax.scatter(when, y, c=colours, s=40, zorder=3)
    ax.axvline(_naive(pd.Series([now]))[0], color="#212121", linestyle="--", linewidth=1)
    ax.text(_naive(pd.Series([now]))[0], 1.0, " now", va="bottom", transform=ax.get_xaxis_transform())
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, len(picked) - 0.3)
    ax.margins(x=0.04)
    _date_axis(ax)
    more = len(timed) - len(picked)
    ax.set_title(title + (f" ({len(picked)} of {len(timed)})" if more > 0 else ""), loc="left")
    ax.set_xlabel("created -> expires (UTC)")
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [], [], marker="o", linestyle="", color=STATE_COLOURS["expired"], label=f"expired, not pruned ({len(past)})"
        ),
        Line2D([], [], marker="o", linestyle="", color=STATE_COLOURS["live"], label=f"expires later ({len(upcoming)})"),
    ]
    ax.legend(handles=handles, loc="lower right", frameon=True, fontsize="small")
    which = f"{len(picked)} of the {len(timed)}" if more > 0 else f"the {len(timed)}"
    text = (
        f"Time line of {which} memories with an expiry, each from its creation to its expiry: "
        f"{len(past)} expired but not pruned, {len(upcoming)} expiring later"
    )
    if len(upcoming):
        text += f" (the next on {upcoming['expires_at'].iloc[0]:%Y-%m-%d})"
    return _described(fig, text + ".")


def events_per_day(insp: Inspection, ax: Axes | None = None) -> Figure:
    """history.db's events per day, stacked by event (ADD, UPDATE, DELETE, ...)."""
    pd = require("pandas", "plotting")
    fig, ax = _axes(ax)
    title = "history.db events per day"
    h = insp.history
    h = h[h["at"].notna()] if len(h) else h
    if not len(h):
        message = "no history.db events" + (" (history.db not read)" if "history.db" in insp.missing else "")
        _empty(ax, title, message)
        return _described(fig, f"{title}: {message}.")
    days = h["at"].dt.tz_convert("UTC").dt.floor("D").dt.tz_localize(None)
    table = pd.crosstab(days, h["event"].fillna("?"))
    table = table.reindex(pd.date_range(table.index.min(), table.index.max(), freq="D"), fill_value=0)
    order = [e for e in EVENT_COLOURS if e in table.columns] + sorted(
        c for c in table.columns if c not in EVENT_COLOURS
    )
    bottom = None
    for event in order:
        values = table[event].to_numpy()
        ax.bar(
            table.index.to_numpy(),
            values,
            width=0.9,
            bottom=bottom,
            align="edge",
            color=EVENT_COLOURS.get(event, "#9e9e9e"),
            label=f"{event} ({int(values.sum())})",
        )
        bottom = values if bottom is None else bottom + values
    ax.set_title(title, loc="left")
    ax.set_ylabel("events")
    ax.set_xlabel("day (UTC)")
    _date_axis(ax)
    ax.yaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
    ax.legend(loc="upper left", frameon=False)
    totals = table.sum(axis=1)
    per_event = ", ".join(f"{event} {int(table[event].sum())}" for event in order)
    return _described(
        fig,
        f"Bar chart of history.db's {int(totals.sum())} events per day, stacked by event, from "
        f"{table.index[0]:%Y-%m-%d} to {table.index[-1]:%Y-%m-%d}: {per_event}. The busiest day, "
        f"{totals.idxmax():%Y-%m-%d}, had {int(totals.max())}.",
    )


def live_vs_stale(insp: Inspection, freq: str = "D", ax: Axes | None = None) -> Figure:
    """Memories per state over time (from the ledger's timestamps), stacked: live at the bottom."""
    fig, ax = _axes(ax)
    title = "Live and stale memories over time (from the ledger)"
    series = insp.states_over_time(freq)
    if series.empty or not series.to_numpy().any():
        message = "no ledger rows" + (" (ledger not read)" if "ledger" in insp.missing else "")
        _empty(ax, title, message)
        return _described(fig, f"{title}: {message}.")
    states = [s for s in series.columns if series[s].any()]
    x = series.index.tz_convert("UTC").tz_localize(None).to_numpy()
    last = series.iloc[-1]
    ax.stackplot(
        x,
        *[series[s].to_numpy() for s in states],
        colors=[STATE_COLOURS[s] for s in states],
        labels=[f"{s} (now {int(last[s])})" for s in states],
        alpha=0.9,
        step="post",
    )
    ax.set_title(title, loc="left")
    ax.set_ylabel("memories")
    ax.set_xlabel("UTC")
    ax.set_xlim(x[0], x[-1])
    _date_axis(ax)
    ax.legend(loc="upper left", frameon=True, fontsize="small")
    now = ", ".join(f"{s} {int(last[s])}" for s in states)
    return _described(
        fig,
        f"Stacked area chart of memories per state over time, from the ledger's timestamps, "
        f"{series.index[0]:%Y-%m-%d} to {series.index[-1]:%Y-%m-%d}. At the end: {now}.",
    )


def by_source_kind(insp: Inspection, include_deleted: bool = False, ax: Axes | None = None) -> Figure:
    """Memories per source kind, stacked by state (memories without a ledger row: "no ledger row")."""
    pd = require("pandas", "plotting")
    fig, ax = _axes(ax, (9.0, 3.8))
    title = "Memories by source kind and state"
    m = insp.memories
    if not include_deleted:
        m = m[m["state"] != "deleted"]
    if m.empty:
        _empty(ax, title, "no memories")
        return _described(fig, f"{title}: no memories.")
    kinds = m["source_kind"].fillna("no ledger row")
    table = pd.crosstab(kinds, m["state"])
    table = table.loc[table.sum(axis=1).sort_values().index]
    states = [s for s in (*STATE_ORDER, UNTRACKED) if s in table.columns]
    left = None
    y = list(range(len(table)))
    for state in states:
        values = table[state].to_numpy()
        ax.barh(y, values, left=left, color=STATE_COLOURS[state], label=state, height=0.7)
        left = values if left is None else left + values
    for yi, total in zip(y, table.sum(axis=1)):
        ax.text(total, yi, f" {int(total)}", va="center", fontsize="small")
    ax.set_yticks(y, [str(k) for k in table.index])
    ax.set_xlim(0, float(table.sum(axis=1).max()) * 1.08)
    ax.set_xlabel("memories")
    ax.set_title(title + ("" if include_deleted else " (deleted left out)"), loc="left")
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
    ax.legend(loc="lower right", frameon=True, fontsize="small")
    kinds = "; ".join(
        f"{kind} {int(row.sum())} (" + ", ".join(f"{s} {int(row[s])}" for s in states if row[s]) + ")"
        for kind, row in table.iloc[::-1].iterrows()
    )
    return _described(
        fig,
        f"Horizontal bar chart of memories per source kind, stacked by state"
        f"{'' if include_deleted else ', deleted left out'}: {kinds}.",
    )
