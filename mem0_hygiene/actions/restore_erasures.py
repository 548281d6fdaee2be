"""A restore that brings an erased person back applies the erasure again before anything serves it.

A backup set made before an erasure (``forget --user ID``) that did not scrub it (kept with ``--keep-backups``, or
not registered then) holds the person again. :func:`~mem0_hygiene.actions.restore.restore` refuses it, naming the
receipt, unless it is asked to re-apply the erasures (``restore --reapply-erasures``). Then, once every store is
back and verified, and before the restore journal is removed:

1. the journal's state becomes ``erasing`` and it names the receipts to re-apply (``reapply``); while it is there
   nothing opens the stores (:func:`~mem0_hygiene.stores.restore_journal.refuse_while_restoring`: the app, the
   audit, a backup), except this process, inside :func:`~mem0_hygiene.stores.restore_journal.reapplying`;
2. per receipt, :func:`~mem0_hygiene.actions.forget_scope.forget_scope` erases its scope from what was restored
   (with the receipt's own ``keep_backups``), writing a new receipt, and the journal records it (``reapplied``);
3. every receipt is checked again (:func:`~mem0_hygiene.actions.forget_scope.verify_receipt`): nothing of it may
   have come back; otherwise the journal stays (nothing serves the stores) and the error says what is left.

A run killed anywhere leaves the journal: the next ``restore`` of the same set finishes the swap if it was cut
short, then steps 2-3 (forget_scope finishes its own interrupted run from its journal), and only then removes the
restore journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BackupError
from ..progress import step
from ..stores.erasures import read_receipt, scope_flags, scope_label
from ..stores.restore_journal import reapplying, write_journal
from .forget_scope import SCOPE_FIELDS, forget_scope, verify_receipt


@dataclass(frozen=True)
class ReappliedErasure:
    """One erasure a restore applied again to what it restored.

    Fields:
        receipt: the receipt of the erasure the restored set predates.
        scope: its scope, as the receipt records it.
        new_receipt: the receipt the re-application wrote (None in a dry run).
        memories: memories of the scope the re-application found in what was restored (and erased).
        came_back: the receipt's check after it still found something of the scope (False: it holds again).
    """

    receipt: str
    scope: dict[str, str]
    new_receipt: str | None = None
    memories: int = 0
    came_back: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "receipt": self.receipt,
            "scope": dict(self.scope),
            "new_receipt": self.new_receipt,
            "memories": self.memories,
            "came_back": self.came_back,
        }


def receipt_scope(path: str) -> dict[str, str]:
    """The scope a receipt erased."""
    doc = read_receipt(path)
    return {k: str(v) for k, v in dict(doc.get("scope") or {}).items() if k in SCOPE_FIELDS and v}


def planned(receipts: list[str]) -> tuple[ReappliedErasure, ...]:
    """What a dry run says would be re-applied."""
    return tuple(ReappliedErasure(r, receipt_scope(r)) for r in receipts)


def reapply(target: Any, jpath: str, journal: dict[str, Any]) -> tuple[ReappliedErasure, ...]:
    """Steps 1-3 of the module docstring for the receipts ``journal["reapply"]`` names; ``journal`` is the restore
    journal (rewritten here, durably). ``target``: the restore's resolved Target. Raises
    :class:`~mem0_hygiene.errors.BackupError` when a receipt's check still finds something after it."""
    receipts = [str(r) for r in journal.get("reapply") or []]
    done: dict[str, str | None] = dict(journal.get("reapplied") or {})
    journal["state"] = "erasing"
    journal["reapplied"] = done
    write_journal(jpath, journal)
    out = []
    with reapplying(jpath):
        for path in receipts:
            doc = read_receipt(path)
            scope = receipt_scope(path)
            with step(f"erasing {scope_label(scope)} again from what was restored"):
                erased = forget_scope(
                    target,
                    user_id=scope.get("user_id"),
                    agent_id=scope.get("agent_id"),
                    run_id=scope.get("run_id"),
                    keep_backups=bool(doc.get("keep_backups")),
                )
            done[path] = erased.receipt
            write_journal(jpath, journal)
            check = verify_receipt(target, path)
            out.append(ReappliedErasure(path, scope, erased.receipt, len(erased.memory_ids), check.came_back))
    back = [r for r in out if r.came_back]
    if back:
        raise BackupError(
            f"the erasure recorded in {back[0].receipt} was applied again to the restored stores, and its check still "
            f"finds {scope_label(back[0].scope)} in them; nothing opens the stores until it holds (the restore "
            f"journal {jpath} stays): run the restore again with --reapply-erasures, which erases it again "
            f"(`forget {scope_flags(back[0].scope)}`) and checks the receipt"
        )
    return tuple(out)


__all__ = ["ReappliedErasure", "planned", "reapply", "receipt_scope"]
