"""Maintenance from outside the app, under its documented import path: ``from mem0_hygiene import maintenance``.

The operations live in :mod:`mem0_hygiene.actions`; this module only re-exports them.
"""

from .actions.maintenance import (
    EmbedderUnavailable,
    StoreMissing,
    confirm,
    digest,
    invalidate,
    memory_story,
    open_memory,
    prune,
    review_queue,
    store_lock_holder,
    supersede,
    window_start,
)

__all__ = [
    "EmbedderUnavailable", "StoreMissing", "confirm", "digest", "invalidate", "memory_story", "open_memory", "prune",
    "review_queue", "store_lock_holder", "supersede", "window_start",
]
