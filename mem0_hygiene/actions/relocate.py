"""Moving a local store to a safe place: copy, verify, switch, and only then (if asked) delete the source.

:func:`relocate` moves a local Qdrant folder (and, on request, mem0's history.db and the ledger) into
a destination folder. The verified copies themselves live in the stores layer:
:func:`mem0_hygiene.stores.qdrant.relocate_qdrant_folder` (the Qdrant part alone, also used by the
drop-in ``Memory`` at start-up to rescue a defaulted store from tmpfs; importable from here too) and
:func:`mem0_hygiene.stores.sqlite.copy_database`.

The source is never modified before the copy has been verified: each copy is built in a hidden
temporary name inside the destination folder, checked (point counts per collection and a sample of
payloads and vectors for Qdrant; ``PRAGMA integrity_check`` and row counts per table for SQLite),
and renamed into place only then. An interruption at any point leaves the source usable and, at the
destination, either nothing or a complete, verified copy (at worst a hidden ``.NAME.relocating-*``
leftover, which is safe to delete). SQLite files are copied with ``VACUUM INTO``, never with ``cp``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from ..errors import RelocateError
from ..render.tables import Line, LinesView, counts_text
from ..stores import qdrant as qdrant_local
from ..stores.locations import StoreLocation, location_of
from ..stores.qdrant import (
    DEFAULT_SAMPLE,
    QdrantCopy,
    check_destination_free,
    check_not_nested,
    copy_store_verified,
    folder_signature,
    relocate_qdrant_folder,
)
from ..stores.sqlite import SIDECARS, SqliteCopy, copy_database, file_signature, table_counts
from ..target import resolve

log = logging.getLogger(__name__)

QDRANT_DIRNAME = "qdrant"


@dataclass(frozen=True)
class MovedStore:
    """One store copied (or, in a dry run, to be copied) by :func:`relocate`.

    Fields:
        role: "vector_store", "history_db" or "ledger".
        source: where it was (absolute path).
        destination: where it is now (or would be, in a dry run).
        counts_before: points per collection (Qdrant) or rows per table (SQLite) at the source.
        counts_after: the same, read from the copy ({} in a dry run).
        sampled: how many points had their payload and vector compared between source and copy.
        integrity: the copy's ``PRAGMA integrity_check`` result ("ok"), for SQLite; None otherwise.
        source_removed: the source was deleted (only with ``remove_source``, only after verification).
        note: why the source was kept despite ``remove_source``, or other remarks.
    """

    role: str
    source: str
    destination: str
    counts_before: dict[str, int]
    counts_after: dict[str, int]
    sampled: int = 0
    integrity: str | None = None
    source_removed: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "source": self.source,
            "destination": self.destination,
            "counts_before": dict(self.counts_before),
            "counts_after": dict(self.counts_after),
            "sampled": self.sampled,
            "integrity": self.integrity,
            "source_removed": self.source_removed,
            "note": self.note,
        }


@dataclass(frozen=True)
class RelocateResult(LinesView):
    """What :func:`relocate` did.

    Fields:
        to_dir: the destination folder.
        dry_run: nothing was written; ``moves`` is the plan.
        moves: each store copied (or planned), with its counts and checks.
        skipped: stores not moved, each with the reason ("history.db does not exist", ...).
        config_snippet: the keys to set in the mem0 config from now on (merge it into the app's config).
    """

    to_dir: str
    dry_run: bool
    moves: tuple[MovedStore, ...]
    skipped: tuple[str, ...] = ()
    config_snippet: dict[str, Any] = field(default_factory=dict)

    @property
    def source_removed(self) -> bool:
        """Every moved store's source was deleted."""
        return bool(self.moves) and all(m.source_removed for m in self.moves)

    def move(self, role: str) -> MovedStore | None:
        for m in self.moves:
            if m.role == role:
                return m
        return None

    def _lines(self) -> list[Line]:
        out: list[Line] = []
        verb = "would copy" if self.dry_run else "copied"
        for move in self.moves:
            out.append([(f"{move.role}: {verb} {move.source} -> {move.destination} "
                         f"({counts_text(move.counts_before)})", "")])
            if self.dry_run:
                continue
            checks = [f"counts match ({counts_text(move.counts_after)})"]
            if move.sampled:
                checks.append(f"{move.sampled} sampled points identical")
            if move.integrity:
                checks.append(f"integrity_check {move.integrity}")
            out.append([("  verified: " + "; ".join(checks), "")])
            if move.source_removed:
                out.append([(f"  removed the old copy at {move.source}", "")])
            elif move.note:
                out.append([(f"  {move.note}", "yellow")])
            else:
                out.append([(f"  the old copy at {move.source} is untouched", "")])
        out += [[(f"skipped: {reason}", "")] for reason in self.skipped]
        if self.dry_run:
            out.append([("dry run: nothing was written; after the move, use this in your mem0 config:", "")])
        else:
            out.append([("use this in your mem0 config from now on (merge it into the dict given to "
                         "Memory.from_config):", "")])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "to_dir": self.to_dir,
            "dry_run": self.dry_run,
            "moves": [m.to_dict() for m in self.moves],
            "skipped": list(self.skipped),
            "config_snippet": self.config_snippet,
            "source_removed": self.source_removed,
        }


