"""consolidate: duplicates merged into the best-sourced one, older facts superseded, contradicted ones
invalidated, scope by scope, over the embeddings already stored; a dry run writes nothing; the record
explains each change; a second run finds nothing left."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, maintenance
from mem0_hygiene.actions.consolidate import Candidate, neighbour_pairs, plan_steps
from mem0_hygiene.errors import ConfigError
from mem0_hygiene.render.json import to_json

DANA = {"user_id": "dana"}


def plant(m: Memory, clock: Any) -> dict[str, str]:
    """Months of memories: a preference said twice (one sourced), a version update, a retraction, an
    unrelated fact, and the same preference in another user's scope."""

    def add(text: str, scope: dict[str, str] = DANA, **kw: Any) -> str:
        clock.advance(days=10)
        return m.add(text, **scope, infer=False, **kw)["results"][0]["id"]

    ids = {
        "pnpm_unsourced": add("prefers pnpm for javascript packages!"),
        "pnpm": add("Prefers pnpm for JavaScript packages", source="chat 2026-05-02"),
        "pg15": add("Dana uses Postgres 15", source="chat 1"),
        "pg16": add("Dana uses Postgres 16", source="chat 2"),
        "compose": add("Deploys with Docker Compose", source="chat 3"),
        "no_compose": add("No longer deploys with Docker Compose", source="chat 4"),
        "haifa": add("Lives in Haifa", source="chat 5"),
        "omer_pnpm": add("Prefers pnpm for JavaScript packages", {"user_id": "omer"}),
    }
    return ids


@pytest.fixture
def deployment(make_deployment: Any, tmp_path: Path, clock: Any) -> Any:
    return make_deployment(tmp_path / "store", plant=lambda m: plant(m, clock))


def files_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_the_plan_merges_duplicates_supersedes_updates_and_invalidates_contradictions(deployment):
    ids = deployment.planted
    plan = maintenance.consolidate(deployment.config, dry_run=True)
    got = {(s.action, s.memory_id, s.into_id) for s in plan.steps}
    assert got == {
        ("merge", ids["pnpm_unsourced"], ids["pnpm"]),
        ("supersede", ids["pg15"], ids["pg16"]),
        ("invalidate", ids["compose"], ids["no_compose"]),
    }
    merge = next(s for s in plan.steps if s.action == "merge")
    assert merge.reason == f"consolidate: duplicate of {ids['pnpm']} (similarity 1.00, same text)"
    assert merge.into_source == "chat 2026-05-02" and merge.scope == DANA and merge.outcome is None
    update = next(s for s in plan.steps if s.action == "supersede")
    assert 0.5 < update.similarity < 1.0 and update.text == "Dana uses Postgres 15"
    assert plan.memories == 8 and plan.scopes == 2 and plan.embedder == "offline"
    assert plan.counts() == {"merge": 1, "supersede": 1, "invalidate": 1}


def test_a_dry_run_writes_nothing(deployment):
    before = files_digest(deployment.folder)
    maintenance.consolidate(deployment.config, dry_run=True)
    assert files_digest(deployment.folder) == before


def test_applying_hides_the_stale_memories_through_supersede_and_invalidate_and_deletes_nothing(deployment):
    ids = deployment.planted
    plan = maintenance.consolidate(deployment.config)
    assert [s.outcome for s in plan.steps] == ["applied"] * 3 and plan.plan_id
    m = Memory.from_config(deployment.config)
    try:
        states = {name: m.get(mid)["hygiene"]["state"] for name, mid in ids.items()}
        assert states == {
            "pnpm_unsourced": "superseded",
            "pnpm": "live",
            "pg15": "superseded",
            "pg16": "live",
            "compose": "invalidated",
            "no_compose": "live",
            "haifa": "live",
            "omer_pnpm": "live",
        }
        assert m.ledger.get(ids["pnpm_unsourced"]).superseded_by == ids["pnpm"]
        assert m.ledger.get(ids["compose"]).invalid_reason.startswith(
            f"consolidate: contradicted by {ids['no_compose']} (similarity "
        )
        served = sorted(r["memory"] for r in m.get_all(filters=DANA)["results"])
        assert served == [
            "Dana uses Postgres 16",
            "Lives in Haifa",
            "No longer deploys with Docker Compose",
            "Prefers pnpm for JavaScript packages",
        ]
        stored = m.get_all(filters=DANA, include_stale=True)["results"]
        assert len(stored) == 7  # nothing deleted: the hidden memories stay until prune's retention
    finally:
        m.close()


