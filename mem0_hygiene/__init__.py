"""mem0-hygiene: provenance, expiry, supersession and audits for mem0 memories.

``from mem0_hygiene import Memory`` is a drop-in replacement for ``mem0.Memory``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .audit import AuditError, audit  # noqa: E402
from .config import HygieneSettings, offline_config  # noqa: E402
from .errors import (  # noqa: E402
    ConfigError,
    HygieneError,
    LedgerError,
    MemoryNotFound,
    MissingSource,
    StateError,
    StoreLocked,
    SupersedeError,
    VolatileStoreError,
)
from .memory import HygieneMemory, Memory  # noqa: E402
from .prompt import format_for_prompt  # noqa: E402
from .prune import PrunedMemory, PruneResult  # noqa: E402

__all__ = [
    "AuditError",
    "Finding",
    "Report",
    "Severity",
    "Skipped",
    "audit",
    "ConfigError",
    "HygieneError",
    "HygieneMemory",
    "HygieneSettings",
    "LedgerError",
    "Memory",
    "MemoryNotFound",
    "MissingSource",
    "PruneResult",
    "PrunedMemory",
    "StateError",
    "StoreLocked",
    "SupersedeError",
    "VolatileStoreError",
    "__version__",
    "format_for_prompt",
    "offline_config",
]
