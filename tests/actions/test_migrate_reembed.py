"""migrate --reembed: every text embedded by the destination's embedder (here vectors of another length, so a
new collection), the ledger's states, chains and tombstones kept, and the new store answering searches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mem0_hygiene import Memory, audit, offline_config
from mem0_hygiene.maintenance import migrate
from mem0_hygiene.stores.embedder_record import recorded_embedder
from mem0_hygiene.stores.vector import open_vector_store


def test_reembedding_into_another_vector_length_keeps_states_chains_and_tombstones(tmp_path: Path, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})
    m = Memory.from_config(source)
    try:
        old = m.add("Dana deploys with Docker Compose", user_id="dana", infer=False)["results"][0]["id"]
        new = m.supersede(old, "Dana deploys with Kubernetes now", source="chat")
        gone = m.add("The printer code is 4411", user_id="dana", infer=False)["results"][0]["id"]
        m.add("Dana drinks green tea", user_id="dana", infer=False)
        m.delete(gone)
    finally:
        m.close()
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    target["embedder"]["config"] = {"embedding_dims": 64}
    target["vector_store"]["config"]["embedding_model_dims"] = 64

    plan = migrate(source, target, dry_run=True)
    assert any("pass --reembed" in p for p in plan.problems)
    result = migrate(source, target, reembed=True)
    assert result.to_dict()["verified"] and result.queries == 0  # re-embedded: answers are not compared

    with open_vector_store("qdrant", target["vector_store"]["config"], "mem0") as store:
        assert {len(p["vector"]) for page in store.pages(with_vectors=True) for p in page} == {64}
    m = Memory.from_config(target)
    try:
        assert m.ledger.get(old).superseded_by == new  # type: ignore[union-attr]
        assert m.ledger.get(gone).deleted_at  # type: ignore[union-attr]
        found = m.search("how does Dana deploy", filters={"user_id": "dana"}, top_k=5)["results"]
        assert [r["memory"] for r in found][:1] == ["Dana deploys with Kubernetes now"]
        assert old not in {r["id"] for r in found} and gone not in {r["id"] for r in found}
    finally:
        m.close()


def test_the_audit_reports_vectors_of_another_embedder_than_the_config_names(tmp_path: Path, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})
    m = Memory.from_config(source)
    m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    m.close()
    target = offline_config(tmp_path / "b", hygiene={"clock": clock})
    target["embedder"]["config"] = {"embedding_dims": 64}
    target["vector_store"]["config"]["embedding_model_dims"] = 64
    migrate(source, target, reembed=True)

    m = Memory.from_config(target)
    try:
        recorded = recorded_embedder(m.ledger)
    finally:
        m.close()
    assert recorded is not None and (recorded["provider"], recorded["dims"]) == ("offline", "64")
    assert "EMBEDDER_MISMATCH" not in {f.code for f in audit(target).findings}

    stale = offline_config(tmp_path / "b", hygiene={"clock": clock})  # the old embedder's length, 256
    stale["vector_store"]["config"]["embedding_model_dims"] = 256
    found = [f for f in audit(stale).findings if f.code == "EMBEDDER_MISMATCH"]
    assert len(found) == 1 and "dims 64 -> 256" in found[0].title
