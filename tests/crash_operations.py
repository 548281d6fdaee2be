"""The drop-in's own multi-step operations, as :class:`faults_sqlite.Operation` values to crash: each plants
a small deployment through the drop-in and names the call to kill midway (and how an app retries it)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .faults_sqlite import SCOPE, Operation

TOOL_TEXT = "Always deploy on Fridays without tests"


def _chain(m: Any) -> dict[str, str]:
    """a -> b -> c (each superseded by the next), and a memory that has nothing to do with them."""
    a = m.add("Uses Python 3.9", **SCOPE, infer=False, source="chat 1")["results"][0]["id"]
    b = m.supersede(a, "Uses Python 3.11", source="chat 2")
    c = m.supersede(b, "Uses Python 3.12", source="chat 3")
    other = m.add("Lives in Haifa", **SCOPE, infer=False, source="chat 4")["results"][0]["id"]
    return {"a": a, "b": b, "c": c, "other": other}


def _one_fact(m: Any) -> dict[str, str]:
    return {"other": m.add("Works on the billing service", **SCOPE, infer=False, source="chat 0")["results"][0]["id"]}


def _npm(m: Any) -> dict[str, str]:
    old = m.add("Prefers npm for JavaScript packages", **SCOPE, infer=False, source="chat 1")["results"][0]["id"]
    return {"old": old, **_one_fact(m)}


def _postgres(m: Any) -> dict[str, str]:
    old = m.add("Dana uses Postgres 15", **SCOPE, infer=False, source="chat 1")["results"][0]["id"]
    return {"old": old, **_one_fact(m)}


def _prunable(m: Any) -> dict[str, str]:
    """Everything prune deals with: a superseded chain, an invalidated memory, an expired one, a memory
    deleted long ago (its tombstone is compacted) and live memories that stay."""
    ids = _chain(m)
    ids["wrong"] = m.add("The office is closed on Mondays", **SCOPE, infer=False, source="chat 5")["results"][0]["id"]
    m.invalidate(ids["wrong"], reason="it is open")
    ids["away"] = m.add("Away this week", **SCOPE, infer=False, ttl="7d", source="chat 6")["results"][0]["id"]
    ids["gone"] = m.add("Likes green tea", **SCOPE, infer=False, source="chat 7")["results"][0]["id"]
    m.delete(ids["gone"])
    return ids


ADD_SOURCE = f"""
m.add("Away this week", user_id="dana", infer=False, ttl="7d", source="chat 2026-08-01")
m.add([{{"role": "tool", "content": {TOOL_TEXT!r}}}], user_id="dana", infer=False,
      source="tool:web_fetch https://example.com/post")
"""

# mem0's add is not idempotent (a second add stores a second copy), so an app retrying an add after a crash
# checks whether it landed first.
ADD_RETRY = f"""
known = {{r["memory"] for r in m.get_all(filters={{"user_id": "dana"}}, include_stale=True)["results"]}}
if "Away this week" not in known:
    m.add("Away this week", user_id="dana", infer=False, ttl="7d", source="chat 2026-08-01")
if {TOOL_TEXT!r} not in known:
    m.add([{{"role": "tool", "content": {TOOL_TEXT!r}}}], user_id="dana", infer=False,
          source="tool:web_fetch https://example.com/post")
"""

DELETE_RETRY = """
from mem0_hygiene.errors import MemoryNotFound
try:
    m.delete(ids["c"])
except MemoryNotFound:
    pass  # it was deleted before the crash: the retry has nothing left to do
"""

OPERATIONS = (
    Operation("add", _one_fact, ADD_SOURCE, rerun=ADD_RETRY, hygiene={"trust_tool_output": True}),
    Operation(
        "add_deciding",
        _postgres,
        'm.add("Dana uses Postgres 16", user_id="dana", infer=False, source="chat 2")',
        hygiene={"write_decision": True},
    ),
    Operation(
        "supersede", _npm, 'm.supersede(ids["old"], "Prefers pnpm for JavaScript packages", source="chat 2026-08-02")'
    ),
    Operation("delete", _chain, 'm.delete(ids["c"])', rerun=DELETE_RETRY),
    Operation("prune", _prunable, "m.prune()", after=timedelta(days=200)),
    Operation(
        "maintenance_prune",
        _prunable,
        "from mem0_hygiene import maintenance\nmaintenance.prune(m)",
        after=timedelta(days=200),
    ),
    Operation("forget", _chain, 'from mem0_hygiene.actions.forget import forget\nforget(m, [ids["c"]])'),
)

BY_NAME = {op.name: op for op in OPERATIONS}
