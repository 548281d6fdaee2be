"""Opening a deployment from outside the app, by its config: thin functions over :mod:`mem0_hygiene.target`."""

from __future__ import annotations

from typing import Any

from ..memory.core import Memory
from ..target import EmbedderUnavailable, StoreMissing, resolve


def open_memory(
    config: dict[str, Any] | None, *, for_writing_text: bool = False, action: str = "open", must_exist: bool = True
) -> Memory:
    """The drop-in Memory over the stores ``config`` names (see :meth:`mem0_hygiene.target.Target.open_memory`:
    refused while another process holds the local Qdrant folder; no API key unless ``for_writing_text``).
    The caller closes it."""
    return resolve(config).open_memory(for_writing_text=for_writing_text, action=action, must_exist=must_exist)


def store_lock_holder(config: dict[str, Any] | None) -> str | None:
    """The local Qdrant folder of ``config`` that another client holds locked right now, or None."""
    return resolve(config).lock_holder()


__all__ = ["EmbedderUnavailable", "StoreMissing", "open_memory", "store_lock_holder"]
