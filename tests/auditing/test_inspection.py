"""inspect(): DataFrames and plots over a real store, read-only, also while another process holds it."""

from __future__ import annotations

import hashlib
import io
import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pd = pytest.importorskip("pandas", reason="the notebook extra is not installed: pip install -e '.[test,notebook]'")
matplotlib = pytest.importorskip("matplotlib", reason="the notebook extra is not installed")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from mem0_hygiene import HygieneError, Memory, inspect, offline_config  # noqa: E402
from mem0_hygiene.auditing.inspection import CHAIN_COLUMNS, MEMORY_COLUMNS, Inspection, InspectionError  # noqa: E402
from mem0_hygiene.errors import MissingExtra  # noqa: E402

DANA = {"user_id": "dana"}
PLOTS = ("plot_confirmation_age", "plot_expiries", "plot_events_per_day", "plot_live_vs_stale", "plot_by_source_kind")


@pytest.fixture
def store(
    make_deployment: Any, tmp_path: Path, clock: Any, plain_mem0: Any, close_plain: Any
) -> tuple[dict[str, Any], dict[str, str]]:
    """A closed store with one memory in every state, a supersede link and a plain-mem0 memory."""
    plain = plain_mem0(tmp_path)
    try:
        added = plain.add(
            "Omar prefers tabs over spaces", user_id="omar", infer=False, metadata={"created_at": clock().isoformat()}
        )
    finally:
        close_plain(plain)
    clock.advance(days=1)

    def plant(m: Memory) -> dict[str, str]:
        def add(text: str, **kw: Any) -> str:
            kw.setdefault("source", "chat 2026-08-02")
            return str(m.add(text, **DANA, infer=False, **kw)["results"][0]["id"])

        ids = {"untracked": str(added["results"][0]["id"])}
        ids["live"] = add("Dana works on the billing service")
        ids["expired"] = add("Dana is travelling this week", ttl="7d")
        ids["old"] = add("Dana's team uses npm")
        ids["invalidated"] = add("Dana lives in Haifa")
        ids["quarantined"] = add("Always deploy on Fridays", source="tool:web_fetch https://example.com/tips")
        ids["deleted"] = add("Dana's home address is 14 Herzl Street")
        clock.advance(days=2)
        ids["new"] = m.supersede(ids["old"], "Dana's team uses pnpm", source="chat 2026-08-04")
        m.invalidate(ids["invalidated"], reason="moved to Tel Aviv")
        m.delete(ids["deleted"])
        m.search("billing", filters=DANA)
        m.search("billing service", filters=DANA)
        clock.advance(days=10)
        return ids

    d = make_deployment(tmp_path, plant=plant)
    return d.config, d.planted


def by_id(insp: Inspection) -> Any:
    return insp.memories.set_index("id")


# -- frames on a real store ------------------------------------------------------------------------
def test_memories_frame_has_every_memory_with_its_state_and_ledger_facts(store, clock):
    cfg, ids = store
    insp = inspect(cfg)
    assert tuple(insp.memories.columns) == MEMORY_COLUMNS
    assert insp.missing == {} and insp.note == ""
    assert insp.now == clock()
    m = by_id(insp)
    assert sorted(m.index) == sorted(ids.values())
    assert {name: m.loc[mid, "state"] for name, mid in ids.items()} == {
        "untracked": "untracked",
        "live": "live",
        "expired": "expired",
        "old": "superseded",
        "invalidated": "invalidated",
        "quarantined": "quarantined",
        "deleted": "deleted",
        "new": "live",
    }
    assert insp.counts() == {
        "live": 2,
        "expired": 1,
        "quarantined": 1,
        "invalidated": 1,
        "superseded": 1,
        "deleted": 1,
        "untracked": 1,
    }

    live = m.loc[ids["live"]]
    assert live["text"] == "Dana works on the billing service" and live["user_id"] == "dana"
    assert live["source"] == "chat 2026-08-02" and live["source_kind"] == "user"
    assert live["age_days"] == 12.0  # confirmed at creation, 12 days before `now`
    assert live["use_count"] == 2 and live["last_used_at"] == pd.Timestamp(clock() - timedelta(days=10))
    assert live["in_ledger"] and live["in_vector_store"] and live["text_from"] == "vector_store"
    assert str(m["created_at"].dtype) == "datetime64[ns, UTC]"

    expired = m.loc[ids["expired"]]
    assert expired["expires_at"] - expired["created_at"] == pd.Timedelta(days=7)
    assert m.loc[ids["quarantined"], "source_kind"] == "tool" and m.loc[ids["quarantined"], "quarantined"]
    assert m.loc[ids["invalidated"], "invalid_reason"] == "moved to Tel Aviv"
    assert m.loc[ids["old"], "superseded_by"] == ids["new"]

    deleted = m.loc[ids["deleted"]]  # gone from the vector store; history.db still has its text
    assert not deleted["in_vector_store"]  # False, not <NA>: the vector store was read
    assert deleted["text"] == "Dana's home address is 14 Herzl Street" and deleted["text_from"] == "history"

    untracked = m.loc[ids["untracked"]]
    assert not untracked["in_ledger"] and pd.isna(untracked["source_kind"]) and untracked["user_id"] == "omar"
    assert untracked["age_days"] == 13.0


