"""The batched LLM judge (write_decision: {"judge": "llm_batch"}) on a real store with the offline embedder: an
``infer=True`` add asks about all its unsure pairs in one call, each answer is still checked by the guards, and
an item that is missing or cannot be read leaves that pair's deterministic decision. The LLM is the only mock:
the first answer of each add is mem0's fact extraction, the second the judge's, both recorded as text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mem0_hygiene.config import HygieneSettings
from mem0_hygiene.memory.decision import CONTRADICTION, DUPLICATE, UNRELATED, UPDATE
from mem0_hygiene.memory.judge import ask_judge_batch, batch_messages, judged_decisions, parse_batch

SCOPE = {"user_id": "dana"}
# each new fact is within the offline rules' unsure band of one old fact (similarity 0.54, 0.77, 0.66)
TEA, TEA_NEW = "Prefers tea in the morning", "Likes to drink tea in the morning"
PG, PG_NEW = "Dana uses Postgres 15", "Dana uses Postgres 16"
KID, KID_NEW = "The daughter plays the violin", "The son plays the violin"
FAR = "Uses pnpm for JavaScript"  # far from everything: never asked about


def extracted(*facts: str) -> str:
    return json.dumps({"memory": [{"text": f} for f in facts]})


def answer(*events: tuple[int, str]) -> str:
    return json.dumps({"decisions": [{"pair": n, "event": e, "reason": f"pair {n}: {e}"} for n, e in events]})


@pytest.fixture
def bm(make_memory: Any) -> Any:
    m = make_memory(write_decision={"judge": "llm_batch"})
    for text in (TEA, PG, KID):
        m.add(text, infer=False, **SCOPE)
    return m


def by_text(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["memory"]: r for r in results}


def test_a_multi_fact_add_asks_about_all_its_unsure_pairs_in_one_call(bm, mocker):
    llm = mocker.patch.object(
        bm.llm,
        "generate_response",
        side_effect=[extracted(TEA_NEW, PG_NEW, FAR), answer((1, "NONE"), (2, "UPDATE"))],
    )
    res = bm.add("I drink tea in the morning, moved to Postgres 16 and use pnpm", **SCOPE)["results"]
    assert llm.call_count == 2  # mem0's extraction, then one judge call for the whole add
    asked = llm.call_args.kwargs["messages"][-1]["content"]
    assert "Pair 1:" in asked and TEA_NEW in asked and "Pair 2:" in asked and PG_NEW in asked
    assert FAR not in asked and "Pair 3:" not in asked  # a clear decision is not asked about
    got = by_text(res)
    assert got[TEA]["event"] == "NONE"  # judged a duplicate: the new copy is taken back out
    assert got[TEA]["hygiene"]["decision"]["judge"] == {
        "by": "llm",
        "event": "NONE",
        "reason": "pair 1: NONE",
        "deterministic": UPDATE,
        "batch": 2,
    }
    assert got[PG_NEW]["event"] == "UPDATE" and got[PG_NEW]["previous_memory"] == PG
    assert got[FAR]["event"] == "ADD" and "judge" not in got[FAR]["hygiene"]["decision"]
    live = sorted(r["memory"] for r in bm.get_all(filters=SCOPE)["results"])
    assert live == sorted([TEA, PG_NEW, KID, FAR])
    assert [k["event"] for k in judged_decisions(bm.ledger)] == ["NONE", "UPDATE"]


def test_the_guards_overrule_the_batched_judge(bm, mocker):
    mocker.patch.object(
        bm.llm,
        "generate_response",
        side_effect=[extracted(PG_NEW, KID_NEW), answer((1, "NONE"), (2, "DELETE"))],
    )
    got = by_text(bm.add("Postgres 16 now, and my son plays the violin", **SCOPE)["results"])
    pg = got[PG_NEW]["hygiene"]["decision"]
    assert got[PG_NEW]["event"] == "UPDATE" and pg["label"] == UPDATE  # a changed version is never a duplicate
    assert "values differ" in pg["reason"] and pg["judge"]["event"] == "NONE"
    kid = got[KID_NEW]["hygiene"]["decision"]
    assert got[KID_NEW]["event"] == "ADD" and kid["label"] == UNRELATED  # another subject: never invalidated
    assert "without explicit evidence" in kid["possible_conflict"]
    assert KID in [r["memory"] for r in bm.get_all(filters=SCOPE)["results"]]
    assert not any(r["event"] == "DELETE" for r in got.values())


def test_a_missing_or_unreadable_item_leaves_that_pairs_deterministic_decision(bm, mocker):
    bad = json.dumps({"decisions": [{"pair": 1, "event": "NONE", "reason": "same"}, {"pair": 3, "event": "MERGE"}]})
    mocker.patch.object(bm.llm, "generate_response", side_effect=[extracted(TEA_NEW, PG_NEW, KID_NEW), bad])
    got = by_text(bm.add("tea, Postgres 16, my son's violin", **SCOPE)["results"])
    assert got[TEA]["event"] == "NONE"  # its answer was fine: it decides
    pg = got[PG_NEW]["hygiene"]["decision"]
    assert pg["label"] == UPDATE and "judge gave no answer for pair 2" in pg["reason"]
    assert pg["judge"]["event"] is None and pg["judge"]["deterministic"] == UPDATE
    kid = got[KID_NEW]["hygiene"]["decision"]
    assert "judge answered 'MERGE'" in kid["reason"] and kid["label"] == UNRELATED  # deterministic, then guarded


def test_an_answer_that_is_not_json_leaves_every_deterministic_decision(bm, mocker):
    mocker.patch.object(
        bm.llm, "generate_response", side_effect=[extracted(TEA_NEW, PG_NEW), "They look the same to me."]
    )
    got = by_text(bm.add("tea and Postgres 16", **SCOPE)["results"])
    for text in (TEA_NEW, PG_NEW):
        decision = got[text]["hygiene"]["decision"]
        assert decision["label"] == UPDATE and "judge answer was not JSON" in decision["reason"]


def test_a_fact_compared_with_one_the_judge_dropped_is_decided_again_against_what_is_live(bm, mocker):
    green = "Likes to drink green tea in the morning"  # nearest to TEA_NEW, which the judge calls a duplicate
    mocker.patch.object(bm.llm, "generate_response", side_effect=[extracted(TEA_NEW, green), answer((1, "NONE"))])
    got = by_text(bm.add("tea, green tea", **SCOPE)["results"])
    assert got[TEA]["event"] == "NONE"
    again = got[green]["hygiene"]["decision"]
    assert "decided again without the judge" in again["reason"] and "judge" not in again
    assert again["nearest"] == got[TEA]["id"]  # not the copy taken back out
    assert sorted(r["memory"] for r in bm.get_all(filters=SCOPE)["results"]) == sorted([TEA, PG, KID, green])


def test_a_failing_llm_at_the_judge_call_leaves_the_add_standing(bm, mocker):
    mocker.patch.object(bm.llm, "generate_response", side_effect=[extracted(TEA_NEW), TimeoutError("slow")])
    res = bm.add("tea", **SCOPE)["results"]
    assert [r["event"] for r in res] == ["UPDATE"]
    assert "judge unavailable (TimeoutError)" in res[0]["hygiene"]["decision"]["reason"]


def test_no_judge_call_when_every_decision_of_the_add_is_clear(bm, mocker):
    llm = mocker.patch.object(bm.llm, "generate_response", side_effect=[extracted(FAR)])
    res = bm.add("I use pnpm", **SCOPE)["results"]
    assert llm.call_count == 1  # the extraction only
    assert [(r["memory"], r["event"]) for r in res] == [(FAR, "ADD")]


def test_with_infer_false_the_batch_mode_asks_once_per_unsure_message_in_the_same_format(bm, mocker):
    llm = mocker.patch.object(bm.llm, "generate_response", return_value=answer((1, "NONE")))
    res = bm.add(TEA_NEW, infer=False, **SCOPE)["results"]
    assert llm.call_count == 1 and res[0]["event"] == "NONE"
    assert "Pair 1:" in llm.call_args.kwargs["messages"][-1]["content"]
    assert res[0]["hygiene"]["decision"]["label"] == DUPLICATE and res[0]["hygiene"]["decision"]["judge"]["batch"] == 1


def test_batched_answers_are_read_by_pair_number_with_or_without_a_wrapper():
    fenced = '```json\n[{"event": "add"}, {"pair": "2", "event": "delete", "reason": " gone "}]\n```'
    first, second = parse_batch(fenced, 2)  # a bare list; an item without a number counts by its place
    assert (first.label, second.label, second.reason) == (UNRELATED, CONTRADICTION, "gone")
    twice = parse_batch(answer((1, "ADD"), (1, "NONE")), 1)
    assert twice[0].label is None and "2 times" in twice[0].reason
    assert [j.label for j in parse_batch({"content": answer((2, "ADD"), (1, "UPDATE"))}, 2)] == [UPDATE, UNRELATED]
    assert all(j.label is None for j in parse_batch(None, 3))
    assert ask_judge_batch(object(), []) == []  # nothing unsure: no call at all
    assert batch_messages([("new", "old")])[0]["role"] == "system"


def test_the_batch_judge_option_is_accepted():
    assert HygieneSettings.from_dict({"write_decision": {"judge": "llm_batch"}}).write_decision.judge == "llm_batch"
