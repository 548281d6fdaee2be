"""The LLM judge of the write-time decision (write_decision: {"judge": "llm"}) on a real store with the offline
embedder: asked only for an unsure candidate, one call at most per memory written, its event decides and its
reason reaches the result item and the ledger; an LLM that fails or answers nonsense leaves the deterministic
decision. The LLM is the only mock: its answers below are written in the shape mem0's OpenAI provider returns
for ``response_format={"type": "json_object"}``."""

from __future__ import annotations

import pytest

from mem0_hygiene import ConfigError
from mem0_hygiene.config import HygieneSettings
from mem0_hygiene.memory.decision import CONTRADICTION, DUPLICATE, UNRELATED, UPDATE
from mem0_hygiene.memory.judge import judge_messages, judged_decisions, parse_judgement

SCOPE = {"user_id": "dana"}
# sim 0.54 with the offline embedder: inside the band where the threshold rules are unsure (0.425 .. 0.885)
OLD, REWORDED = "Prefers tea in the morning", "Likes to drink tea in the morning"

NONE_ANSWER = '{"event": "NONE", "reason": "Same preference for morning tea, reworded."}'
DELETE_ANSWER = '```json\n{"event": "DELETE", "reason": "The user now says the opposite."}\n```'
UPDATE_ANSWER = '{"event": "UPDATE", "reason": "A newer Postgres version replaces 15."}'


@pytest.fixture
def jm(make_memory):
    return make_memory(write_decision={"judge": "llm"})


def add(m, text, **kwargs):
    kwargs.setdefault("user_id", "dana")
    return m.add(text, infer=False, **kwargs)["results"]


def test_an_unsure_pair_is_judged_and_the_answer_decides(jm, mocker):
    old = add(jm, OLD)[0]
    llm = mocker.patch.object(jm.llm, "generate_response", return_value=NONE_ANSWER)
    res = add(jm, REWORDED)
    assert llm.call_count == 1
    messages = llm.call_args.kwargs["messages"]
    assert OLD in messages[-1]["content"] and REWORDED in messages[-1]["content"]
    assert [r["event"] for r in res] == ["NONE"] and res[0]["id"] == old["id"]  # reinforced, nothing stored
    decision = res[0]["hygiene"]["decision"]
    assert decision["label"] == DUPLICATE
    assert decision["reason"] == "llm: Same preference for morning tea, reworded."
    assert decision["judge"] == {
        "by": "llm",
        "event": "NONE",
        "reason": "Same preference for morning tea, reworded.",
        "deterministic": UPDATE,
    }
    assert [r["memory"] for r in jm.get_all(filters=SCOPE)["results"]] == [OLD]
    kept = judged_decisions(jm.ledger, old["id"])
    assert [(k["compared_id"], k["label"], k["event"], k["reason"]) for k in kept] == [
        (old["id"], DUPLICATE, "NONE", "Same preference for morning tea, reworded.")
    ]


def test_a_judged_contradiction_invalidates_with_the_judges_reason(jm, mocker):
    old = add(jm, OLD)[0]
    mocker.patch.object(jm.llm, "generate_response", return_value=DELETE_ANSWER)
    res = add(jm, "Likes no tea in the morning")
    assert [r["event"] for r in res] == ["ADD", "DELETE"]
    new, gone = res
    assert new["hygiene"]["decision"]["label"] == CONTRADICTION
    assert gone["id"] == old["id"] and gone["hygiene"]["state"] == "invalidated"
    assert "llm: The user now says the opposite." in jm.ledger.get(old["id"]).invalid_reason
    assert judged_decisions(jm.ledger, new["id"])[0]["event"] == "DELETE"


def test_a_judged_update_supersedes(jm, mocker):
    old = add(jm, "Dana uses Postgres 15")[0]
    mocker.patch.object(jm.llm, "generate_response", return_value=UPDATE_ANSWER)
    new = add(jm, "Dana uses Postgres 16")[0]
    assert new["event"] == "UPDATE" and new["hygiene"]["decision"]["supersedes"] == old["id"]
    assert jm.get(old["id"])["hygiene"]["state"] == "superseded"
    assert judged_decisions(jm.ledger)[-1]["reason"] == "A newer Postgres version replaces 15."


def test_no_call_when_the_decision_is_clear(jm, mocker):
    llm = mocker.patch.object(jm.llm, "generate_response", return_value=NONE_ANSWER)
    add(jm, OLD)  # nothing near: nothing to judge
    assert add(jm, "prefers tea in the morning!")[0]["event"] == "NONE"  # the same text
    assert add(jm, "Uses pnpm for JavaScript")[0]["event"] == "ADD"  # far from everything
    assert llm.call_count == 0
    assert judged_decisions(jm.ledger) == []


def test_without_the_judge_option_the_llm_is_never_asked(make_memory, mocker):
    m = make_memory(write_decision=True)
    add(m, OLD)
    llm = mocker.patch.object(m.llm, "generate_response", return_value=NONE_ANSWER)
    assert add(m, REWORDED)[0]["hygiene"]["decision"]["label"] == UPDATE
    assert llm.call_count == 0


def test_at_most_one_call_per_memory_written(jm, mocker):
    add(jm, OLD)
    llm = mocker.patch.object(jm.llm, "generate_response", return_value='{"event": "ADD", "reason": "other"}')
    res = jm.add(
        [
            {"role": "user", "content": REWORDED},
            {"role": "user", "content": "Likes green tea at noon"},
            {"role": "user", "content": "Drinks tea in the morning"},
        ],
        user_id="dana",
        infer=False,
    )["results"]
    assert len(res) == 3 and all(r["event"] == "ADD" for r in res)
    assert llm.call_count <= 3


def test_an_llm_that_fails_or_talks_nonsense_leaves_the_deterministic_decision(jm, mocker):
    add(jm, OLD)
    # the offline LLM of this store really raises: no mock needed
    res = add(jm, REWORDED)
    decision = res[0]["hygiene"]["decision"]
    assert decision["label"] == UPDATE and "judge unavailable (HygieneError)" in decision["reason"]
    assert decision["judge"]["event"] is None
    mocker.patch.object(jm.llm, "generate_response", return_value="I think they are the same.")
    res = add(jm, "Enjoys drinking tea in the morning")
    assert "judge answer was not JSON" in res[0]["hygiene"]["decision"]["reason"]


def test_answers_are_read_with_or_without_a_code_fence():
    assert parse_judgement(DELETE_ANSWER).label == CONTRADICTION
    assert parse_judgement({"content": '{"event": "add", "reason": " other  topic "}'}).reason == "other topic"
    assert parse_judgement('{"event": "ADD"}').label == UNRELATED
    assert parse_judgement('{"event": "MERGE", "reason": "x"}').label is None
    assert parse_judgement(None).label is None
    assert judge_messages("new", "old")[0]["role"] == "system"


def test_the_judge_option_is_validated():
    assert HygieneSettings.from_dict({"write_decision": {"judge": "llm"}}).write_decision.judge == "llm"
    with pytest.raises(ConfigError, match="judge is 'gpt'"):
        HygieneSettings.from_dict({"write_decision": {"judge": "gpt"}})
