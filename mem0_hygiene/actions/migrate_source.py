"""``mem0-hygiene migrate --remove-source`` / :func:`remove_migration_source`: delete the store a migration copied
from, once the app runs on the new one. The old store's files are registered as copies of the new deployment
(kind ``migration_source``, :mod:`mem0_hygiene.stores.copies`) by ``migrate``; this lists them, with their sizes,
and (unless ``dry_run``) deletes them and takes them off the registry. Only what is registered is touched."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Any

from ..display.tables import Line, LinesView
from ..display.text import human_size
from ..errors import ConfigError
from ..stores.copies import copies_path_for, list_copies, unregister_copy
from ..stores.paths import overlaps
from ..stores.sqlite import SIDECARS
from ..target import resolve
from .migrate import live_paths


@dataclass(frozen=True)
class SourceRemoval(LinesView):
    """The old store's registered files: each (path, role, bytes), and whether they were deleted."""

    paths: tuple[tuple[str, str, int], ...]
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "deleted": not self.dry_run,
            "paths": [{"path": p, "role": r, "size_bytes": b} for p, r, b in self.paths],
        }

    def _lines(self) -> list[Line]:
        if not self.paths:
            return [[("No store a migration copied from is registered for this deployment: nothing to remove.", "")]]
        verb = "would delete" if self.dry_run else "deleted"
        out: list[Line] = [[(f"{'dry run: ' if self.dry_run else ''}{verb} the store migrated from:", "bold")]]
        out += [[(f"  {role}: {path} ({human_size(size)})", "")] for path, role, size in self.paths]
        return out


def remove_migration_source(target: Any, *, dry_run: bool = False) -> SourceRemoval:
    """Delete (or, ``dry_run``, list) the files of the store ``target`` was migrated from."""
    tgt = resolve(target)
    copies = [c for c in list_copies(tgt.ledger_path, tgt.history_path) if c.kind == "migration_source"]
    live = live_paths(tgt)
    clash = [(c.path, own) for c in copies for own in live if overlaps(c.path, own)]
    if clash:
        raise ConfigError(
            f"the registered source {clash[0][0]} is (or holds, or is inside) this deployment's own store "
            f"{clash[0][1]}: removing it would remove the live store. Nothing was deleted; delete the old "
            "collection with the store's own tools"
        )
    paths = tuple((c.path, ",".join(c.roles), int(c.size_bytes or 0)) for c in copies)
    if not dry_run:
        for c in copies:
            if os.path.isdir(c.path) and not os.path.islink(c.path):
                shutil.rmtree(c.path)
            else:
                for p in [c.path, *(c.path + s for s in SIDECARS)]:
                    if os.path.lexists(p):
                        os.unlink(p)
        unregister_copy(copies_path_for(tgt.ledger_path, tgt.history_path), [c.path for c in copies])
    return SourceRemoval(paths=paths, dry_run=dry_run)
