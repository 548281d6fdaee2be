"""Who read what: :func:`read_log` answers "which answers could this memory have influenced, and when" (``--memory``)
and "what was served to this scope" (``--scope``) from the ledger's read log (``hygiene.read_log: true``).

It reads the ledger alone (read-only), so from outside the app it works while the app runs; in-process the app's
buffered reads are written first. The result, :class:`ReadLog`, is data with its own wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..display.tables import Line, LinesView
from ..errors import ConfigError
from ..stores.ledger import open_ledger
from ..stores.ledger.reads import Read, reads_in_scope, reads_of
from ..target import resolve
from ..timeutil import parse_time, to_iso

SCOPE_KEYS = ("user_id", "agent_id", "run_id")


@dataclass(frozen=True)
class ReadLog(LinesView):
    """The reads of one memory or of one scope, oldest first.

    Fields:
        memory_id: the memory asked about ("" for a scope).
        scope: the scope asked about (empty for a memory).
        reads: each memory served by each read (:class:`~mem0_hygiene.stores.ledger.reads.Read`).
        enabled: the deployment's ``hygiene.read_log`` is on (off: nothing new is logged).
    """

    memory_id: str
    scope: dict[str, str]
    reads: tuple[Read, ...]
    enabled: bool

    @property
    def callers(self) -> tuple[str, ...]:
        return tuple(sorted({r.caller or "(no source)" for r in self.reads}))

    def _lines(self) -> list[Line]:
        what = (
            f"memory {self.memory_id}"
            if self.memory_id
            else "scope " + " ".join(f"{k.removesuffix('_id')}={v}" for k, v in self.scope.items())
        )
        out: list[Line] = []
        if not self.enabled:
            out.append(
                [("note", "yellow"), (": hygiene.read_log is off; only reads logged while it was on are here", "")]
            )
        if not self.reads:
            out.append([(f"{what}: no read logged", "")])
            return out
        first, last = self.reads[0].read_at, self.reads[-1].read_at
        out.append([(f"{what}: served {len(self.reads)} time(s) from {first} to {last}", "")])
        for r in self.reads:
            scope = " ".join(
                f"{k}={v}" for k, v in (("user", r.user_id), ("agent", r.agent_id), ("run", r.run_id)) if v
            )
            served = f" memory {r.memory_id}" if not self.memory_id else ""
            out.append(
                [(f"  {r.read_at} {r.op}{served} to {scope or '(no scope)'} by {r.caller or '(no source)'}", "")]
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id or None,
            "scope": dict(self.scope),
            "enabled": self.enabled,
            "reads": [r.to_dict() for r in self.reads],
        }


def read_log(
    target: Any,
    *,
    memory_id: str | None = None,
    scope: dict[str, str] | None = None,
    since: str | None = None,
    limit: int = 10_000,
) -> ReadLog:
    """The read log of one memory (``memory_id``) or one scope (``scope``: user_id/agent_id/run_id), since
    ``since`` (an ISO time), oldest first, at most ``limit`` reads. ``target``: the app's drop-in ``Memory`` or its
    config dict. Raises :class:`~mem0_hygiene.errors.ConfigError` unless exactly one of the two is given."""
    wanted = {k: str(v) for k, v in (scope or {}).items() if v}
    if bool(memory_id) == bool(wanted):
        raise ConfigError("ask about one memory (--memory ID) or one scope (--scope user=dana), not both or neither")
    unknown = sorted(set(wanted) - set(SCOPE_KEYS))
    if unknown:
        raise ConfigError(f"unknown scope key(s) {', '.join(unknown)}; use user, agent or run (--scope user=dana)")
    start = to_iso(parse_time(since, what="since")) if since else None
    tgt = resolve(target)
    enabled = bool(tgt.settings.read_log)
    if tgt.memory is not None:
        tgt.memory.flush()  # the app's buffered reads first
        ledger, owned = tgt.memory.ledger, False
    else:
        ledger, owned = open_ledger(tgt.ledger_path, readonly=True), True
    try:
        if memory_id:
            found = reads_of(ledger, memory_id, since=start, limit=limit)
        else:
            found = reads_in_scope(ledger, wanted, since=start, limit=limit)
    finally:
        if owned:
            ledger.close()
    return ReadLog(memory_id or "", wanted, tuple(found), enabled)


__all__ = ["ReadLog", "read_log"]
