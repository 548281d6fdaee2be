"""The earlier import path of ledger compaction, now :mod:`mem0_hygiene.memory.compaction` (the drop-in's
``hygiene.auto_prune`` runs it, so it lives beside the drop-in)."""

from ..memory.compaction import Compaction, compact_ledger, history_says_present

__all__ = ["Compaction", "compact_ledger", "history_says_present"]