def test_history_frame_is_history_db_with_event_times(store):
    cfg, _ = store
    insp = inspect(cfg)
    with sqlite3.connect(cfg["history_db_path"]) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM history").fetchone()[0]
    h = insp.history
    assert len(h) == rows
    assert {"memory_id", "event", "old_memory", "new_memory", "created_at", "updated_at", "at"} <= set(h.columns)
    assert insp.events() == {"ADD": 8, "DELETE": 1}
    assert str(h["at"].dtype) == "datetime64[ns, UTC]" and h["at"].notna().all()


def test_chains_are_an_edge_list_old_to_new_with_time_and_broken_links(store, clock):
    cfg, ids = store
    chains = inspect(cfg).chains
    assert tuple(chains.columns) == CHAIN_COLUMNS
    assert chains[["old_id", "new_id"]].values.tolist() == [[ids["old"], ids["new"]]]
    edge = chains.iloc[0]
    assert edge["at"] == pd.Timestamp(clock() - timedelta(days=10))
    assert (edge["old_text"], edge["new_text"]) == ("Dana's team uses npm", "Dana's team uses pnpm")
    assert (edge["old_state"], edge["new_state"], edge["broken"]) == ("superseded", "live", False)

    ledger = Path(cfg["history_db_path"]).with_name("hygiene.db")
    conn = sqlite3.connect(ledger)  # a script deletes the newer fact's row with foreign keys off
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM memories WHERE memory_id = ?", (ids["new"],))
    conn.commit()
    conn.close()
    broken = inspect(cfg).chains.iloc[0]
    assert bool(broken["broken"]) and pd.isna(broken["new_state"])


def test_states_over_time_replays_the_ledger_timestamps(store, clock):
    cfg, _ = store
    series = inspect(cfg).states_over_time()
    assert list(series.columns) == ["live", "expired", "quarantined", "invalidated", "superseded"]
    assert series.index[-1] == pd.Timestamp(clock())
    assert series.iloc[-1].to_dict() == {"live": 2, "expired": 1, "quarantined": 1, "invalidated": 1, "superseded": 1}
    first_day = series.iloc[0].to_dict()  # end of 2026-08-02 00:00: nothing in the ledger yet
    assert sum(first_day.values()) == 0
    day_two = series.loc[pd.Timestamp("2026-08-03", tz="UTC")].to_dict()  # all added, none changed yet
    assert day_two == {"live": 5, "expired": 0, "quarantined": 1, "invalidated": 0, "superseded": 0}


def test_review_due_is_live_non_expiring_memories_past_the_line(tmp_path, clock):
    cfg = offline_config(tmp_path, hygiene={"clock": clock, "review_older_than": "30d"})
    m = Memory.from_config(cfg)
    try:
        old = m.add("Dana uses Neovim", **DANA, infer=False)["results"][0]["id"]
        m.add("Dana is on call", **DANA, infer=False, ttl="365d")
        clock.advance(days=40)
        m.add("Dana prefers short answers", **DANA, infer=False)
    finally:
        m.close()
    insp = inspect(cfg)
    assert insp.review_older_than == timedelta(days=30)
    assert insp.review_due()["id"].tolist() == [old]
    assert "1 live memories last confirmed more than 30 days ago" in repr(insp)


# -- display ---------------------------------------------------------------------------------------
def test_summary_as_text_html_and_rich(store):
    cfg, _ = store
    insp = inspect(cfg)
    text = repr(insp)
    assert "Memories" in text and "8: live 2, expired 1" in text and "Supersede links  1" in text
    assert "Note" not in text
    page = insp._repr_html_()
    assert page.startswith('<div class="mem0-hygiene-inspection">') and "8: live 2, expired 1" in page
    from rich.console import Console

    console = Console(file=io.StringIO(), width=160)
    console.print(insp)
    assert "mem0-hygiene inspection" in console.file.getvalue()  # type: ignore[attr-defined]


# -- plots -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PLOTS)
def test_every_plot_returns_a_figure_that_renders(store, name):
    cfg, _ = store
    fig = getattr(inspect(cfg), name)()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") and (ax.patches or ax.collections or ax.lines)
    png = io.BytesIO()
    fig.savefig(png, format="png")
    assert png.getvalue().startswith(b"\x89PNG")


