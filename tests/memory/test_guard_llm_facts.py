"""The write guard on what mem0's LLM hands back: a credential in a fact the model returns (one it did not get
from this call) is redacted before mem0 stores it, or refused, and the result item says so. Proven on the raw bytes
of every store file (Qdrant's payloads, history.db) and on the rows of history.db. The LLM is mocked: it is a
remote service."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import mem0
import pytest

from mem0_hygiene import AsyncMemory, offline_config
from mem0_hygiene.errors import SecretRefused

SCOPE = {"user_id": "dana"}
KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "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"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkRhbmEifQ"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PG_PASS = "Pg-s3cr3t-9x7"
# The model "remembers" a key pair from an old memory; the user said nothing of it.
LEAKY_FACT = f"Dana's backup job uses access key {KEY_ID} secret {AWS_SECRET}"
PIECES = (KEY_ID, AWS_SECRET, AWS_SECRET.lower(), JWT, PG_PASS, PG_PASS.lower())


def answer(*facts: str) -> str:
    """mem0's extraction answer, in a code block as models often send it."""
    return "```json\n" + json.dumps({"memory": [{"id": str(i), "text": f} for i, f in enumerate(facts)]}) + "\n```"


def store_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def history_texts(folder: Path) -> str:
    with sqlite3.connect(f"file:{folder / 'history.db'}?mode=ro", uri=True) as con:
        rows = con.execute("SELECT old_memory, new_memory FROM history").fetchall()
    return " ".join(str(v) for row in rows for v in row if v)


def leaked(folder: Path) -> list[str]:
    raw = store_bytes(folder)
    return [p for p in PIECES if p.encode() in raw]


def test_a_key_the_llm_returns_is_redacted_before_mem0_stores_it_and_the_item_says_so(make_memory, tmp_path, mocker):
    m = make_memory()
    mocker.patch.object(m.llm, "generate_response", return_value=answer(LEAKY_FACT, "Dana prefers pnpm"))
    items = m.add([{"role": "user", "content": "Remind me how the nightly backup runs"}], **SCOPE, source="chat")
    by_text = {i["memory"]: i for i in items["results"]}
    leaky = by_text[
        "Dana's backup job uses access key [redacted aws_access_key_id] secret [redacted aws_secret_access_key]"
    ]
    assert leaky["hygiene"]["redacted"] == ["aws_access_key_id", "aws_secret_access_key"]
    assert "redacted" not in by_text["Dana prefers pnpm"]["hygiene"]
    m.flush()
    assert m.ledger.get(leaky["id"]).redacted == "aws_access_key_id,aws_secret_access_key"
    point = m.vector_store.get(vector_id=leaky["id"])
    assert point.payload["data"] == leaky["memory"] and AWS_SECRET.lower() not in point.payload["text_lemmatized"]
    assert KEY_ID not in history_texts(tmp_path / "store") and "[redacted aws_secret_access_key]" in history_texts(
        tmp_path / "store"
    )
    m.close()
    assert leaked(tmp_path / "store") == []


def test_each_fact_is_screened_on_its_own_and_facts_without_credentials_pass_unchanged(make_memory, tmp_path, mocker):
    m = make_memory()
    facts = (
        "Dana's session token is " + JWT,
        "Dana lives in Haifa",
        f"The reporting DB is postgresql://report:{PG_PASS}@db.internal/warehouse",
    )
    mocker.patch.object(m.llm, "generate_response", return_value=answer(*facts))
    results = m.add("Tell me what you know", **SCOPE)["results"]
    assert sorted((r["memory"], r["hygiene"].get("redacted")) for r in results) == [
        ("Dana lives in Haifa", None),
        ("Dana's session token is [redacted jwt]", ["jwt"]),
        (
            "The reporting DB is postgresql://report:[redacted connection_string_password]@db.internal/warehouse",
            ["connection_string_password"],
        ),
    ]
    m.close()
    assert leaked(tmp_path / "store") == []


