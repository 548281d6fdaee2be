"""migrate from local Qdrant into every provider: the plan (points per scope, the destination empty, the same
embedder), the copy verified by count, checksum and sampled queries, the new store serving what the old one
served (chain, invalidation, tombstone), the old store untouched and registered as a copy until
``remove_migration_source`` deletes it, a rerun that writes nothing, and a non-empty destination refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.errors import ConfigError
from mem0_hygiene.maintenance import export, migrate, remove_migration_source
from mem0_hygiene.stores.copies import list_copies
from mem0_hygiene.target import resolve

from .stores import unique_collection
from .test_portable_every_store import fill, lines


def test_migrate_copies_every_memory_into_each_provider_verified(
    provider_config: Any, tmp_path: Path, clock: Any
) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})
    ids = fill(source)
    before = export(source, str(tmp_path / "before.jsonl"), with_vectors=True)
    target = provider_config(tmp_path / "b")

    plan = migrate(source, target, dry_run=True)
    assert plan.to_dict()["problems"] == []
    assert (plan.points, plan.ledger_rows, plan.destination_points) == (4, 5, 0)
    assert plan.scopes == {"user_id=alice": 3, "agent_id=ops": 1}

    result = migrate(source, target)
    doc = result.to_dict()
    assert (doc["verified"], doc["points"]) == (True, 4)
    assert doc["queries"] == doc["queries_agreeing"] == 4

    after = export(source, str(tmp_path / "after.jsonl"), with_vectors=True)
    assert lines(Path(after.path)) == lines(Path(before.path))  # the source is untouched
    texts = export(source, str(tmp_path / "texts.jsonl"))  # without vectors: each provider keeps floats its way
    moved = export(target, str(tmp_path / "moved.jsonl"))
    assert lines(Path(moved.path))[1] == lines(Path(texts.path))[1]

    m = Memory.from_config(target)
    try:
        served = {r["id"] for r in m.get_all(filters={"user_id": "alice"})["results"]}
        assert served == {ids["new"]}
    finally:
        m.close()

    dst = resolve(target)
    copies = {c.path for c in list_copies(dst.ledger_path, dst.history_path) if c.kind == "migration_source"}
    assert copies == {
        str(tmp_path / "a" / "qdrant"),
        str(tmp_path / "a" / "history.db"),
        str(tmp_path / "a" / "hygiene.db"),
    }
    assert migrate(source, target, dry_run=True).resuming == "complete"  # a rerun finds it done

    listed = remove_migration_source(target, dry_run=True)
    assert {p for p, _role, _size in listed.paths} == copies and (tmp_path / "a" / "qdrant").exists()
    remove_migration_source(target)
    assert not (tmp_path / "a" / "qdrant").exists() and not (tmp_path / "a" / "hygiene.db").exists()
    assert not [c for c in list_copies(dst.ledger_path, dst.history_path) if c.kind == "migration_source"]


def test_a_destination_holding_other_memories_is_refused(provider_config: Any, tmp_path: Path, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})
    fill(source)
    target = provider_config(tmp_path / "b")
    m = Memory.from_config(target)
    m.add("someone else's fact", user_id="bob", infer=False)
    m.close()
    with pytest.raises(ConfigError, match=r"the destination is not empty \(1 point"):
        migrate(source, target)


def test_forget_scrub_on_the_new_store_erases_the_text_from_the_old_local_qdrant_copy(
    provider_config: Any, tmp_path: Path, clock: Any
) -> None:
    name = unique_collection()  # the same name on both sides: the old copy is scrubbed under the new name
    source = offline_config(tmp_path / "a", collection=name, hygiene={"clock": clock})
    m = Memory.from_config(source)
    secret = m.add("the vault code is zebra-77-omega", user_id="dana", infer=False)["results"][0]["id"]
    m.add("Dana likes tea", user_id="dana", infer=False)
    m.close()
    target = provider_config(tmp_path / "b", collection=name)
    assert not [n for n in migrate(source, target, dry_run=True).notes if "forget --scrub" in n]
    migrate(source, target)

    m = Memory.from_config(target)
    try:
        result = m.forget([secret], scrub=True)
    finally:
        m.close()
    assert result.to_dict()["verified"] is True, [f for f in result.to_dict()["files"] if not f.get("clean", True)]
    old = tmp_path / "a"
    assert not [p for p in old.rglob("*") if p.is_file() and b"zebra-77-omega" in p.read_bytes()]


def test_forget_scrub_erases_the_text_from_an_old_copy_whose_collection_was_renamed(tmp_path: Path, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})  # collection "mem0"
    m = Memory.from_config(source)
    secret = m.add("the vault code is zebra-77-omega", user_id="dana", infer=False)["results"][0]["id"]
    m.add("Dana likes tea", user_id="dana", infer=False)
    m.close()
    renamed = offline_config(tmp_path / "b", collection="memories", hygiene={"clock": clock})
    assert not [n for n in migrate(source, renamed, dry_run=True).notes if "forget --scrub" in n]
    migrate(source, renamed)

    m = Memory.from_config(renamed)
    try:
        result = m.forget([secret], scrub=True)
    finally:
        m.close()
    assert result.to_dict()["verified"] is True, [f for f in result.to_dict()["files"] if not f.get("clean", True)]
    assert not [p for p in (tmp_path / "a").rglob("*") if p.is_file() and b"zebra-77-omega" in p.read_bytes()]
    m = Memory.from_config(source)  # the old store still opens, the other memory in it
    try:
        assert [r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"]] == ["Dana likes tea"]
    finally:
        m.close()


def test_a_new_collection_in_the_same_faiss_folder_is_never_removed_as_the_old_store(
    tmp_path: Path, clock: Any
) -> None:
    pytest.importorskip("faiss", reason="FAISS is the store here: pip install -e '.[stores]'")
    from .stores import store_config

    source = store_config("faiss", tmp_path / "a", hygiene={"clock": clock})
    m = Memory.from_config(source)
    m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    m.close()
    beside = store_config("faiss", tmp_path / "b", hygiene={"clock": clock})
    beside["vector_store"]["config"]["path"] = source["vector_store"]["config"]["path"]  # one folder, two collections
    beside["vector_store"]["config"]["collection_name"] = "mem0_v2"
    result = migrate(source, beside)

    folder = source["vector_store"]["config"]["path"]
    assert folder not in result.copies  # the shared folder is the live store, not a copy of the old one
    removal = remove_migration_source(beside)
    assert folder not in [p for p, _role, _size in removal.paths]
    m = Memory.from_config(beside)
    try:
        assert [r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"]] == [
            "Dana deploys with Kubernetes"
        ]
    finally:
        m.close()


def test_remove_source_refuses_a_registered_source_that_holds_the_live_store(tmp_path: Path, clock: Any) -> None:
    from mem0_hygiene.stores.copies import copies_path_for, register_copy

    config = offline_config(tmp_path / "app", hygiene={"clock": clock})
    m = Memory.from_config(config)
    m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    m.close()
    tgt = resolve(config)
    registry = copies_path_for(tgt.ledger_path, tgt.history_path)
    register_copy(registry, "migration_source", str(tmp_path / "app"), roles=("vector_store",), created_at="t")

    with pytest.raises(ConfigError, match="removing it would remove the live store. Nothing was deleted"):
        remove_migration_source(config)
    assert (tmp_path / "app" / "qdrant").is_dir() and (tmp_path / "app" / "history.db").is_file()