# ---------------------------------------------------------------------------------------------- helpers


def _remove_sqlite(path: str) -> None:
    for suffix in ("", *SIDECARS):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + suffix)


# ---------------------------------------------------------------------------------------------- relocate


@dataclass
class _Plan:
    role: str
    source: str
    destination: str
    kind: str  # "qdrant" | "sqlite"


def _plan(
    locations: list[StoreLocation], to_dir: str, include_sqlite: bool
) -> tuple[list[_Plan], list[str]]:
    plans: list[_Plan] = []
    skipped: list[str] = []
    vs = location_of(locations, "vector_store")
    if vs.provider != "qdrant" or not vs.is_local or vs.path is None:
        where = vs.remote or vs.note or "not a local folder"
        reason = f"the vector store ({vs.provider}: {where}) is not a local Qdrant folder"
        if not include_sqlite:
            raise RelocateError(f"nothing to relocate: {reason}; a server keeps its own data")
        skipped.append(reason)
    elif not os.path.isdir(vs.path):
        reason = f"there is no local Qdrant store at {vs.path}"
        if not include_sqlite:
            raise RelocateError(f"nothing to relocate: {reason}")
        skipped.append(reason)
    else:
        dst = os.path.join(to_dir, QDRANT_DIRNAME)
        check_not_nested(vs.path, dst)
        check_destination_free(dst)
        plans.append(_Plan("vector_store", vs.path, dst, "qdrant"))
    if include_sqlite:
        for role in ("history_db", "ledger"):
            loc = location_of(locations, role)  # type: ignore[arg-type]
            if not loc.is_local or loc.path is None:
                skipped.append(f"{role}: {loc.path or loc.remote} is not a file")
                continue
            if not os.path.isfile(loc.path):
                skipped.append(f"{role}: {loc.path} does not exist")
                continue
            dst = os.path.join(to_dir, os.path.basename(loc.path))
            if os.path.realpath(loc.path) == os.path.realpath(dst):
                skipped.append(f"{role}: already at {dst}")
                continue
            if any(p.destination == dst for p in plans):
                raise RelocateError(f"{role} would land on {dst}, which another store takes")
            if os.path.lexists(dst):
                raise RelocateError(f"{dst} already exists; choose another destination (nothing was copied)")
            plans.append(_Plan(role, loc.path, dst, "sqlite"))
    if not plans:
        raise RelocateError("nothing to relocate: " + "; ".join(skipped))
    return plans, skipped


def _snippet(plans: list[_Plan], locations: list[StoreLocation]) -> dict[str, Any]:
    snippet: dict[str, Any] = {}
    for p in plans:
        if p.role == "vector_store":
            vs = location_of(locations, "vector_store")
            snippet["vector_store"] = {
                "provider": "qdrant",
                "config": {"path": p.destination, "collection_name": vs.collection or "mem0"},
            }
        elif p.role == "history_db":
            snippet["history_db_path"] = p.destination
        elif p.role == "ledger":
            snippet["hygiene"] = {"ledger_path": p.destination}
    return snippet


def _dry_counts(plan: _Plan) -> dict[str, int]:
    if plan.kind == "qdrant":
        return qdrant_local.collection_counts(plan.source)
    return table_counts(plan.source)