def test_refuse_stores_none_of_the_facts_when_the_llm_returns_a_credential(make_memory, tmp_path, mocker):
    m = make_memory(secrets="refuse")
    mocker.patch.object(m.llm, "generate_response", return_value=answer("Dana prefers pnpm", LEAKY_FACT))
    with pytest.raises(SecretRefused) as err:
        m.add("How does the backup run?", **SCOPE)
    said = str(err.value)
    assert "fact 2 the LLM extracted" in said and "aws_secret_access_key" in said and AWS_SECRET not in said
    assert m.get_all(filters=SCOPE, include_stale=True)["results"] == []
    m.close()
    assert leaked(tmp_path / "store") == []


def test_allow_stores_what_the_llm_returned_as_it_is(make_memory, mocker):
    m = make_memory(secrets="allow")
    mocker.patch.object(m.llm, "generate_response", return_value=answer(LEAKY_FACT))
    item = m.add("How does the backup run?", **SCOPE)["results"][0]
    assert item["memory"] == LEAKY_FACT and "redacted" not in item["hygiene"]


def test_with_the_write_decision_on_the_facts_are_screened_and_reported_too(make_memory, tmp_path, mocker):
    m = make_memory(write_decision=True)
    mocker.patch.object(m.llm, "generate_response", return_value=answer(LEAKY_FACT))
    item = m.add("How does the backup run?", **SCOPE)["results"][0]
    assert item["hygiene"]["redacted"] == ["aws_access_key_id", "aws_secret_access_key"]
    assert AWS_SECRET not in item["memory"]
    m.close()
    assert leaked(tmp_path / "store") == []


def test_other_calls_to_the_same_llm_get_their_answers_untouched(make_memory, mocker):
    m = make_memory()
    mocker.patch.object(m.llm, "generate_response", return_value=answer(LEAKY_FACT))
    m.add("How does the backup run?", **SCOPE)
    assert AWS_SECRET in m.llm.generate_response(messages=[{"role": "user", "content": "hi"}])


def test_a_procedural_summary_holding_a_credential_is_stored_redacted(make_memory, tmp_path, mocker):
    m = make_memory()
    mocker.patch.object(
        m.llm, "generate_response", return_value=f"1. Log in with bearer token {JWT}\n2. Run the backup job"
    )
    item = m.add(
        [
            {"role": "user", "content": "Run the nightly backup"},
            {"role": "assistant", "content": "Done, backup finished"},
        ],
        agent_id="ops-bot",
        memory_type="procedural_memory",
    )["results"][0]
    assert "[redacted jwt]" in item["memory"] and item["hygiene"]["redacted"] == ["jwt"]
    m.close()
    assert leaked(tmp_path / "store") == []


def test_mem0s_own_update_cannot_store_a_credential_either(make_memory, tmp_path):
    m = make_memory()
    mid = m.add("Dana's backup job runs nightly", **SCOPE, infer=False)["results"][0]["id"]
    mem0.Memory.update(m, mid, text=LEAKY_FACT)  # mem0's method, as mem0's own code would call it
    assert m.get(mid)["memory"].endswith("secret [redacted aws_secret_access_key]")
    m.close()
    assert leaked(tmp_path / "store") == []


def test_async_memory_screens_the_llms_facts_the_same_way(tmp_path, mocker):
    am = AsyncMemory.from_config(offline_config(tmp_path / "store"))
    try:
        mocker.patch.object(am.llm, "generate_response", return_value=answer(LEAKY_FACT))
        item = asyncio.run(am.add("How does the backup run?", **SCOPE))["results"][0]
        assert item["hygiene"]["redacted"] == ["aws_access_key_id", "aws_secret_access_key"]
    finally:
        am.close()
    assert leaked(tmp_path / "store") == []


def test_a_refusal_of_a_procedural_summary_is_the_guards_not_mem0s(make_memory, mocker):
    m = make_memory(secrets="refuse")
    mocker.patch.object(m.llm, "generate_response", return_value=f"Log in with {JWT}")
    with pytest.raises(SecretRefused, match="the summary the LLM wrote holds a credential"):
        m.add(
            [{"role": "user", "content": "Run the nightly backup"}], agent_id="ops-bot", memory_type="procedural_memory"
        )
