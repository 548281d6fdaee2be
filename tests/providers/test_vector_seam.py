"""The provider seam (mem0_hygiene.stores.vector) on every provider, over a store plain mem0 filled: paging,
counting, lookups by id and by payload field, vectors, snapshot and restore verified, the raw-data check an
erasure uses, and one clear refusal for a provider without a module."""

from __future__ import annotations

from typing import Any

import pytest

from mem0_hygiene.errors import BackupError
from mem0_hygiene.stores.vector import UnsupportedVectorStore, for_target, open_vector_store
from mem0_hygiene.target import resolve

from .plain_fill import AWS_KEY, MEMORIES, fill_plain


def test_the_seam_pages_counts_and_finds_what_plain_mem0_wrote(provider_config: Any) -> None:
    store = fill_plain(provider_config())
    with for_target(resolve(store.config)) as vs:
        assert vs.exists()
        assert vs.count() == len(MEMORIES)
        pages = list(vs.pages(page_size=2))
        assert [len(p) for p in pages] == [2, 2, 1]
        assert {p["id"] for page in pages for p in page} == set(store.ids.values())
        texts = {p["payload"]["data"] for page in pages for p in page}
        assert texts == {text for text, _ in MEMORIES}
        one = store.ids[MEMORIES[0][0]]
        got = vs.get([one, "00000000-0000-0000-0000-000000000000"], with_vectors=True)
        assert list(got) == [one] and got[one]["payload"]["user_id"] == "dana"
        assert len(got[one]["vector"] if not isinstance(got[one]["vector"], str) else got[one]["vector"].split(","))
        assert {p["id"] for p in vs.find(user_id="dana")} == set(store.ids.values())
        assert vs.find(user_id="nobody") == []
        assert "password" not in vs.describe() and vs.provider in vs.describe()


def test_a_snapshot_restores_the_store_as_it_was_verified_by_count_and_checksum(provider_config: Any, tmp_path) -> None:
    store = fill_plain(provider_config())
    target = resolve(store.config)
    with for_target(target) as vs:
        before = vs.checksum()
        snap = vs.snapshot(str(tmp_path / "snap"))
        assert (snap.count, snap.checksum) == before
    fill_plain(store.config, (("Dana moved to Bergen", {}),))
    with for_target(target) as vs:
        assert vs.count() == len(MEMORIES) + 1
        restored = vs.restore(snap)
        assert (restored.count, restored.checksum) == before
    with for_target(target) as vs:
        assert vs.checksum() == before


def test_a_snapshot_folder_that_exists_is_refused_and_left_alone(provider_config: Any, tmp_path) -> None:
    store = fill_plain(provider_config())
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "mine.txt").write_text("keep")
    with for_target(resolve(store.config)) as vs, pytest.raises(BackupError, match="already exists"):
        vs.snapshot(str(tmp_path / "snap"))
    assert (tmp_path / "snap" / "mine.txt").read_text() == "keep"


def test_the_raw_data_check_finds_a_secret_until_mem0_deletes_it(provider_config: Any) -> None:
    from mem0 import Memory as PlainMemory

    from mem0_hygiene.config import build_mem0_config, split_config

    from .plain_fill import close_plain

    store = fill_plain(provider_config())
    target = resolve(store.config)
    with for_target(target) as vs:
        assert vs.holds_text(AWS_KEY)
    plain = PlainMemory(build_mem0_config(split_config(store.config)[0]))
    try:
        plain.delete(store.ids[MEMORIES[4][0]])
    finally:
        close_plain(plain)
    with for_target(target) as vs:
        assert vs.count() == len(MEMORIES) - 1
        if vs.provider == "pgvector" or vs.provider == "faiss":  # rewritten in place: the bytes are gone
            assert vs.holds_text(AWS_KEY) == []


def test_a_provider_without_a_module_is_refused_naming_it_and_what_to_do() -> None:
    with pytest.raises(UnsupportedVectorStore) as caught:
        open_vector_store("milvus", {"url": "http://localhost:19530"}, "mem0")
    message = str(caught.value)
    assert "'milvus'" in message and "qdrant, pgvector, chroma, faiss" in message and "export or backup" in message


def test_the_seam_reads_each_stores_search_score_as_the_cosine(provider_config: Any) -> None:
    from mem0 import Memory as PlainMemory

    from mem0_hygiene.config import build_mem0_config, split_config
    from mem0_hygiene.offline import embed_text

    from .plain_fill import close_plain

    store = fill_plain(provider_config())
    query = "how does Dana deploy"
    plain = PlainMemory(build_mem0_config(split_config(store.config)[0]))
    try:
        hits = plain.vector_store.search(query=query, vectors=embed_text(query), top_k=1)
    finally:
        close_plain(plain)
    top = hits[0]
    with for_target(resolve(store.config)) as vs:
        stored = vs.get([str(top.id)], with_vectors=True)[str(top.id)]["vector"]
        expected = sum(a * b for a, b in zip(embed_text(query), stored))
        assert vs.cosine(top.score) == pytest.approx(expected, abs=1e-3)


def test_field_pages_give_what_the_payloads_hold_for_those_keys_whatever_their_type(provider_config: Any) -> None:
    """The audit reads seven payload keys through ``field_pages`` (pgvector: in SQL, ``payload->>key``); a value
    that is not a string (a bool, a number: SQL would give 'true', '2.5') comes as the payload holds it."""
    from mem0_hygiene.auditing.scratch import POINT_KEYS

    odd = (
        ("Dana keeps a spare key", {"metadata": {"expiration_date": True}}),
        ("Dana keeps two spare keys", {"metadata": {"expiration_date": 2.5}}),
    )
    store = fill_plain(provider_config(), MEMORIES + odd)
    with for_target(resolve(store.config)) as vs:
        pages = list(vs.field_pages(POINT_KEYS, page_size=4))
        expected = {p["id"]: (p["id"], *[p["payload"].get(k) for k in POINT_KEYS]) for page in vs.pages() for p in page}
    assert [len(p) for p in pages] == [4, 3]
    assert {row[0]: row for page in pages for row in page} == expected
    when = POINT_KEYS.index("expiration_date") + 1
    assert [expected[store.ids[text]][when] for text, _ in odd] == [True, 2.5]
