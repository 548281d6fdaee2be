"""The drop-in records which embedder makes a store's vectors when it opens the store empty, and says so at the next
start (and in the audit) when the config names another one; a store plain mem0 filled is left unrecorded."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, audit, offline_config
from mem0_hygiene.offline import DEFAULT_DIMS
from mem0_hygiene.stores.embedder_record import recorded_embedder


def config_with_model(folder: Path, clock: Any, model: str) -> dict[str, Any]:
    config = offline_config(folder, hygiene={"clock": clock})
    config["embedder"]["config"] = {**(config["embedder"].get("config") or {}), "model": model}
    return config


def test_a_store_opened_empty_gets_its_embedder_recorded(tmp_path: Path, clock: Any) -> None:
    m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v1"))
    try:
        recorded = recorded_embedder(m.ledger)
        assert m.store_warnings == []
    finally:
        m.close()
    assert recorded is not None
    assert (recorded["provider"], recorded["model"]) == ("offline", "offline-v1")
    assert recorded["dims"] == str(DEFAULT_DIMS)  # the length mem0 made the collection with


def test_another_model_in_the_config_is_named_at_the_next_start_and_by_the_audit(
    tmp_path: Path, clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v1"))
    m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    m.close()

    changed = config_with_model(tmp_path, clock, "offline-v2")  # same vector length: mem0 would answer, wrongly
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = Memory.from_config(changed)
    try:
        assert len(m.store_warnings) == 1
        warning = m.store_warnings[0]
        assert "model offline-v1 -> offline-v2" in warning and "migrate --to NEW_CONFIG --reembed" in warning
        assert warning in caplog.text
        assert recorded_embedder(m.ledger)["model"] == "offline-v1"  # type: ignore[index]  # kept: it is the truth
    finally:
        m.close()
    found = [f for f in audit(changed).findings if f.code == "EMBEDDER_MISMATCH"]
    assert len(found) == 1 and "model offline-v1 -> offline-v2" in found[0].title


def test_the_same_embedder_at_the_next_start_says_nothing(tmp_path: Path, clock: Any) -> None:
    for _ in range(2):
        m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v1"))
        try:
            m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
            assert m.store_warnings == []
        finally:
            m.close()
    assert "EMBEDDER_MISMATCH" not in {f.code for f in audit(config_with_model(tmp_path, clock, "offline-v1")).findings}


def test_the_audit_of_a_live_memory_compares_the_embedder_its_own_config_names(tmp_path: Path, clock: Any) -> None:
    # the MCP server's audit resource audits its open Memory: no config dict, so mem0's default (openai) was compared
    m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v1"))
    try:
        m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
        assert "EMBEDDER_MISMATCH" not in {f.code for f in audit(m).findings}
    finally:
        m.close()
    m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v2"))
    try:
        found = [f for f in audit(m).findings if f.code == "EMBEDDER_MISMATCH"]
    finally:
        m.close()
    assert len(found) == 1 and "model offline-v1 -> offline-v2" in found[0].title


def test_a_store_plain_mem0_filled_is_not_claimed_for_the_configured_embedder(
    tmp_path: Path, clock: Any, plain_mem0: Any, close_plain: Any
) -> None:
    plain = plain_mem0(tmp_path)
    plain.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    close_plain(plain)

    m = Memory.from_config(config_with_model(tmp_path, clock, "offline-v1"))
    try:
        assert recorded_embedder(m.ledger) is None  # which model made those vectors is not known here
        assert m.store_warnings == []
    finally:
        m.close()
