"""A store plain mem0 wrote, met by the CLI on the first command: a wrong collection name is told apart from lost
memories, mem0's own ``expiration_date`` counts as expiry without a ledger, and the fixes name ``adopt``."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene.cli import cli
from mem0_hygiene.config import build_mem0_config, offline_config, split_config


def plain_store(folder: Path, *, collection: str = "memories", expired: int = 3, live: int = 4) -> dict[str, Any]:
    """Fill a store with plain mem0 (never the drop-in): ``live`` memories and ``expired`` ones whose mem0
    ``expiration_date`` has passed. Returns the config."""
    from mem0 import Memory as Mem0Memory

    config = offline_config(folder, collection=collection)
    m = Mem0Memory(build_mem0_config(split_config(config)[0]))
    try:
        for i in range(live):
            m.add(f"Dana likes board game number {i}", user_id="dana", infer=False)
        for i in range(expired):
            m.add(
                f"Dana is travelling to city {i} this week",
                user_id="dana",
                infer=False,
                expiration_date="2026-01-0" + str(i + 1),
            )
    finally:
        m.close()
        m.vector_store.client.close()
    return config


def store_args(folder: Path, collection: str | None = None) -> list[str]:
    args = ["--qdrant-path", str(folder / "qdrant"), "--history-db", str(folder / "history.db")]
    return args + (["--collection", collection] if collection else [])


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@pytest.mark.parametrize(
    "command", [["audit"], ["prune"], ["prune", "--dry-run"], ["digest"], ["review", "--list"], ["adopt"], ["where"]]
)
def test_a_wrong_collection_name_is_named_with_the_ones_the_store_holds_not_read_as_lost_memories(tmp_path, command):
    plain_store(tmp_path)
    before = fingerprint(tmp_path)
    result = invoke(*command, *store_args(tmp_path))  # the collection left at its default, "mem0"
    assert result.exit_code == 2, result.output
    assert "has no collection 'mem0'; it holds 'memories'" in result.output
    assert "--collection memories" in result.output
    assert "MEMORIES_LOST" not in result.output and "restore" not in result.output.lower()
    assert fingerprint(tmp_path) == before  # nothing read into being: no ledger, no empty collection
    assert not (tmp_path / "hygiene.db").exists()


def test_the_library_audit_refuses_a_wrong_collection_before_any_finding(tmp_path):
    from mem0_hygiene import audit
    from mem0_hygiene.errors import CollectionNotFound

    config = plain_store(tmp_path)
    config["vector_store"]["config"]["collection_name"] = "mem0"
    with pytest.raises(CollectionNotFound) as caught:
        audit(config)
    assert caught.value.present == ["memories"] and caught.value.collection == "mem0"


def test_mem0s_own_expiration_date_is_expiry_for_the_audit_without_a_ledger(tmp_path):
    plain_store(tmp_path, expired=3)
    result = invoke("audit", "--json", *store_args(tmp_path, "memories"))
    report = json.loads(result.stdout)
    codes = {f["code"]: f for f in report["findings"]}
    assert codes["EXPIRED_NOT_PRUNED"]["count"] == 3
    assert all("mem0 expiration_date 2026-01-0" in e for e in codes["EXPIRED_NOT_PRUNED"]["examples"])
    assert "EXPIRED_NOT_PRUNED" not in {s["code"] for s in report["skipped"]}
    fix = codes["LEDGER_MISSING"]["fix"]
    assert fix.startswith(f"mem0-hygiene adopt --qdrant-path {tmp_path / 'qdrant'}")
    assert "--collection memories" in fix
    ledger_skips = [s for s in report["skipped"] if s["area"] == "ledger"]
    assert ledger_skips and all("mem0-hygiene adopt --qdrant-path" in s["reason"] for s in ledger_skips)
    assert not (tmp_path / "hygiene.db").exists()


def test_prune_dry_run_lists_what_mem0_considers_expired_and_creates_nothing(tmp_path):
    plain_store(tmp_path, expired=3, live=4)
    before = fingerprint(tmp_path)
    result = invoke("prune", "--dry-run", "--json", *store_args(tmp_path, "memories"))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["count"] == 3 and data["by_reason"] == {"expired": 3}
    assert data["adopted"] == 7 and data["ledger_created"] == str(tmp_path / "hygiene.db")
    assert fingerprint(tmp_path) == before and not (tmp_path / "hygiene.db").exists()


def test_prune_deletes_mem0_expired_memories_through_mem0_and_says_it_created_the_ledger(tmp_path):
    plain_store(tmp_path, expired=3, live=4)
    result = invoke("prune", *store_args(tmp_path, "memories"))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "deleted 3 memories (3 expired)" in text
    assert f"created the ledger at {tmp_path / 'hygiene.db'}" in text
    with sqlite3.connect(tmp_path / "history.db") as conn:  # each delete went through mem0: history says so
        deleted = conn.execute("SELECT COUNT(*) FROM history WHERE event = 'DELETE'").fetchone()[0]
    assert deleted == 3
    again = json.loads(invoke("prune", "--json", *store_args(tmp_path, "memories")).stdout)
    assert again["count"] == 0 and again["ledger_created"] is None and again["adopted"] == 0
    report = json.loads(invoke("audit", "--json", *store_args(tmp_path, "memories")).stdout)
    assert "EXPIRED_NOT_PRUNED" not in {f["code"] for f in report["findings"]}


def test_fix_lines_name_the_real_ids_never_a_placeholder(tmp_path):
    import re

    from mem0 import Memory as Mem0Memory

    config = plain_store(tmp_path, expired=1, live=1)
    m = Mem0Memory(build_mem0_config(split_config(config)[0]))
    try:
        key = m.add("The deploy token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", user_id="dana", infer=False)[
            "results"
        ][0]["id"]
        tool = m.add([{"role": "tool", "content": "Always deploy on Fridays"}], user_id="dana", infer=False)["results"][
            0
        ]["id"]
    finally:
        m.close()
        m.vector_store.client.close()
    report = json.loads(invoke("audit", "--json", *store_args(tmp_path, "memories")).stdout)
    fixes = {f["code"]: f["fix"] for f in report["findings"]}
    assert f"mem0-hygiene forget {key} --scrub --qdrant-path" in fixes["SECRET_IN_MEMORY"]
    assert f"mem0-hygiene confirm {tool} --qdrant-path" in fixes["TOOL_SOURCED"]
    for code, fix in fixes.items():
        assert not re.search(r"\b(ID|MEMORY_ID|OLD_ID)\b", fix), (code, fix)
