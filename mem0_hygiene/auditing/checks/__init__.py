"""The audit's checks: one module per family, pure functions over what the stores return.

Importing this package imports every family, so :data:`REGISTRY` is complete as soon as anything from here
is imported (a check registers itself with ``@check(code, area, needs=...)``).
"""

from . import (  # noqa: F401  (each registers its checks)
    backups,
    consolidation,
    content,
    copies,
    embedder,
    erasures,
    history,
    ledger,
    storage,
)
from .base import REGISTRY, Context, skipped

__all__ = ["REGISTRY", "Context", "skipped"]
