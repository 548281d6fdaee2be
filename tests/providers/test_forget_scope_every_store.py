"""forget --user on every vector store: the person's memories, turns and texts are gone and verified (raw bytes of
Chroma's and FAISS's files, a query on pgvector's table, local Qdrant's folder), another user's are kept, and the
receipt checks clean afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mem0_hygiene import Memory
from mem0_hygiene.actions.forget_scope import forget_scope, verify_receipt

SECRET = "Dana's passport number is X1234567"
BOB = "Bob works on the billing service"


def test_forget_user_is_verified_and_keeps_other_users_on_every_store(provider_config: Any, tmp_path: Path) -> None:
    m = Memory.from_config(provider_config())
    try:
        m.add(SECRET, user_id="dana", infer=False, source="chat")
        m.add("Dana likes green tea", user_id="dana", infer=False)
        bob = m.add(BOB, user_id="bob", infer=False)["results"][0]["id"]
        m.db.save_messages([{"role": "user", "content": f"by the way, {SECRET}"}], "user_id=dana")

        result = forget_scope(m, user_id="dana")

        assert result.verified, result.to_dict()
        assert len(result.memory_ids) == 2 and result.messages_removed == 1
        assert m.get_all(filters={"user_id": "dana"})["results"] == []
        assert [r["id"] for r in m.get_all(filters={"user_id": "bob"})["results"]] == [bob]
        assert not verify_receipt(m, result.receipt or "").came_back
        store_files = [p for p in tmp_path.rglob("*") if p.is_file()]  # receipts included
        assert [p for p in store_files if SECRET.encode() in p.read_bytes()] == []
    finally:
        m.close()