def relocate(
    config: dict[str, Any] | None,
    to_dir: str | os.PathLike[str],
    *,
    include_sqlite: bool = False,
    dry_run: bool = False,
    remove_source: bool = False,
    sample_size: int = DEFAULT_SAMPLE,
) -> RelocateResult:
    """Move the local Qdrant store of ``config`` (and with ``include_sqlite`` history.db and the ledger) to ``to_dir``.

    The Qdrant folder lands in ``TO_DIR/qdrant``, the SQLite files keep their names
    (``TO_DIR/history.db``, ``TO_DIR/hygiene.db``). Steps: refuse when another process holds the
    store (:class:`~mem0_hygiene.errors.StoreLocked`, naming the remedies) or a destination is taken
    (:class:`~mem0_hygiene.errors.RelocateError`); copy each store into a temporary name inside
    ``to_dir``; verify it; rename it into place. Only when every copy is in place and verified, and
    only with ``remove_source``, are the sources deleted (a source that changed since it was copied
    is kept, with a note). When a later store fails, copies already placed by this call are removed
    again, so a failed run leaves the destination as it found it. The source is never written.

    ``dry_run`` checks the same preconditions and reads the source counts, and writes nothing. The
    result's ``config_snippet`` holds the keys to put in the app's mem0 config from now on.
    """
    to = os.path.abspath(os.path.expanduser(os.fspath(to_dir)))
    if os.path.exists(to) and not os.path.isdir(to):
        raise RelocateError(f"{to} is not a folder")
    locations = list(resolve(config).locations)
    plans, skipped = _plan(locations, to, include_sqlite)
    for p in plans:
        if p.kind == "qdrant":
            qdrant_local.ensure_unlocked(p.source, "relocate")
    snippet = _snippet(plans, locations)

    if dry_run:
        moves = tuple(
            MovedStore(role=p.role, source=p.source, destination=p.destination,
                       counts_before=_dry_counts(p), counts_after={})
            for p in plans
        )
        return RelocateResult(to_dir=to, dry_run=True, moves=moves, skipped=tuple(skipped),
                              config_snippet=snippet)

    os.makedirs(to, exist_ok=True)
    placed: list[str] = []
    copies: list[tuple[_Plan, QdrantCopy | SqliteCopy]] = []
    try:
        for p in plans:
            if p.kind == "qdrant":
                copy: QdrantCopy | SqliteCopy = copy_store_verified(p.source, p.destination, sample_size)
            else:
                copy = copy_database(p.source, p.destination)
            placed.append(p.destination)
            copies.append((p, copy))
    except BaseException:
        for dst in placed:  # undo this run's copies: the config still points at the sources
            if os.path.isdir(dst):
                shutil.rmtree(dst, ignore_errors=True)
            else:
                _remove_sqlite(dst)
        raise

    done: list[MovedStore] = []
    for p, c in copies:
        removed, note = False, ""
        if remove_source:
            removed, note = _remove_source(p, c)
        done.append(
            MovedStore(
                role=p.role, source=p.source, destination=p.destination,
                counts_before=c.counts_before, counts_after=c.counts_after,
                sampled=c.sampled if isinstance(c, QdrantCopy) else 0,
                integrity=c.integrity if isinstance(c, SqliteCopy) else None,
                source_removed=removed, note=note,
            )
        )
    return RelocateResult(to_dir=to, dry_run=False, moves=tuple(done), skipped=tuple(skipped),
                          config_snippet=snippet)


def _remove_source(plan: _Plan, copy: QdrantCopy | SqliteCopy) -> tuple[bool, str]:
    if isinstance(copy, QdrantCopy):
        if qdrant_local.is_locked(plan.source):
            note = f"kept {plan.source}: a Qdrant client opened it after the copy"
        elif folder_signature(plan.source) != copy.signature:
            note = f"kept {plan.source}: it changed after the copy was made"
        else:
            shutil.rmtree(plan.source)
            return True, ""
    else:
        if file_signature(plan.source) != copy.signature:
            note = f"kept {plan.source}: it changed after the copy was made"
        else:
            _remove_sqlite(plan.source)
            return True, ""
    log.warning("%s; the copy at %s is verified but may now be behind", note, plan.destination)
    return False, note


__all__ = ["DEFAULT_SAMPLE", "MovedStore", "RelocateResult", "relocate", "relocate_qdrant_folder"]
