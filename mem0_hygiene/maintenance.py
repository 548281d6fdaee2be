"""Maintenance from outside the app, under its documented import path: ``from mem0_hygiene import maintenance``.

Each function takes a ``target``: the app's mem0 config dict (as passed to ``Memory.from_config``,
``"hygiene"`` section included; None for mem0's defaults), a live drop-in :class:`~mem0_hygiene.Memory`, or a
:class:`~mem0_hygiene.target.Target`. With a config, the stores are opened for the call and closed after; with
a live Memory, the app's own open stores are used: the route for a local Qdrant folder that the running app
holds locked (a second process cannot open it). The CLI commands of the same names are thin layers over these
functions and render the same result objects.

- :func:`open_memory`: open the drop-in from a config, refusing clearly while another process holds
  the local Qdrant folder, and without any API key unless new text must be embedded.
- :func:`prune` -> :class:`~mem0_hygiene.memory.pruning.PruneResult`: expired memories, superseded/invalidated
  ones past retention, optionally long-unused ones, then ledger compaction (old tombstones, with
  ``secure_delete``). Every deletion goes through mem0's API.
- :func:`review_queue` -> :class:`ReviewQueue`; :func:`confirm`, :func:`invalidate`,
  :func:`supersede` -> :class:`ChangeResult`. ``confirm`` and ``invalidate`` change only the ledger (one
  compare-and-set transaction) and, for memories it has rows of, open nothing else but history.db (for the
  text), so from a config they work while the app holds a local Qdrant folder; so does the review queue (then
  read from the ledger alone: :func:`queue_from_ledger`). ``supersede`` needs the vector store and the embedder.
- :func:`consolidate` -> :class:`ConsolidationPlan`: duplicates merged, older facts superseded and contradicted
  ones invalidated among the live memories of each scope, decided over the embeddings already stored (a dry
  run only plans); pairs the decision is unsure of are listed (:class:`UnsurePair`), never applied;
  interrupted runs are finished by the next one.
- :func:`forget_scope` -> :class:`ScopeErasure`: erase a user, agent or run everywhere (every memory through mem0's
  API, then its texts and raw turns from every store and registered copy), verified byte by byte, with a JSON
  receipt; a killed run is finished by the next one. :func:`verify_receipt` -> :class:`ReceiptCheck` checks a
  receipt again later (did anything of the scope come back?).
- :func:`export` -> :class:`ExportResult` and :func:`import_` -> :class:`ImportResult`: every memory (text, scope,
  metadata, ledger facts, chains, tombstones, optionally vectors) and mem0's history to the portable JSON Lines
  format (:mod:`mem0_hygiene.stores.portable`) and back into an empty store of any supported provider, verified.
- :func:`migrate` -> :class:`MigrationResult` (``dry_run``: :class:`MigrationPlan`): every memory copied into
  another vector store (and ledger and history.db), verified by count, checksum and sampled queries, resumable
  after a crash; ``reembed`` embeds every text with the new embedder. :func:`remove_migration_source` deletes
  the old store afterwards (-> :class:`SourceRemoval`, naming every file).
- :func:`read_log` -> :class:`ReadLog`: with ``hygiene.read_log`` on, which reads served a memory (when, to which
  scope and caller), or what a scope was served; reads the ledger alone, so it works while the app runs.
- :func:`digest` -> :class:`Digest` and :func:`memory_story` -> :class:`Story` read only history.db and
  the ledger (never the vector store), so they also work from outside while the app runs.

The operations live in :mod:`mem0_hygiene.actions`; this module re-exports them. Nothing here prints.
"""

from .actions.consolidate import consolidate
from .actions.consolidate_plan import ConsolidationPlan, PlanStep, UnsurePair
from .actions.digest import digest, memory_story, window_start
from .actions.export import ExportResult, export
from .actions.forget_scope import ReceiptCheck, ScopeErasure, forget_scope, verify_receipt
from .actions.migrate import MigrationPlan, MigrationResult, migrate
from .actions.migrate_source import SourceRemoval, remove_migration_source
from .actions.opening import EmbedderUnavailable, StoreMissing, open_memory, store_lock_holder
from .actions.portable_import import ImportResult, import_
from .actions.prune import prune
from .actions.reads import ReadLog, read_log
from .actions.results import (
    ChainLink,
    Change,
    ChangeResult,
    Digest,
    DigestItem,
    ReviewItem,
    ReviewQueue,
    Story,
    StoryEvent,
)
from .actions.review import confirm, invalidate, queue_from_ledger, review_queue, supersede

__all__ = [
    "ChainLink",
    "Change",
    "ChangeResult",
    "ConsolidationPlan",
    "Digest",
    "DigestItem",
    "EmbedderUnavailable",
    "ExportResult",
    "ImportResult",
    "MigrationPlan",
    "MigrationResult",
    "PlanStep",
    "ReadLog",
    "ReceiptCheck",
    "ReviewItem",
    "ReviewQueue",
    "ScopeErasure",
    "SourceRemoval",
    "Story",
    "StoreMissing",
    "StoryEvent",
    "confirm",
    "consolidate",
    "digest",
    "export",
    "forget_scope",
    "import_",
    "invalidate",
    "memory_story",
    "migrate",
    "open_memory",
    "prune",
    "queue_from_ledger",
    "read_log",
    "remove_migration_source",
    "review_queue",
    "store_lock_holder",
    "supersede",
    "UnsurePair",
    "verify_receipt",
    "window_start",
]
