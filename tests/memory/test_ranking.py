"""Decay in ranking (hygiene.rank) with an injected clock: recency 0.995 per hour since last use or
confirmation, relevance and importance, weighted; it reorders, never hides, never resolves a contradiction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mem0_hygiene import ConfigError
from mem0_hygiene.config import HygieneSettings, RankSettings
from mem0_hygiene.memory.ranking import importance, recency
from mem0_hygiene.stores.ledger import LedgerRow

SCOPE = {"user_id": "dana"}
PAIRS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "staleness_pairs.jsonl"


def texts(result):
    return [r["memory"] for r in result["results"]]


def ids(result):
    return [r["id"] for r in result["results"]]


def add(m, text, **kwargs):
    kwargs.setdefault("user_id", "dana")
    return m.add(text, infer=False, **kwargs)["results"][0]["id"]


def test_recency_and_importance_as_documented(clock):
    now = clock()
    row = LedgerRow("m", created_at=now.isoformat(), confirmed_at=now.isoformat())
    assert recency(row, now, 0.995) == 1.0
    for hours, expected in ((1, 0.995), (24, 0.8867), (168, 0.4308), (720, 0.0271)):
        later = clock.advance(hours=hours)
        assert recency(row, later, 0.995) == pytest.approx(expected, abs=1e-4)
        clock.current = now
    used = LedgerRow("m", created_at="2026-01-01T00:00:00+00:00", last_used_at=now.isoformat())
    assert recency(used, now, 0.995) == 1.0  # the later of last use and confirmation counts
    settings = RankSettings()
    assert importance({"importance": 0.8}, settings) == 0.8
    assert importance({"importance": 9}, settings) == 0.9  # Generative Agents' 1..10 scale
    assert importance({"importance": "7"}, settings) == 0.7
    assert importance({}, settings) == settings.default_importance
    assert importance(None, RankSettings(default_importance=0.2)) == 0.2


def test_rank_settings_are_validated():
    assert HygieneSettings.from_dict({}).rank is None
    assert HygieneSettings.from_dict({"rank": True}).rank == RankSettings()
    assert HygieneSettings.from_dict({"rank": {"recency": 2}}).rank == RankSettings(recency=2.0)
    for bad, words in (
        ({"relevance": 0, "recency": 0, "importance": 0}, "at least one of the weights"),
        ({"decay": 1.5}, "from 0.0 to 1.0"),
        ({"decay": 0}, "must be above 0"),
        ({"recency": -1}, "from 0.0"),
        ({"half_life": 3}, "unknown hygiene.rank option"),
        ({"importance_key": ""}, "metadata key name"),
    ):
        with pytest.raises(ConfigError, match=words):
            HygieneSettings.from_dict({"rank": bad})


def scenario(m, clock):
    """Two live facts from the labelled set that both stay true (an "unrelated" pair). Tea is a little
    more relevant to the query; coffee was used yesterday, tea not for a month."""
    tea = add(m, "Prefers tea in the morning")
    coffee = add(m, "Prefers coffee after lunch")
    clock.advance(days=29)
    m.ledger.record_uses({coffee: (1, clock())})
    clock.advance(days=1)
    return tea, coffee


def test_decay_reorders_live_facts_as_documented(make_memory, clock):
    m = make_memory(rank=True)
    tea, coffee = scenario(m, clock)
    res = m.search("prefers tea or coffee", filters=SCOPE)["results"]
    assert [r["id"] for r in res] == [coffee, tea]
    by_id = {r["id"]: r for r in res}
    w = RankSettings()
    for mid, hours in ((tea, 720), (coffee, 24)):
        facts = by_id[mid]["hygiene"]["rank"]
        assert facts["recency"] == pytest.approx(0.995**hours, abs=1e-6)
        assert facts["relevance"] == pytest.approx(by_id[mid]["score"], abs=1e-6)  # mem0's score, untouched
        assert facts["importance"] == w.default_importance
        expected = (
            w.relevance * facts["relevance"] + w.recency * facts["recency"] + w.importance * facts["importance"]
        ) / (w.relevance + w.recency + w.importance)
        assert facts["score"] == pytest.approx(expected, abs=1e-6)
    assert by_id[tea]["score"] > by_id[coffee]["score"]  # tea is still the more relevant one
    m.hygiene_settings.rank = None  # the same store, ranking off: relevance order
    assert ids(m.search("prefers tea or coffee", filters=SCOPE)) == [tea, coffee]


def test_weights_are_configurable(make_memory, clock):
    m = make_memory(rank={"recency": 0.0, "importance": 0.0})
    tea, coffee = scenario(m, clock)
    assert ids(m.search("prefers tea or coffee", filters=SCOPE)) == [tea, coffee]


def test_importance_from_metadata_lifts_a_memory(make_memory, clock):
    m = make_memory(rank={"recency": 0.0})
    plain_tea = add(m, "Prefers tea in the morning")
    allergy = add(m, "Prefers coffee after lunch, never with milk: lactose allergy", metadata={"importance": 10})
    res = m.search("prefers tea or coffee", filters=SCOPE)["results"]
    assert res[0]["id"] == allergy and res[0]["hygiene"]["rank"]["importance"] == 1.0
    assert res[1]["id"] == plain_tea


def test_decay_never_hides_a_memory(make_memory, clock):
    m = make_memory()
    for i, text in enumerate(
        [
            "Prefers tea in the morning",
            "Prefers coffee after lunch",
            "Prefers green tea in the afternoon",
            "Prefers espresso in the morning",
            "Likes hiking on weekends",
            "Works from the Haifa office",
        ]
    ):
        mid = add(m, text)
        clock.advance(days=40)
        if i % 2:
            m.ledger.record_uses({mid: (3, clock())})
    for query in ("prefers tea or coffee", "morning drink", "weekend plans", "office"):
        for top_k in (1, 3, 20):
            m.hygiene_settings.rank = None
            plain = ids(m.search(query, filters=SCOPE, top_k=top_k))
            m.hygiene_settings.rank = RankSettings(recency=5.0)
            ranked = ids(m.search(query, filters=SCOPE, top_k=top_k))
            assert sorted(ranked) == sorted(plain)  # the same memories, perhaps in another order
    m.hygiene_settings.rank = RankSettings()
    assert all("rank" not in r["hygiene"] for r in m.get_all(filters=SCOPE)["results"])  # search only


def test_a_heavily_used_stale_fact_still_loses_to_the_fact_that_replaced_it(make_memory, clock):
    """On the labelled set: every update/contradiction pair that the write-time decision resolves. The
    old fact is used 500 times up to the moment the new one arrives, the new one never; ranking is on
    and weights recency heavily. The old fact never comes back: supersession and invalidation hide it,
    decay only orders what is live."""
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    m = make_memory(write_decision=True, rank={"recency": 5.0})
    resolved = 0
    for p in pairs:
        if p["label"] not in ("update", "contradiction"):
            continue
        scope = {"user_id": f"pair-{p['id']}"}
        old = add(m, p["old"], **scope)
        clock.advance(days=30)
        m.ledger.record_uses({old: (500, clock())})
        res = m.add(p["new"], **scope, infer=False)["results"]
        hidden = {
            r["hygiene"]["decision"].get("supersedes") or r["hygiene"]["decision"].get("invalidates") for r in res
        }
        if old not in hidden:
            continue  # the decision missed this one: both stay live (the evaluation counts these)
        resolved += 1
        new = res[0]["id"]
        found = m.search(p["old"], filters=scope)["results"]
        assert old not in [r["id"] for r in found], p
        assert new in [r["id"] for r in found], p
        stale = {r["id"]: r for r in m.search(p["old"], filters=scope, include_stale=True)["results"]}
        assert stale[old]["hygiene"]["state"] in ("superseded", "invalidated")
    assert resolved >= 70  # of the 98 update/contradiction pairs (see benchmarks/eval_staleness.py)
