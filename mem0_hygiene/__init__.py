"""mem0-hygiene: provenance, expiry, supersession and audits for mem0 memories.

``from mem0_hygiene import Memory`` is a drop-in replacement for ``mem0.Memory``, and ``AsyncMemory`` for
``mem0.AsyncMemory``.

The public names are loaded on first use, so importing the package (or running the CLI, which must
switch mem0's telemetry off before mem0 is imported) does not import mem0 by itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__

_EXPORTS = {
    "AsyncMemory": ".actions.drop_in",
    "AuditError": ".errors",
    "audit": ".auditing.runner",
    "HygieneSettings": ".config",
    "offline_config": ".config",
    "ConfigError": ".errors",
    "HygieneError": ".errors",
    "LedgerError": ".errors",
    "MemoryNotFound": ".errors",
    "MissingSource": ".errors",
    "StateError": ".errors",
    "StoreLocked": ".errors",
    "SupersedeError": ".errors",
    "VolatileStoreError": ".errors",
    "inspect": ".auditing.inspection",
    "HygieneMemory": ".actions.drop_in",
    "Memory": ".actions.drop_in",
    "format_for_prompt": ".memory.prompt",
    "PrunedMemory": ".memory.pruning",
    "PruneResult": ".memory.pruning",
    "Finding": ".report",
    "Report": ".report",
    "Severity": ".report",
    "Skipped": ".report",
}

__all__ = [
    "AsyncMemory",
    "AuditError",
    "ConfigError",
    "Finding",
    "HygieneError",
    "HygieneMemory",
    "HygieneSettings",
    "LedgerError",
    "Memory",
    "MemoryNotFound",
    "MissingSource",
    "PruneResult",
    "PrunedMemory",
    "Report",
    "Severity",
    "Skipped",
    "StateError",
    "StoreLocked",
    "SupersedeError",
    "VolatileStoreError",
    "__version__",
    "audit",
    "format_for_prompt",
    "inspect",
    "offline_config",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mem0_hygiene' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .actions.drop_in import AsyncMemory, HygieneMemory, Memory
    from .auditing.inspection import inspect
    from .auditing.runner import audit
    from .config import HygieneSettings, offline_config
    from .errors import (
        AuditError,
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
    from .memory.prompt import format_for_prompt
    from .memory.pruning import PrunedMemory, PruneResult
    from .report import Finding, Report, Severity, Skipped
