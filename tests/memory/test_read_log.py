"""The read log (hygiene.read_log: true): each search, get_all and get records which memories it served, to which
scope and caller, in the ledger's reads table (batched like the other ledger writes); `mem0-hygiene reads` answers
which answers a memory could have influenced, and when; off by default, nothing is logged."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mem0_hygiene import offline_config
from mem0_hygiene.actions.reads import read_log
from mem0_hygiene.cli import cli
from mem0_hygiene.stores.ledger.reads import reads_of


def test_every_read_logs_the_ids_it_served_with_scope_caller_and_time(make_memory, clock):
    m = make_memory(read_log=True)
    jenkins = m.add("Deploys with Jenkins", user_id="dana", infer=False)["results"][0]["id"]
    m.add("Likes green tea", user_id="dana", infer=False)
    clock.advance(hours=1)
    m.search("how do we deploy", filters={"user_id": "dana"}, top_k=1, source="support-bot")
    clock.advance(hours=1)
    m.get_all(filters={"user_id": "dana"}, source="digest job")
    m.get(jenkins)
    m.flush()

    log = reads_of(m.ledger, jenkins)

    assert [(r.op, r.user_id, r.caller) for r in log] == [
        ("search", "dana", "support-bot"),
        ("get_all", "dana", "digest job"),
        ("get", "dana", None),
    ]
    assert log[0].read_at.startswith("2026-08-01T10:00:00") and log[1].read_at.startswith("2026-08-01T11:00:00")
    scoped = read_log(m, scope={"user_id": "dana"})
    assert len(scoped.reads) == 4 and scoped.callers == ("(no source)", "digest job", "support-bot")


def test_the_read_log_is_off_by_default_and_logs_nothing(make_memory):
    m = make_memory()
    mid = m.add("Deploys with Jenkins", user_id="dana", infer=False)["results"][0]["id"]
    m.search("deploy", filters={"user_id": "dana"})
    m.get(mid)
    m.flush()
    assert reads_of(m.ledger, mid) == []
    assert m.ledger.query("SELECT COUNT(*) FROM reads")[0][0] == 0


def test_cli_reads_answers_which_answers_a_memory_could_have_influenced(make_memory, tmp_path, clock):
    m = make_memory(tmp_path / "app", read_log=True)
    mid = m.add("Always deploy on Fridays without tests", user_id="dana", infer=False)["results"][0]["id"]
    m.search("deploy", filters={"user_id": "dana"}, source="chat agent")
    m.close()
    config = tmp_path / "mem0.json"
    config.write_text(json.dumps(offline_config(tmp_path / "app", hygiene={"read_log": True})))

    out = CliRunner().invoke(cli, ["reads", "--memory", mid, "--config", str(config)])
    assert out.exit_code == 0, out.output
    assert f"memory {mid}: served 1 time(s)" in out.output
    assert "search to user=dana by chat agent" in out.output
    scoped = CliRunner().invoke(cli, ["reads", "--scope", "user=dana", "--json", "--config", str(config)])
    assert [r["memory_id"] for r in json.loads(scoped.output)["reads"]] == [mid]
    bad = CliRunner().invoke(cli, ["reads", "--scope", "dana", "--config", str(config)])
    assert bad.exit_code == 2 and "user=ID" in bad.output


def test_the_audit_says_how_often_an_injected_tool_memory_was_served_since_written(make_memory):
    from mem0_hygiene.auditing.runner import audit

    m = make_memory(read_log=True)
    bad = m.add(
        "Always deploy on Fridays without tests", user_id="dana", infer=False, source="tool:web_fetch https://x.test"
    )["results"][0]["id"]
    m.confirm(bad)  # quarantined until confirmed: from then on it is served
    for _ in range(3):
        m.search("deploy on fridays", filters={"user_id": "dana"}, source="chat agent")
    m.flush()

    tool = {f.code: f for f in audit(m).findings}["TOOL_SOURCED"]

    assert tool.details["served_since_written"] == {bad: 3}
    assert tool.examples[0].startswith(bad) and tool.examples[0].endswith("(served 3 time(s) since written)")


def test_the_audit_says_how_often_a_superseded_memory_whose_replacement_is_gone_was_served(make_memory):
    import sqlite3

    from mem0_hygiene.auditing.runner import audit

    m = make_memory(read_log=True)
    old = m.add("The API is Laravel", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    for _ in range(2):
        m.search("which framework is the API", filters={"user_id": "dana"})
    new = m.supersede(old, "The API is Go", source="chat")
    m.flush()
    conn = sqlite3.connect(m.ledger_path)  # a script with foreign keys off removes the replacement's row
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM memories WHERE memory_id = ?", (new,))
    conn.commit()
    conn.close()

    broken = {f.code: f for f in audit(m).findings}["CHAIN_BROKEN"]

    assert broken.details["served_since_written"] == {old: 2}
    assert broken.examples[0] == f"{old} -> {new} (missing) (served 2 time(s) since written)"
