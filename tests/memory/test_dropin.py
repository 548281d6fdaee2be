"""Drop-in: code written for mem0.Memory runs unchanged and gets the same answers."""

from __future__ import annotations

from typing import Any

import mem0
import pytest

import mem0_hygiene
from mem0_hygiene.config import build_mem0_config, split_config

VOLATILE = {"id", "created_at", "updated_at", "hygiene"}


def script(m: Any) -> list[Any]:
    """A small app written against mem0's API only."""
    out: list[Any] = []
    a = m.add("I prefer pnpm for JavaScript", user_id="alice", infer=False)
    out.append(a)
    b = m.add(
        [
            {"role": "user", "content": "My timezone is Asia/Jerusalem"},
            {"role": "assistant", "content": "Noted your timezone"},
        ],
        user_id="alice",
        infer=False,
        metadata={"topic": "profile"},
    )
    out.append(b)
    m.add("Staging is down", user_id="alice", infer=False, expiration_date="2099-01-01")
    out.append(m.search("JavaScript package manager pnpm", filters={"user_id": "alice"}, top_k=2))
    out.append(m.get_all(filters={"user_id": "alice"}, top_k=10))
    mid = a["results"][0]["id"]
    out.append(m.update(mid, text="I prefer bun for JavaScript"))
    out.append(m.get(mid))
    out.append([h["event"] for h in m.history(mid)])
    out.append(m.delete(mid))
    out.append(m.get(mid))
    out.append(m.get_all(filters={"user_id": "alice"}))
    out.append(m.delete_all(user_id="alice"))
    out.append(m.get_all(filters={"user_id": "alice"}))
    with pytest.raises(ValueError):
        m.search("x")  # mem0 requires a scope
    return out


def scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def sort_results(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("results"), list):
        return {**value, "results": sorted(value["results"], key=lambda r: r.get("memory", ""))}
    return value


def test_same_script_same_results_apart_from_ids_timestamps_and_hygiene(tmp_path, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "plain")
    try:
        expected = [sort_results(scrub(x)) for x in script(plain)]
    finally:
        close_plain(plain)
    ours = mem0_hygiene.Memory(build_mem0_config(split_config(mem0_hygiene.offline_config(tmp_path / "ours"))[0]))
    try:
        got = script(ours)
        assert all("hygiene" in r for r in got[3]["results"])
        assert [sort_results(scrub(x)) for x in got] == expected
    finally:
        ours.close()


def test_is_a_mem0_memory_and_from_config_accepts_plain_mem0_dicts(tmp_path):
    m = mem0_hygiene.Memory.from_config(mem0_hygiene.offline_config(tmp_path))
    try:
        assert isinstance(m, mem0.Memory)
        assert mem0_hygiene.HygieneMemory is mem0_hygiene.Memory
        assert m.ledger_path == str(tmp_path / "hygiene.db")
    finally:
        m.close()