def test_plots_draw_into_a_given_axes(store):
    cfg, _ = store
    fig = Figure()
    axes = fig.subplots(1, 2)
    insp = inspect(cfg)
    assert insp.plot_expiries(ax=axes[0]) is fig
    assert insp.plot_by_source_kind(ax=axes[1]) is fig
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels == ["Dana is travelling this week (dana)"]


def test_plots_say_when_there_is_nothing_to_show(tmp_path, clock):
    cfg = offline_config(tmp_path, hygiene={"clock": clock})
    Memory.from_config(cfg).close()  # an empty store: ledger and history.db with no rows
    insp = inspect(cfg)
    assert insp.memories.empty and insp.chains.empty and insp.history.empty
    for name in PLOTS:
        texts = [t.get_text() for t in getattr(insp, name)().axes[0].texts]
        assert any(t.startswith("no ") for t in texts), name


# -- read-only, locked, in-process ------------------------------------------------------------------
def _fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of every store file (SQLite's WAL side files and Qdrant's lock aside)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.endswith(("-wal", "-shm", ".lock")):
            out[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


def test_inspect_never_writes_to_a_store(store, tmp_path):
    cfg, _ = store
    before = _fingerprint(tmp_path)
    insp = inspect(cfg)
    for name in PLOTS:
        getattr(insp, name)()
    assert _fingerprint(tmp_path) == before


@pytest.fixture
def holder(store: tuple[dict[str, Any], dict[str, str]], hold_qdrant_lock: Any) -> Any:
    """Another process with the vector store open, as the running app would have it."""
    return hold_qdrant_lock(store[0]["vector_store"]["config"]["path"])


def test_locked_store_still_yields_ledger_and_history_with_a_note(store, holder):
    cfg, ids = store
    insp = inspect(cfg)
    assert list(insp.missing) == ["vector store"]
    assert insp.note.startswith("vector store not read: cannot audit the local Qdrant store")
    assert "another Qdrant client holds its lock" in insp.note and "texts come from history.db" in insp.note
    m = by_id(insp)
    assert sorted(m.index) == sorted(ids.values())  # the plain-mem0 memory is known to history.db
    assert m.loc[ids["live"], "state"] == "live" and m.loc[ids["old"], "state"] == "superseded"
    assert m.loc[ids["untracked"], "state"] == "untracked"
    assert set(m["text_from"]) == {"history"} and m["in_vector_store"].isna().all()
    assert m.loc[ids["live"], "text"] == "Dana works on the billing service"
    assert len(insp.history) == 9 and len(insp.chains) == 1
    assert "Note" in repr(insp) and "another Qdrant client holds its lock" in repr(insp)
    assert "another Qdrant client holds its lock" in insp._repr_html_()
    for name in PLOTS:
        assert isinstance(getattr(insp, name)(), Figure)


def test_a_live_memory_is_read_in_process(store):
    cfg, ids = store
    m = Memory.from_config(cfg)
    try:
        insp = inspect(m)
    finally:
        m.close()
    assert insp.missing == {} and insp.target == "in-process Memory"
    assert by_id(insp).loc[ids["live"], "text_from"] == "vector_store"


def test_nothing_to_read_is_an_error(tmp_path):
    with pytest.raises(InspectionError, match="found no mem0 store to inspect") as info:
        inspect(offline_config(tmp_path / "nowhere"))
    assert isinstance(info.value, HygieneError)
    assert not (tmp_path / "nowhere").exists()


# -- without the notebook extra --------------------------------------------------------------------
def test_missing_pandas_names_the_extra(store, monkeypatch):
    cfg, _ = store
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    with pytest.raises(MissingExtra) as info:
        inspect(cfg)
    err = info.value
    assert isinstance(err, HygieneError) and isinstance(err, ImportError)
    assert str(err) == (
        "inspect() needs pandas, which is not installed; install the notebook extra: "
        'pip install "mem0-hygiene[notebook]"'
    )
    assert (err.package, err.extra, err.name) == ("pandas", "notebook", "pandas")


def test_missing_matplotlib_names_the_extra(store, monkeypatch):
    insp = inspect(store[0])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtra, match=r'plotting needs matplotlib.*pip install "mem0-hygiene\[notebook\]"'):
        insp.plot_confirmation_age()


def test_importing_the_package_does_not_import_pandas_or_matplotlib():
    code = "import sys, mem0_hygiene; print(sorted({'pandas', 'matplotlib'} & set(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MEM0_TELEMETRY": "False"},
    )
    assert out.stdout.strip() == "[]"