def test_history_explains_a_merge_with_its_reason_and_similarity(deployment):
    ids = deployment.planted
    maintenance.consolidate(deployment.config)
    story = maintenance.memory_story(deployment.config, ids["pnpm_unsourced"])
    superseded = [e for e in story.events if e.event == "superseded"]
    assert len(superseded) == 1
    assert f"consolidate: duplicate of {ids['pnpm']} (similarity 1.00" in superseded[0].detail
    invalidated = [
        e for e in maintenance.memory_story(deployment.config, ids["compose"]).events if e.event == "invalidated"
    ]
    assert f"consolidate: contradicted by {ids['no_compose']}" in invalidated[0].detail


def test_a_second_run_finds_nothing_left(deployment):
    maintenance.consolidate(deployment.config)
    again = maintenance.consolidate(deployment.config)
    assert again.steps == () and again.memories == 5


def test_the_scope_option_narrows_the_run_and_scopes_never_merge_across(deployment):
    ids = deployment.planted
    omer = maintenance.consolidate(deployment.config, scope={"user_id": "omer"}, dry_run=True)
    assert omer.steps == () and omer.memories == 1
    assert ids["omer_pnpm"] not in {s.memory_id for s in maintenance.consolidate(deployment.config).steps}
    with pytest.raises(ConfigError, match="unknown scope key 'user'"):
        maintenance.consolidate(deployment.config, scope={"user": "dana"})


def test_it_never_embeds_a_text_again(deployment, monkeypatch):
    from mem0_hygiene.offline import OfflineEmbedding

    def refuse(self: Any, text: Any, memory_action: Any = None) -> list[float]:
        raise AssertionError(f"embedded {text!r}")

    monkeypatch.setattr(OfflineEmbedding, "embed", refuse)
    plan = maintenance.consolidate(deployment.config)
    assert len(plan.steps) == 3


def test_a_merge_keeps_the_best_sourced_newest_confirmed_copy(make_deployment, tmp_path, clock):
    def plant_three(m: Memory) -> dict[str, str]:
        out = {}
        for name, source in (
            ("tool", "tool:web_fetch https://example.com"),
            ("user_old", "chat 1"),
            ("user_new", "chat 2"),
            ("unknown", None),
        ):
            clock.advance(days=1)
            out[name] = m.add("Standup is at 09:30", **DANA, infer=False, source=source)["results"][0]["id"]
        m.confirm(out["tool"])  # released from quarantine: live, but tool output ranks below a user's word
        clock.advance(days=1)
        m.confirm(out["user_old"])  # the newest confirmation among the user-sourced copies
        return out

    dep = make_deployment(tmp_path / "store", plant=plant_three)
    plan = maintenance.consolidate(dep.config)
    keep = dep.planted["user_old"]
    assert {s.memory_id for s in plan.steps} == {v for k, v in dep.planted.items() if k != "user_old"}
    assert {s.into_id for s in plan.steps} == {keep}  # every copy goes straight into the one kept


def test_in_process_with_the_apps_memory_a_dry_run_writes_nothing_and_the_run_applies(make_memory, clock):
    m = make_memory()
    old = m.add("Uses npm", **DANA, infer=False)["results"][0]["id"]
    clock.advance(days=1)
    other = m.add("Uses npm for JavaScript packages now, not yarn", **DANA, infer=False)["results"][0]["id"]
    clock.advance(days=1)
    same = m.add("uses npm.", **DANA, infer=False)["results"][0]["id"]
    dry = maintenance.consolidate(m, dry_run=True)
    assert [(s.action, s.memory_id, s.into_id) for s in dry.steps] == [("merge", old, same)]
    assert dry.steps[0].similarity <= 1.0
    assert m.get(old)["hygiene"]["state"] == "live"
    assert m.ledger.query("SELECT count(*) FROM consolidation") == [(0,)]  # the record holds nothing of it
    plan = maintenance.consolidate(m)
    assert [(s.memory_id, s.outcome) for s in plan.steps] == [(old, "applied")]
    assert [m.get(i)["hygiene"]["state"] for i in (old, other, same)] == ["superseded", "live", "live"]


