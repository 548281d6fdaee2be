"""The CLI on every vector store: a store plain mem0 filled (two facts, one past its mem0 expiry, one a tool wrote,
one holding an AWS key) gives the same findings and counts on local Qdrant, pgvector, Chroma and FAISS for each
command; a provider mem0 has but mem0-hygiene cannot read makes the audit incomplete (exit 4), never clean, and
the other commands stop with one line naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene.cli import cli

from .plain_fill import AWS_KEY, MEMORIES, PlainStore, fill_plain

EXPIRED = MEMORIES[2][0]
SECRET = MEMORIES[4][0]


def config_file(store: PlainStore, folder: Path) -> str:
    """The store's config as the JSON file the CLI reads (the CLI runs on the real clock: the expiry is long past)."""
    config = json.loads(json.dumps({**store.config, "hygiene": {}}))
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def as_json(*args: str) -> Any:
    result = run(*args, "--json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def findings(doc: dict[str, Any]) -> dict[str, int]:
    return {f["code"]: f["count"] for f in doc["findings"] if f["code"] != "STORE_UNDER_TMP"}


def test_the_reading_commands_give_the_same_answers_on_every_store(provider_config: Any, tmp_path: Path) -> None:
    store = fill_plain(provider_config())
    config = config_file(store, tmp_path)

    audit = run("audit", "--json", "--config", config)
    assert audit.exit_code == 1, audit.output  # the AWS key is an error
    doc = json.loads(audit.stdout)
    assert findings(doc) == {
        "SECRET_IN_MEMORY": 1,
        "EXPIRED_NOT_PRUNED": 1,
        "BACKUP_LAST_VERIFIED": 0,
        "HISTORY_ACTIVITY": 5,
        "LEDGER_MISSING": 0,
    }
    assert doc["stats"]["memories_in_vector_store"] == len(MEMORIES)
    assert "vector_store_unsupported" not in doc["stats"]
    assert not any("not supported" in s["reason"] or "cannot read" in s["reason"] for s in doc["skipped"])

    pruned = as_json("prune", "--dry-run", "--config", config)
    assert [(m["memory_id"], m["reason"]) for m in pruned["memories"]] == [(store.ids[EXPIRED], "expired")]
    plan = as_json("consolidate", "--dry-run", "--config", config)
    assert (plan["memories"], plan["scopes"]) == (len(MEMORIES) - 1, 1)  # the expired one is not live
    assert as_json("review", "--list", "--config", config)["items"] == []
    digest = as_json("digest", "--config", config)
    assert digest["counts"] == {"unknown": len(MEMORIES)}
    assert {i["memory_id"] for i in digest["items"]} == set(store.ids.values())
    assert AWS_KEY not in json.dumps(digest)  # redacted
    where = run("where", "--config", config)
    assert where.exit_code == 0 and "vector_store" in where.output
    assert "password" not in where.output.lower()


def test_adopt_prune_and_forget_scrub_work_alike_on_every_store(provider_config: Any, tmp_path: Path) -> None:
    store = fill_plain(provider_config())
    config = config_file(store, tmp_path)

    adopted = run("adopt", "--config", config)
    assert adopted.exit_code == 0, adopted.output
    after_adopt = json.loads(run("audit", "--json", "--config", config).stdout)
    assert after_adopt["stats"]["memories_in_vector_store"] == len(MEMORIES)
    assert "UNTRACKED_MEMORIES" not in findings(after_adopt)

    pruned = as_json("prune", "--config", config)
    assert [m["memory_id"] for m in pruned["memories"]] == [store.ids[EXPIRED]]
    assert run("prune", "--dry-run", "--json", "--config", config).exit_code == 0
    assert as_json("prune", "--dry-run", "--config", config)["memories"] == []

    forgotten = run("forget", store.ids[SECRET], "--scrub", "--json", "--config", config)
    result = json.loads(forgotten.stdout)
    assert store.ids[SECRET] in result["deleted"]
    vector_checks = [f for f in result["files"] if f["role"] == "vector_store"]
    assert vector_checks, "the vector store's data was checked"
    assert all(f["clean"] for f in vector_checks), vector_checks
    assert forgotten.exit_code == 0, forgotten.output

    final = json.loads(run("audit", "--json", "--config", config).stdout)
    assert final["stats"]["memories_in_vector_store"] == len(MEMORIES) - 2
    assert "SECRET_IN_MEMORY" not in findings(final) and "EXPIRED_NOT_PRUNED" not in findings(final)


def test_a_provider_mem0_has_but_the_seam_lacks_makes_the_audit_incomplete(tmp_path: Path, clock: Any) -> None:
    from .stores import store_config

    store = fill_plain(store_config("qdrant", tmp_path, hygiene={"clock": clock}))  # any store: milvus replaces it
    store.config["vector_store"] = {
        "provider": "milvus",
        "config": {"url": "http://127.0.0.1:1", "collection_name": "m"},
    }
    config = config_file(store, tmp_path)

    audit = run("audit", "--config", config)
    assert audit.exit_code == 4, audit.output
    verdict = next(line for line in audit.output.splitlines() if "Verdict" in line)
    assert "incomplete" in verdict and "clean" not in verdict
    assert "cannot read a 'milvus' vector store" in audit.output
    quiet = run("audit", "--json", "--config", config)
    assert quiet.exit_code == 4 and "incomplete" in quiet.stderr
    assert json.loads(quiet.stdout)["stats"]["vector_store_unsupported"].startswith("mem0-hygiene cannot read")

    for command in (["prune", "--dry-run"], ["review", "--list"], ["consolidate", "--dry-run"], ["adopt"]):
        result = CliRunner().invoke(cli, [*command, "--config", config])
        assert result.exit_code == 3, (command, result.output)
        lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1 and "'milvus'" in lines[0] and "unexpected" not in lines[0], result.output


def test_backup_and_restore_put_every_store_back_as_it_was(provider_config: Any, tmp_path: Path) -> None:
    store = fill_plain(provider_config())
    config = config_file(store, tmp_path)
    before = json.loads(run("audit", "--json", "--config", config).stdout)

    backed = run("backup", str(tmp_path / "backups"), "--json", "--config", config)
    assert backed.exit_code == 0, backed.output
    made = json.loads(backed.stdout)
    assert sum(made["counts"]["points"].values()) == len(MEMORIES)
    assert "password" not in backed.stdout.lower()

    forgotten = run("forget", store.ids[SECRET], "--config", config)
    assert forgotten.exit_code == 0, forgotten.output
    assert json.loads(run("audit", "--json", "--config", config).stdout)["stats"]["memories_in_vector_store"] == 4

    restored = run("restore", made["path"], "--yes", "--config", config)
    assert restored.exit_code == 0, restored.output
    after = json.loads(run("audit", "--json", "--config", config).stdout)
    assert after["stats"]["memories_in_vector_store"] == len(MEMORIES)
    copies = ("BACKUP_LAST_VERIFIED", "STORE_COPIES")  # the backup set and the stores the restore put aside
    assert {k: v for k, v in findings(after).items() if k not in copies} == {
        k: v for k, v in findings(before).items() if k not in copies
    }
    assert "STORE_COPIES" in findings(after)
    digest = as_json("digest", "--config", config)
    assert {i["memory_id"] for i in digest["items"]} == set(store.ids.values())


def test_the_library_audit_reads_the_apps_own_open_store_in_process(provider_config: Any) -> None:
    from mem0_hygiene import Memory, audit

    m = Memory.from_config(provider_config())
    try:
        for text, _extra in MEMORIES[:2]:
            m.add(text, user_id="dana", infer=False, source="chat")
        report = audit(m)
    finally:
        m.close()
    assert report.stats["memories_in_vector_store"] == 2
    assert "vector_store_unsupported" not in report.stats
    assert not [s for s in report.skipped if "vector store" in s.reason or "points" in s.reason]
