"""The erasure receipts are visible: `where` lists them (scope as recorded, time, verified then, path), and the
audit's ERASURE_UNDONE re-checks each one from what it read and reports the scope that came back, naming the
receipt, the commands that erase it again, and what is back (points, matching texts, messages rows)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mem0_hygiene.actions.forget_scope import forget_scope
from mem0_hygiene.actions.where import where
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.cli import cli
from mem0_hygiene.report import Severity

DANA = "Dana's passport number is X1234567"
TURN = "hi, my cat is called Pixel"


def plant(m) -> None:
    m.add(DANA, user_id="dana", infer=False, source="chat")
    m.add("Bob works on the billing service", user_id="bob", infer=False, source="chat")
    m.db.save_messages([{"role": "user", "content": TURN}], "user_id=dana")


@pytest.fixture
def erased(make_deployment, persistent_dir, clock):
    d = make_deployment(persistent_dir / "app", plant=plant, config_file=persistent_dir / "mem0.json")
    clock.advance(hours=1)
    result = forget_scope(d.config, user_id="dana")
    assert result.verified and result.receipt
    return d, result.receipt


def undone(report):
    return [f for f in report.findings if f.code == "ERASURE_UNDONE"]


def test_where_lists_the_receipts_with_scope_time_and_verification(erased, persistent_dir):
    d, receipt = erased
    [entry] = where(d.config).receipts
    assert entry.path == receipt and entry.scope == {"user_id": "dana"} and entry.verified and entry.memories == 1
    assert entry.erased_at.startswith("2026-08-01T10:00")
    config = str(persistent_dir / "mem0.json")
    text = CliRunner().invoke(cli, ["where", "--config", config])
    assert text.exit_code == 0, text.output
    assert "erasure receipts" in text.output and "user=dana" in text.output and receipt in text.output
    data = json.loads(CliRunner().invoke(cli, ["where", "--config", config, "--json"]).output)
    assert data["receipts"] == [entry.to_dict()] and data["receipts"][0]["verified"] is True


def test_where_without_receipts_lists_none(make_deployment, persistent_dir):
    d = make_deployment(persistent_dir / "app", plant=plant)
    assert where(d.config).receipts == ()
    assert where(d.config).to_dict()["receipts"] == []


def test_the_audit_is_quiet_while_the_erasure_holds_and_reports_what_came_back(erased, make_deployment, persistent_dir):
    d, receipt = erased
    assert undone(audit(d.config)) == []

    m = make_deployment(persistent_dir / "app", keep_open=True).memory
    m.add(DANA, user_id="dana", infer=False, source="chat again")
    m.db.save_messages([{"role": "user", "content": "hello again"}], "agent_id=support&user_id=dana")
    m.close()

    [found] = undone(audit(d.config))
    assert found.severity == Severity.ERROR and found.count == 1
    [example] = found.examples
    assert "user=dana" in example and receipt in example
    assert "1 point(s) of the scope" in example and "1 point(s) holding an erased text" in example
    assert "1 messages row(s) of the scope" in example
    assert "forget --user dana" in found.fix and f"forget --verify {receipt}" in found.fix
    assert found.details["receipts"] == [receipt]
    assert DANA not in json.dumps(found.to_dict())  # the finding names the receipt, never the erased text


def test_the_check_is_registered_with_its_documentation():
    from mem0_hygiene.auditing.checks import REGISTRY

    [chk] = [c for c in REGISTRY if c.code == "ERASURE_UNDONE"]
    assert chk.severity == "error" and "restore --reapply-erasures" in chk.fix and "receipt" in chk.means
