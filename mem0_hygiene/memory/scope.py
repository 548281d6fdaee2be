"""A memory's scope: mem0's ``user_id`` / ``agent_id`` / ``run_id`` keys."""

from __future__ import annotations

SCOPE_KEYS = ("user_id", "agent_id", "run_id")


def scope_of(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    """The scope an ``add``/``delete_all`` call names: its non-blank ids, stripped."""
    return {
        k: v.strip()
        for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id))
        if isinstance(v, str) and v.strip()
    }
