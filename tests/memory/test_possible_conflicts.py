"""A pair the write-time decision's guards keep apart is a possible conflict until settled: `review` lists it with
both texts and the reason (in-process, and from the config while the app is closed), the digest marks the new
memory, and a confirmation or an invalidation settles it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from mem0_hygiene import Memory, maintenance

SCOPE = {"user_id": "dana"}
OLD, NEW = "My daughter is allergic to peanuts", "My son is allergic to peanuts"


def plant(m: Memory) -> tuple[str, str]:
    old = m.add(OLD, **SCOPE, infer=False)["results"][0]["id"]
    new = m.add(NEW, **SCOPE, infer=False)["results"][0]["id"]
    return old, new


def rendered(result: Any) -> str:
    console = Console(width=400, record=True)
    console.print(result)
    return console.export_text()


def test_review_lists_the_possible_conflict_with_both_texts_and_the_reason(
    make_deployment: Any, tmp_path: Path, clock: Any
) -> None:
    dep = make_deployment(tmp_path / "app", plant=plant, hygiene={"clock": clock, "write_decision": True})
    old, new = dep.planted
    queue = maintenance.review_queue(dep.config)
    [conflict] = queue.conflicts
    assert (conflict.memory_id, conflict.text, conflict.compared_id, conflict.compared_text) == (new, NEW, old, OLD)
    assert "daughter" in conflict.reason
    assert queue.to_dict()["conflicts"][0]["compared_text"] == OLD
    text = rendered(queue)
    assert "1 possible conflict(s)" in text and "may conflict with" in text
    assert maintenance.review_queue(dep.config, filters={"user_id": "omar"}).conflicts == ()


def test_the_digest_marks_the_new_memory_that_may_conflict(make_deployment: Any, tmp_path: Path, clock: Any) -> None:
    dep = make_deployment(tmp_path / "app", plant=plant, hygiene={"clock": clock, "write_decision": True})
    old, new = dep.planted
    digest = maintenance.digest(dep.config, since="1d")
    marked = {i.memory_id: i.conflict for i in digest.items}
    assert marked[old] is None and marked[new] is not None and old in marked[new]
    assert "may conflict with an older memory" in rendered(digest)


def test_a_confirmation_or_an_invalidation_settles_it(make_memory: Any, clock: Any) -> None:
    m = make_memory(write_decision=True)
    old, new = plant(m)
    assert len(maintenance.review_queue(m).conflicts) == 1
    clock.advance(minutes=5)
    m.invalidate(new, "it was the daughter")
    assert maintenance.review_queue(m).conflicts == ()
    other = m.add("My niece is allergic to peanuts", **SCOPE, infer=False)["results"][0]["id"]
    assert [c.memory_id for c in maintenance.review_queue(m).conflicts] == [other]
    clock.advance(minutes=5)
    m.confirm(other)
    assert maintenance.review_queue(m).conflicts == ()


def test_a_pair_the_model_is_too_unsure_of_is_added_and_queued(make_memory: Any, monkeypatch: Any) -> None:
    """When unsure, add and queue: a label the model holds back (its margin not cleared) stores the new memory
    beside the old one and lists the pair as a possible conflict, naming the label held back."""
    from dataclasses import replace

    from mem0_hygiene.memory import decision
    from mem0_hygiene.memory.conflicts import open_conflicts

    model = decision.EMBEDDER_DEFAULTS[decision.MINILM_FAMILY].model
    assert model is not None
    unsure = replace(decision.EMBEDDER_DEFAULTS[decision.OFFLINE_FAMILY], model=replace(model, margin=1.01))
    monkeypatch.setitem(decision.EMBEDDER_DEFAULTS, decision.OFFLINE_FAMILY, unsure)
    m = make_memory(write_decision=True)
    old = m.add("The orders service runs on Postgres 15", **SCOPE, infer=False)["results"][0]["id"]
    [res] = m.add("The orders service runs on Postgres 16", **SCOPE, infer=False)["results"]
    assert res["event"] == "ADD" and res["hygiene"]["decision"]["label"] == "unrelated"
    assert "held back" in res["hygiene"]["decision"]["reason"]
    assert len(m.get_all(filters=SCOPE)["results"]) == 2
    [conflict] = open_conflicts(m.ledger, m.now())
    assert (conflict.memory_id, conflict.compared_id) == (res["id"], old)
    assert conflict.reason.startswith("may be ")
