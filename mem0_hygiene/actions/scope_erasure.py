"""The results of a scope erasure (:class:`ScopeErasure`) and of a receipt's later check (:class:`ReceiptCheck`),
with the query-level checks both are made of (:class:`ScopeCheck`). Data and wording only: the operations are in
:mod:`mem0_hygiene.actions.forget_scope`. Neither result ever holds an erased text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..display.tables import Line, LinesView
from .forget import ForgetResult


@dataclass(frozen=True)
class ScopeCheck:
    """One query that says whether anything of the scope is left in a store (or came back).

    Fields:
        store: "vector_store", "history_db", "ledger", "entities", or a registered copy's path.
        what: what was counted, in words.
        left: how many were found (0 is clean).
        checked: the store could be asked; False (with ``reason``) means not checked, never clean.
        reason: why it could not be checked.
    """

    store: str
    what: str
    left: int
    checked: bool = True
    reason: str = ""

    @property
    def clean(self) -> bool:
        return self.checked and self.left == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "what": self.what,
            "left": self.left,
            "checked": self.checked,
            "clean": self.clean,
            "reason": self.reason,
        }


def _check_lines(checks: tuple[ScopeCheck, ...], bad: str) -> list[Line]:
    out: list[Line] = []
    for c in checks:
        if not c.checked:
            out.append([("  ", ""), ("not checked", "yellow"), (f": {c.store}, {c.what}: {c.reason}", "")])
        elif c.left:
            out.append([("  ", ""), (bad, "bold red"), (f": {c.left} {c.what} in {c.store}", "")])
    return out


@dataclass(frozen=True)
class ScopeErasure(LinesView):
    """What :func:`~mem0_hygiene.actions.forget_scope.forget_scope` did (or, with ``dry_run``, would do).

    Fields:
        scope: the erased scope (``user_id``, ``agent_id``, ``run_id``: those given).
        memory_ids: every memory of the scope found in the vector store, the ledger or the journal.
        messages_removed: mem0 ``messages`` rows of the scope removed (live history.db and copies; a resumed run
            counts what the killed run removed too).
        entities_removed: rows of mem0's ``{collection}_entities`` collection of the scope deleted through mem0.
        forget: the verified erasure of the memories and texts (:class:`~mem0_hygiene.actions.forget.ForgetResult`:
            every file read byte by byte, every registered copy).
        checks: the scope-level queries after it (points, ledger rows, messages rows, entity rows left).
        receipt: the receipt written (None in a dry run).
        resumed: an interrupted erasure of the same scope was found and finished.
        dry_run: nothing was changed.
    """

    scope: dict[str, str]
    memory_ids: tuple[str, ...]
    messages_removed: int
    entities_removed: int
    forget: ForgetResult | None
    checks: tuple[ScopeCheck, ...]
    receipt: str | None
    resumed: bool = False
    dry_run: bool = False

    @property
    def verified(self) -> bool:
        """A real erasure, every file clean (or nothing to scrub), every scope-level query clean."""
        files_ok = self.forget is None or self.forget.verified
        return not self.dry_run and files_ok and all(c.clean for c in self.checks)

    def _lines(self) -> list[Line]:
        label = " ".join(f"{k.removesuffix('_id')}={v}" for k, v in self.scope.items())
        verb = "would erase" if self.dry_run else "erased"
        out: list[Line] = [
            [
                (
                    f"{verb} scope {label}: {len(self.memory_ids)} memory(ies), {self.messages_removed} messages "
                    f"row(s), {self.entities_removed} entity row(s)"
                    + (" (an interrupted run finished)" if self.resumed else ""),
                    "",
                )
            ]
        ]
        if self.forget is not None:
            out += self.forget._lines()
        out += _check_lines(self.checks, "still left")
        if not self.dry_run:
            out.append(
                [
                    ("  ", ""),
                    ("verified" if self.verified else "NOT verified", "green" if self.verified else "bold red"),
                ]
            )
        if self.receipt:
            out.append([(f"receipt: {self.receipt}", "")])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": dict(self.scope),
            "memory_ids": list(self.memory_ids),
            "messages_removed": self.messages_removed,
            "entities_removed": self.entities_removed,
            "verified": self.verified,
            "dry_run": self.dry_run,
            "resumed": self.resumed,
            "receipt": self.receipt,
            "checks": [c.to_dict() for c in self.checks],
            "forget": self.forget.to_dict() if self.forget is not None else None,
        }


@dataclass(frozen=True)
class ReceiptCheck(LinesView):
    """A receipt checked again (:func:`~mem0_hygiene.actions.forget_scope.verify_receipt`): did anything of the
    erased scope come back (a restore, a replica, an app writing again)?

    Fields:
        receipt: the receipt's path.
        scope: the scope it erased.
        erased_at: when.
        checks: the scope-level queries, and the searches for the erased texts (by their sha256) in every live
            store and registered copy.
    """

    receipt: str
    scope: dict[str, str]
    erased_at: str
    checks: tuple[ScopeCheck, ...]

    @property
    def came_back(self) -> bool:
        return any(c.left for c in self.checks)

    @property
    def complete(self) -> bool:
        return all(c.checked for c in self.checks)

    def _lines(self) -> list[Line]:
        label = " ".join(f"{k.removesuffix('_id')}={v}" for k, v in self.scope.items())
        head = f"receipt {self.receipt}: scope {label} erased at {self.erased_at}: "
        if self.came_back:
            state: tuple[str, str] = ("something came back", "bold red")
        elif not self.complete:
            state = ("nothing found, but not every store could be checked", "yellow")
        else:
            state = ("still erased", "green")
        return [[(head, ""), state], *_check_lines(self.checks, "came back")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "receipt": self.receipt,
            "scope": dict(self.scope),
            "erased_at": self.erased_at,
            "came_back": self.came_back,
            "complete": self.complete,
            "checks": [c.to_dict() for c in self.checks],
        }


__all__ = ["ReceiptCheck", "ScopeCheck", "ScopeErasure"]