def test_the_plan_renders_as_a_diff_and_as_json(deployment):
    from rich.console import Console

    ids = deployment.planted
    plan = maintenance.consolidate(deployment.config, dry_run=True)
    console = Console(width=300, record=True)
    console.print(plan)
    text = console.export_text()
    assert f"  - {ids['pg15']}  Dana uses Postgres 15" in text
    assert f"  + {ids['pg16']}  Dana uses Postgres 16" in text
    assert "dry run: nothing changed" in text and "user_id=dana" in text
    assert "<div" in plan._repr_html_()
    data = plan.to_dict()
    assert data["counts"] == {"merge": 1, "supersede": 1, "invalidate": 1}
    assert {s["action"] for s in data["steps"]} == {"merge", "supersede", "invalidate"}
    assert '"dry_run": true' in to_json(data)


def test_neighbour_pairs_are_each_memorys_nearest_others():
    import numpy as np

    vectors = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [0.1, 0.99], [-1.0, 0.0]], dtype=np.float32)
    pairs = neighbour_pairs(vectors, 1)
    assert set(pairs) == {(0, 1), (2, 3), (2, 4)}  # the last one's nearest is the orthogonal one, not row 0 or 1
    assert pairs[(0, 1)] == pytest.approx(0.995, abs=1e-3)
    assert neighbour_pairs(vectors[:1], 3) == {}
    assert len(neighbour_pairs(vectors, 10)) == 10  # k above the group's size: every pair once


def test_a_chain_of_near_duplicates_is_merged_straight_into_the_best_sourced_copy():
    from mem0_hygiene.memory.decision import EMBEDDER_DEFAULTS, OFFLINE_FAMILY
    from mem0_hygiene.stores.ledger import LedgerRow

    def vec(angle: float) -> list[float]:
        import math

        return [math.cos(math.radians(angle)), math.sin(math.radians(angle))]

    def cand(mid: str, text: str, angle: float, source: str | None, confirmed: str) -> Candidate:
        row = LedgerRow(
            mid, user_id="dana", source=source, source_kind="user", created_at="2026-01-01", confirmed_at=confirmed
        )
        return Candidate(mid, text, row, dict(DANA), vec(angle))

    # similarity c~b 0.99 > b~a 0.95 > c~a 0.91: by strength alone c would go into b and b into a
    a = cand("a", "Prefers pnpm", 0.0, "chat 1", "2026-01-01")
    b = cand("b", "Prefers pnpm a lot", 18.2, None, "2026-03-01")
    c = cand("c", "Really prefers pnpm", 24.5, None, "2026-02-01")
    steps, scopes, pairs, unsure = plan_steps([a, b, c], EMBEDDER_DEFAULTS[OFFLINE_FAMILY], 2)
    assert unsure == []  # the threshold rules give no probability: nothing is unsure
    assert (scopes, pairs) == (1, 3)
    assert sorted((s.memory_id, s.into_id) for s in steps) == [("b", "a"), ("c", "a")]
    assert all(s.action == "merge" and s.decision == "similarity" for s in steps)


def test_repeats_of_one_text_never_crowd_an_update_out_of_the_neighbours():
    from mem0_hygiene.memory.decision import EMBEDDER_DEFAULTS, OFFLINE_FAMILY
    from mem0_hygiene.stores.ledger import LedgerRow

    def cand(mid: str, text: str, vector: list[float], created: str) -> Candidate:
        row = LedgerRow(mid, user_id="dana", source="chat", source_kind="user", created_at=created)
        return Candidate(mid, text, row, dict(DANA), vector)

    copies = [cand(f"c{i}", "Dana uses Postgres 15", [1.0, 0.0], f"2026-01-0{i + 1}") for i in range(6)]
    newer = cand("new", "Dana uses Postgres 16", [0.9, 0.43], "2026-02-01")
    steps, _scopes, _pairs, _unsure = plan_steps([*copies, newer], EMBEDDER_DEFAULTS[OFFLINE_FAMILY], 2)
    kept = max(copies, key=lambda c: c.keeper_rank).memory_id  # the newest-confirmed copy
    assert sorted((s.action, s.memory_id, s.into_id) for s in steps) == sorted(
        [("merge", c.memory_id, kept) for c in copies if c.memory_id != kept] + [("supersede", kept, "new")]
    )


