"""The audit of a fleet: one history.db per host (``--history-db [LABEL=]PATH`` repeated, or
``hygiene.history_dbs``), read as one history for the checks against the vector store, each file named by its
host's label in the findings that come from it, and every file listed among the locations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import offline_config
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.cli import cli


def _fleet(replicas: Any, tmp_path: Path) -> dict[str, str]:
    """Two replicas: each wrote a memory of its own, and a memory added on host0 was deleted on host1."""
    a, b = replicas(2)
    ids = {
        "a": a.add("Dana uses Postgres 15", user_id="dana", infer=False, source="chat")["results"][0]["id"],
        "b": b.add("Dana deploys on Fridays", user_id="dana", infer=False, source="chat")["results"][0]["id"],
    }
    ids["gone"] = a.add("Dana is in Lisbon this month", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    b.delete(ids["gone"])
    b.close()
    a.close()
    return ids


def test_a_memory_in_any_hosts_history_is_not_missing_from_history(
    replicas: Any, tmp_path: Path, pg_url: str, clock: Any
) -> None:
    ids = _fleet(replicas, tmp_path)
    own = offline_config(tmp_path / "host0", hygiene={"ledger_url": pg_url, "clock": clock})
    alone = audit(own)
    assert alone.get("POINTS_WITHOUT_HISTORY").examples[0].startswith(ids["b"])  # host1 wrote it
    both = dict(own, hygiene={**own["hygiene"], "history_dbs": [str(tmp_path / "host1" / "history.db")]})
    report = audit(both)
    assert report.get("POINTS_WITHOUT_HISTORY") is None and report.get("MEMORIES_LOST") is None
    assert report.get("MEMORIES_RESURRECTED") is None and report.skipped == ()
    activity = report.get("HISTORY_ACTIVITY")
    assert activity.title.startswith("2 history.db files hold 4 change rows")
    assert activity.details["rows_by_host"] == {"host0": 2, "host1": 2}
    text = report.get("DELETED_TEXT_IN_HISTORY")  # host0 kept the ADD's text, host1 the DELETE's
    assert text.count == 1 and text.details["rows_by_host"] == {"host0": 1, "host1": 1}
    assert text.examples == (
        f"host0: {ids['gone']}: Dana is in Lisbon this month",
        f"host1: {ids['gone']}: Dana is in Lisbon this month",
    )
    histories = [loc for loc in report.locations if loc["role"] == "history_db"]
    assert [(loc["path"], loc["note"]) for loc in histories] == [
        (str(tmp_path / "host0" / "history.db"), "host host0"),
        (str(tmp_path / "host1" / "history.db"), "host host1"),
    ]


def test_a_hosts_history_db_that_cannot_be_read_skips_the_checks_that_need_every_host(
    replicas: Any, tmp_path: Path, pg_url: str, clock: Any
) -> None:
    _fleet(replicas, tmp_path)
    far = tmp_path / "far" / "history.db"
    cfg = offline_config(
        tmp_path / "host0", hygiene={"ledger_url": pg_url, "clock": clock, "history_dbs": [f"edge-1={far}"]}
    )
    report = audit(cfg)
    skipped = {s.code: s.reason for s in report.skipped}
    assert set(skipped) == {"MEMORIES_LOST", "POINTS_WITHOUT_HISTORY", "MEMORIES_RESURRECTED"}
    assert skipped["MEMORIES_LOST"] == f"edge-1: mem0's history.db was not found at {far}"
    assert report.get("HISTORY_ACTIVITY").count == 2  # host0's own file is still read (its two ADDs)
    assert report.get("STORE_MISSING").examples == (str(far),)


def test_history_db_repeats_on_the_command_line_with_labels_and_where_lists_every_file(
    replicas: Any, tmp_path: Path, pg_url: str
) -> None:
    ids = _fleet(replicas, tmp_path)
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(offline_config(tmp_path / "host0", hygiene={"ledger_url": pg_url})))
    out = CliRunner().invoke(
        cli,
        [
            "audit",
            "--config",
            str(cfg),
            "--json",
            "--history-db",
            f"berlin={tmp_path / 'host0' / 'history.db'}",
            "--history-db",
            f"paris={tmp_path / 'host1' / 'history.db'}",
        ],
    )
    report = json.loads(out.stdout)
    found = {f["code"]: f for f in report["findings"]}
    assert "POINTS_WITHOUT_HISTORY" not in found and report["skipped"] == []
    assert found["DELETED_TEXT_IN_HISTORY"]["examples"][1].startswith(f"paris: {ids['gone']}")
    fix = found["DELETED_TEXT_IN_HISTORY"]["fix"]  # the other commands take this host's own file, unlabelled
    assert f"--history-db {tmp_path / 'host0' / 'history.db'}\n#" in fix and "paris" not in fix
    assert [loc["note"] for loc in report["locations"] if loc["role"] == "history_db"] == ["host berlin", "host paris"]
    cfg.write_text(
        json.dumps(
            offline_config(
                tmp_path / "host0",
                hygiene={"ledger_url": pg_url, "history_dbs": [str(tmp_path / "host1" / "history.db")]},
            )
        )
    )
    where = CliRunner().invoke(cli, ["where", "--config", str(cfg), "--json"])
    assert where.exit_code == 0, where.output
    paths = [loc["path"] for loc in json.loads(where.stdout)["locations"] if loc["role"] == "history_db"]
    assert paths == [str(tmp_path / "host0" / "history.db"), str(tmp_path / "host1" / "history.db")]