def test_a_pair_the_model_is_unsure_of_is_left_alone_and_listed_for_a_person():
    import math

    from rich.console import Console

    from mem0_hygiene.actions.consolidate_plan import ConsolidationPlan
    from mem0_hygiene.memory.decision import CONFIDENT, EMBEDDER_DEFAULTS, MINILM_FAMILY
    from mem0_hygiene.stores.ledger import LedgerRow

    def cand(mid: str, text: str, vector: list[float], created: str) -> Candidate:
        row = LedgerRow(mid, user_id="dana", source="chat", source_kind="user", created_at=created)
        return Candidate(mid, text, row, dict(DANA), vector)

    def at(sim: float, first: int) -> list[float]:  # a unit vector at this cosine from axis `first`, in its plane
        v = [0.0] * 4
        v[first], v[first + 1] = sim, math.sqrt(1 - sim * sim)
        return v

    # two pairs in planes orthogonal to each other: a retraction (sure), and an opposite said of another door
    memories = [
        cand("leeds", "Lives in Leeds", at(1.0, 0), "2026-01-01"),
        cand("front", "The front door lock is broken", at(1.0, 2), "2026-01-02"),
        cand("gone", "No longer lives in Leeds", at(0.89, 0), "2026-02-01"),
        cand("back", "The back door lock works fine", at(0.69, 2), "2026-02-02"),
    ]
    steps, _scopes, _pairs, unsure = plan_steps(memories, EMBEDDER_DEFAULTS[MINILM_FAMILY], 3)
    assert [(s.action, s.memory_id, s.into_id) for s in steps] == [("invalidate", "leeds", "gone")]
    assert [(u.label, u.memory_id, u.into_id) for u in unsure] == [("contradiction", "front", "back")]
    assert unsure[0].confidence < CONFIDENT and unsure[0].similarity == pytest.approx(0.69, abs=1e-6)
    plan = ConsolidationPlan(steps=tuple(steps), dry_run=True, at="2026-03-01T00:00:00+00:00", unsure=tuple(unsure))
    console = Console(width=300, record=True)
    console.print(plan)
    text = console.export_text()
    assert "1 unsure pair(s) left alone" in text and "unsure, left alone (1)" in text
    assert "front  The front door lock is broken" in text and "back  The back door lock works fine" in text
    assert plan.to_dict()["unsure"][0]["label"] == "contradiction"


def test_the_plan_never_merges_changed_values_nor_other_subjects_and_lists_the_possible_conflicts():
    from mem0_hygiene.memory.decision import EMBEDDER_DEFAULTS, OFFLINE_FAMILY
    from mem0_hygiene.stores.ledger import LedgerRow

    def cand(mid: str, text: str, vector: list[float], created: str) -> Candidate:
        row = LedgerRow(mid, user_id="dana", source="chat", source_kind="user", created_at=created)
        return Candidate(mid, text, row, dict(DANA), vector)

    # the same vector each: a likeness alone would merge every pair
    memories = [
        cand("daughter", "My daughter is allergic to peanuts", [1.0, 0.0, 0.0], "2026-01-01"),
        cand("son", "My son is allergic to peanuts", [1.0, 0.0, 0.0], "2026-01-02"),
        cand("nine", "Standup is at 07:30", [0.0, 1.0, 0.0], "2026-01-03"),
        cand("again", "Standup is at 7:30 am", [0.0, 1.0, 0.0], "2026-01-04"),
        cand("rent", "Rent is 1,450 EUR", [0.0, 0.0, 1.0], "2026-01-05"),
        cand("more", "Rent is €1500", [0.0, 0.0, 1.0], "2026-01-06"),
    ]
    steps, _scopes, _pairs, unsure = plan_steps(memories, EMBEDDER_DEFAULTS[OFFLINE_FAMILY], 2)
    assert sorted((s.action, s.memory_id, s.into_id) for s in steps) == [
        ("merge", "nine", "again"),
        ("supersede", "rent", "more"),
    ]  # a reformatted time merges, a new amount updates
    assert [(u.memory_id, u.into_id) for u in unsure] == [("daughter", "son")]
    assert unsure[0].decision.startswith("possible conflict") and "daughter / son" in unsure[0].decision.replace(
        "son / daughter", "daughter / son"
    )
