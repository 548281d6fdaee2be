"""Moving a local store to a safe place without leaving a second live copy: copy, verify, link, resume.

:func:`relocate` moves a vector store kept as a local folder (local Qdrant, Chroma, FAISS) and, on request, mem0's
history.db, the ledger and the files kept beside it (the backup record ``hygiene.backups.json`` and the registry of
copies ``hygiene.copies.json``) into a destination folder. A vector store on a server (pgvector, a Qdrant server)
stays there: only the SQLite files move. A provider the seam has no module for is refused
(:class:`~mem0_hygiene.stores.vector.UnsupportedVectorStore`). For each store:

1. **copy**: built under a hidden temporary name inside the destination, verified (point counts per
   collection and a sample of payloads and vectors for local Qdrant, under its lock; for Chroma and FAISS, which
   take no lock, every file compared by sha256 with a source checked unchanged, and counts and checksums of ids
   and payloads per collection read through the provider seam; ``PRAGMA integrity_check`` and rows per
   table for SQLite, which keeps its file mode and WAL mode; byte for byte for the JSON files), then renamed
   into place (:func:`mem0_hygiene.stores.qdrant.copy_store_verified`,
   :func:`mem0_hygiene.stores.vector.folders.copy_folder_verified`, :func:`mem0_hygiene.stores.sqlite.copy_database`);
2. **switch**: the old path becomes a link to the new one (:mod:`mem0_hygiene.stores.moves`), so every
   reader of the old path (the app with its old config, plain mem0, another tool) sees the very same store;
   the moved-from data is deleted only once the link is in place, never before;
3. with ``remove_source`` the links go too: readers of the old path then find nothing, and the result says
   where each store went. The journal records every store as switched before the first link goes, so a rerun
   never copies an old path again (an app started with the old config meanwhile creates empty stores there:
   they are left alone, never copied over the destination);
4. with ``update_config`` the app's config file is rewritten with the new paths (:mod:`.config_file`).

Before anything is copied, a journal in the destination (:mod:`.relocate_journal`) records what moves where;
it is removed as the last step. A run that was killed at any point is finished by running the same command
again: the rerun reads the journal and resumes (a copy already verified is switched, one whose source
changed since is made again) instead of refusing because the destination exists. An exception (not a
crash) during the copies removes this run's copies again, so the destination is left as it was found.
The old path is never without a store: it holds the old store until the instant it becomes the link.
The order, the journal and the rule that a store journaled as switched is never copied again are the swap
engine's (:mod:`mem0_hygiene.stores.swap`); this module holds the moves: plan, copy, switch, remove the links.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from ..config_loader import read_config_source
from ..display.tables import Line, LinesView, counts_text
from ..errors import ConfigError, RelocateError
from ..progress import counted
from ..stores.locations import StoreLocation, location_of
from ..stores.moves import (
    Signature,
    copy_file_verified,
    finish_swap,
    has_store,
    links_to,
    remove_sidecars,
    replace_with_link,
    swap_file_for_link,
    swap_folder_for_link,
)
from ..stores.paths import side_file
from ..stores.qdrant import (
    DEFAULT_SAMPLE,
    check_destination_free,
    check_not_nested,
    copy_store_verified,
    folder_signature,
    relocate_qdrant_folder,
)
from ..stores.restore_journal import refuse_while_restoring
from ..stores.sqlite import connect, copy_database, file_signature, table_counts
from ..stores.staging import aside_path, remove_path
from ..stores.swap import Swap, SwapJournal, check_done
from ..stores.vector import SUPPORTED, UnsupportedVectorStore
from ..stores.vector.folders import (
    FOLDER_PROVIDERS,
    check_not_held,
    copy_folder_verified,
    folder_counts,
    is_store_folder,
)
from ..target import resolve
from .config_file import ConfigRewrite, plan_config_rewrite, write_config_file
from .relocate_journal import read_journal, remove_journal, signature_of, write_journal

QDRANT_DIRNAME = "qdrant"
"""The folder a local Qdrant store lands in, inside the destination (Chroma's is ``chroma``, FAISS's ``faiss``: a
vector-store folder is named after its provider)."""
CONFIG_KEYS = {
    "vector_store": ("vector_store", "config", "path"),
    "history_db": ("history_db_path",),
    "ledger": ("hygiene", "ledger_path"),
}
"""The config key that names each movable store's path."""
ALREADY = "already moved by an earlier run: the old path links here"


@dataclass(frozen=True)
class MovedStore:
    """One store moved (or, in a dry run, to be moved) by :func:`relocate`.

    Fields:
        role: "vector_store", "history_db", "ledger", "backup_record" (``hygiene.backups.json``) or
            "copies_registry" (``hygiene.copies.json``).
        source: its old path, as configured (absolute).
        destination: where it is now (or would be, in a dry run).
        counts_before: points per collection (Qdrant) or rows per table (SQLite) at the source.
        counts_after: the same, read from the copy ({} in a dry run).
        sampled: how many points had their payload and vector compared between source and copy (local Qdrant),
            or how many collections had their ids and payloads checksummed equal (Chroma, FAISS: the files are
            compared byte for byte too).
        integrity: the copy's ``PRAGMA integrity_check`` result ("ok"), for SQLite; None otherwise.
        linked: the old path is now a link to the destination: every reader of it sees this same store.
        source_removed: the old path is gone, link included (``remove_source``): readers find nothing there.
        resumed: picked up from a run that was interrupted (or had already finished it).
        note: anything else worth saying (an interrupted switch finished, ...).
        provider: the vector store's provider ("qdrant", "chroma", "faiss"); "" for the SQLite and plain files.
        held_check: what was checked to know no other process holds the store (local Qdrant's lock; for Chroma and
            FAISS, which take none, the processes' open files); "" for the SQLite and plain files.
    """

    role: str
    source: str
    destination: str
    counts_before: dict[str, int]
    counts_after: dict[str, int]
    sampled: int = 0
    integrity: str | None = None
    linked: bool = False
    source_removed: bool = False
    resumed: bool = False
    note: str = ""
    provider: str = ""
    held_check: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "provider": self.provider,
            "source": self.source,
            "destination": self.destination,
            "counts_before": dict(self.counts_before),
            "counts_after": dict(self.counts_after),
            "sampled": self.sampled,
            "integrity": self.integrity,
            "linked": self.linked,
            "source_removed": self.source_removed,
            "resumed": self.resumed,
            "note": self.note,
            "held_check": self.held_check,
        }


@dataclass(frozen=True)
class RelocateResult(LinesView):
    """What :func:`relocate` did.

    Fields:
        to_dir: the destination folder.
        dry_run: nothing was written; ``moves`` is the plan.
        moves: each store moved (or planned), with its counts and checks.
        skipped: stores not moved, each with the reason ("history.db does not exist", ...).
        config_snippet: the keys to set in the mem0 config from now on (merge it into the app's config).
        config_file: the config file rewritten with the new paths (``update_config``), or None.
        config_changes: the keys changed in it, dotted ("vector_store.config.path").
        config_comments_kept: False when a YAML file had to be dumped again whole (comments lost).
        resumed: this run finished a relocation an earlier run left unfinished (its journal was found).
    """

    to_dir: str
    dry_run: bool
    moves: tuple[MovedStore, ...]
    skipped: tuple[str, ...] = ()
    config_snippet: dict[str, Any] = field(default_factory=dict)
    config_file: str | None = None
    config_changes: tuple[str, ...] = ()
    config_comments_kept: bool = True
    resumed: bool = False

    @property
    def source_removed(self) -> bool:
        """Every moved store's old path is gone (``remove_source``)."""
        return bool(self.moves) and all(m.source_removed for m in self.moves)

    def move(self, role: str) -> MovedStore | None:
        for m in self.moves:
            if m.role == role:
                return m
        return None

    def _lines(self) -> list[Line]:
        out: list[Line] = []
        if self.resumed:
            out.append([(f"resumed the relocation an interrupted run left in {self.to_dir}", "yellow")])
        for move in self.moves:
            out += self._move_lines(move)
        out += [[(f"skipped: {reason}", "")] for reason in self.skipped]
        if self.config_file:
            verb = "would rewrite" if self.dry_run else "rewrote"
            keys = ", ".join(self.config_changes) or "nothing: it already names the new paths"
            out.append([(f"config: {verb} {self.config_file} ({keys})", "")])
            if not self.config_comments_kept:
                out.append(
                    [("  the YAML had to be written again whole: its comments and formatting were not kept", "yellow")]
                )
        elif self.dry_run:
            out.append([("dry run: nothing was written; after the move, use this in your mem0 config:", "")])
        else:
            if any(m.source_removed for m in self.moves):
                out.append(
                    [
                        (
                            "the old paths are gone: change the app's config before it starts again, or it will "
                            "not find its memories",
                            "yellow",
                        )
                    ]
                )
            out.append(
                [
                    (
                        "use this in your mem0 config from now on (merge it into the dict given to "
                        "Memory.from_config, or rerun with --update-config FILE):",
                        "",
                    )
                ]
            )
        return out

    def _move_lines(self, move: MovedStore) -> list[Line]:
        src, dst = move.source, move.destination
        if self.dry_run:
            then = f"then {src} is removed" if move.source_removed else f"then {src} becomes a link to {dst}"
            verb = "would finish moving" if move.resumed else "would copy"
            plan: list[Line] = [
                [(f"{move.role}: {verb} {src} -> {dst} ({counts_text(move.counts_before)}); {then}", "")]
            ]
            return plan + self._held_lines(move)
        verb = ("already moved" if move.note.startswith(ALREADY) else "finished moving") if move.resumed else "copied"
        out: list[Line] = [[(f"{move.role}: {verb} {src} -> {dst} ({counts_text(move.counts_after)})", "")]]
        checks = [f"counts match ({counts_text(move.counts_after)})"]
        if move.sampled and move.provider in ("chroma", "faiss"):
            checks.append(f"files identical; ids and payloads checksummed equal in {move.sampled} collection(s)")
        elif move.sampled:
            checks.append(f"{move.sampled} sampled points identical")
        if move.integrity:
            checks.append(f"integrity_check {move.integrity}")
        out.append([("  verified: " + "; ".join(checks), "")])
        out += self._held_lines(move)
        if move.source_removed:
            out.append(
                [
                    (
                        f"  removed {src} (and its link): readers of the old path find nothing; the store is at {dst}",
                        "yellow",
                    )
                ]
            )
        elif move.linked:
            out.append([(f"  {src} is now a link to {dst}: every reader of the old path sees this same store", "")])
        if move.note:
            out.append([(f"  {move.note}", "yellow")])
        return out

    @staticmethod
    def _held_lines(move: MovedStore) -> list[Line]:
        """What was checked for a provider without a lock (local Qdrant's lock is the check its lines imply)."""
        if move.provider in ("", "qdrant") or not move.held_check:
            return []
        return [[(f"  not held: {move.held_check}", "")]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "to_dir": self.to_dir,
            "dry_run": self.dry_run,
            "moves": [m.to_dict() for m in self.moves],
            "skipped": list(self.skipped),
            "config_snippet": self.config_snippet,
            "config_file": self.config_file,
            "config_changes": list(self.config_changes),
            "config_comments_kept": self.config_comments_kept,
            "source_removed": self.source_removed,
            "resumed": self.resumed,
        }


# ---------------------------------------------------------------------------------------------- planning

COPY, RECOPY, SWITCH, DONE, REMOVED = "copy", "recopy", "switch", "done", "removed"


@dataclass
class _Move:
    role: str
    kind: str  # the vector store's provider ("qdrant", "chroma", "faiss"), or "sqlite" | "file"
    source: str  # the configured path
    store: str  # the path that holds the data (``source`` with its link resolved)
    destination: str
    state: str  # COPY, RECOPY (a stale copy of ours to make again), SWITCH, DONE, REMOVED
    signature: Signature | None = None  # the store's signature when it was copied
    done: bool = False  # journaled ("switched"): the old path became the link (its data deleted): never copied again
    resumed: bool = False
    copied: bool = False  # copied by this run (an exception before the switch removes the copy again)
    counts_before: dict[str, int] = field(default_factory=dict)
    counts_after: dict[str, int] = field(default_factory=dict)
    sampled: int = 0
    integrity: str | None = None
    notes: list[str] = field(default_factory=list)
    collection: str = "mem0"
    held_check: str = ""

    @property
    def folder(self) -> bool:
        return self.kind in FOLDER_PROVIDERS

    def entry(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "kind": self.kind,
            "source": self.source,
            "store": self.store,
            "destination": self.destination,
            "signature": [list(s) for s in self.signature] if self.signature is not None else None,
            "switched": self.done,
        }


def _real(path: str) -> str:
    return os.path.realpath(path) if os.path.islink(path) else path


def _destination_taken(m: _Move) -> bool:
    if m.folder:
        return os.path.lexists(m.destination) and not (os.path.isdir(m.destination) and not os.listdir(m.destination))
    return os.path.lexists(m.destination)


def _signature(m: _Move) -> Signature:
    return folder_signature(m.store) if m.folder else file_signature(m.store)


def unsupported_message(provider: str) -> str:
    """The one line for a vector store relocate has no module for: what is unsupported, and what to do."""
    return (
        f"cannot relocate a {provider!r} vector store: mem0-hygiene moves local Qdrant, Chroma and FAISS folders "
        f"(and reads {', '.join(SUPPORTED)}); nothing was moved. Move it with the store's own tools and point "
        "vector_store.config at the new place (move history.db and the ledger at the same moment), or open an "
        "issue asking for the provider"
    )


def _vector_move(vs: StoreLocation, to: str, include_sqlite: bool, skipped: list[str]) -> tuple[_Move | None, bool]:
    """The vector store's move (None when it does not move) and whether it is on a server (it stays there; the
    SQLite files move alone)."""
    if vs.provider not in SUPPORTED:
        raise UnsupportedVectorStore(unsupported_message(vs.provider))
    if vs.provider not in FOLDER_PROVIDERS or not vs.is_local or vs.path is None:
        where = vs.remote or vs.note or "not a local folder"
        skipped.append(
            f"vector_store: {vs.provider} on a server ({where}) keeps its data there and stays; only the SQLite "
            "files (history.db, the ledger) move"
        )
        return None, True
    name = vs.provider
    src, dst = vs.path, os.path.join(to, name if vs.provider != "qdrant" else QDRANT_DIRNAME)
    collection = vs.collection or "mem0"
    if links_to(src, dst):
        return _Move(
            "vector_store", name, src, src, dst, DONE, resumed=True, notes=[ALREADY], collection=collection
        ), False
    store = _real(src)
    if not os.path.isdir(store) or (name != "qdrant" and not is_store_folder(name, store)):
        label = "local Qdrant" if name == "qdrant" else name.capitalize()
        reason = f"there is no {label} store at {src}"
        if os.path.lexists(aside_path(store)):
            reason += (
                f" ({aside_path(store)} holds it, left by an interrupted move: start the app once, the "
                "drop-in finishes that move)"
            )
        if not include_sqlite:
            raise RelocateError(f"nothing to relocate: {reason}")
        skipped.append(reason)
        return None, False
    check_not_nested(store, dst)
    check_destination_free(dst)
    return _Move("vector_store", name, src, store, dst, COPY, collection=collection), False


def _file_move(role: str, kind: str, src: str, dst: str, moves: list[_Move], skipped: list[str]) -> None:
    if links_to(src, dst):
        moves.append(_Move(role, kind, src, src, dst, DONE, resumed=True, notes=[ALREADY]))
        return
    store = _real(src)
    if not os.path.isfile(store):
        skipped.append(f"{role}: {src} does not exist")
        return
    if os.path.realpath(store) == os.path.realpath(dst):
        skipped.append(f"{role}: already at {dst}")
        return
    if any(m.destination == dst for m in moves):
        raise RelocateError(f"{role} would land on {dst}, which another store takes")
    if os.path.lexists(dst):
        raise RelocateError(f"{dst} already exists; choose another destination (nothing was copied)")
    moves.append(_Move(role, kind, src, store, dst, COPY))


BESIDE_LEDGER = ("backup_record", "copies_registry")
"""The files that live beside the ledger, named after it, and move with it (:func:`side_file`)."""


def _beside_ledger(locations: list[StoreLocation], moves: list[_Move], role: str) -> tuple[str | None, str | None]:
    """The path of a file kept beside the ledger (the backup record, the registry of copies) now and after the
    move."""
    new = {m.role: m.destination for m in moves}
    history = location_of(locations, "history_db").path
    ledger = location_of(locations, "ledger").path
    return side_file(role, ledger, history), side_file(role, new.get("ledger", ledger), new.get("history_db", history))


def _plan_fresh(locations: list[StoreLocation], to: str, include_sqlite: bool) -> tuple[list[_Move], list[str]]:
    moves: list[_Move] = []
    skipped: list[str] = []
    vector, on_server = _vector_move(location_of(locations, "vector_store"), to, include_sqlite, skipped)
    if vector is not None:
        moves.append(vector)
    if include_sqlite or on_server:
        for role in ("history_db", "ledger"):
            loc = location_of(locations, role)
            if not loc.is_local or loc.path is None:
                skipped.append(f"{role}: {loc.path or loc.remote} is not a file")
                continue
            _file_move(role, "sqlite", loc.path, os.path.join(to, os.path.basename(loc.path)), moves, skipped)
        for role in BESIDE_LEDGER:
            now, after = _beside_ledger(locations, moves, role)
            if now and after and now != after and os.path.lexists(now):
                _file_move(role, "file", now, after, moves, [])
    if not moves:
        raise RelocateError("nothing to relocate: " + "; ".join(skipped))
    return moves, skipped


def _plan_resumed(journal: dict[str, Any], locations: list[StoreLocation], to: str, remove_source: bool) -> list[_Move]:
    configured = {role: location_of(locations, role).path for role in CONFIG_KEYS}  # type: ignore[arg-type]
    moves = []
    for e in journal["moves"]:
        m = _Move(
            e["role"],
            e["kind"],
            e["source"],
            e["store"],
            e["destination"],
            "",
            signature_of(e.get("signature")),
            done=bool(e.get("switched")),
            resumed=True,
            collection=location_of(locations, "vector_store").collection or "mem0",
        )
        here = configured.get(m.role, m.source)
        if here is None or os.path.abspath(here) not in (m.source, m.store, m.destination):
            raise RelocateError(
                f"{to} holds a relocation an earlier run left unfinished, of {m.source} ({m.role}), but this "
                f"config's {m.role} is {here}: run the same command with the config it was started with, or "
                "choose another destination"
            )
        if links_to(m.store, m.destination):
            m.state = DONE
        elif m.done:  # done: the destination is the store; whatever the old path holds now came after
            m.state = _switched_state(m, to)
        elif not os.path.lexists(m.store):
            if not has_store(m.destination, folder=m.folder):
                raise RelocateError(
                    f"neither {m.store} nor {m.destination} holds the {m.role} any more; nothing "
                    f"was changed. Restore it from a backup, then remove {to}'s journal"
                )
            m.state = SWITCH if (os.path.lexists(aside_path(m.store)) or not remove_source) else REMOVED
        elif not _destination_taken(m):
            m.state = COPY
        elif m.signature is not None and _signature(m) == m.signature:
            m.state = SWITCH
        else:
            m.state = RECOPY  # our copy, but the source changed since (or the copy was never recorded)
        moves.append(m)
    return moves


def _switched_state(m: _Move, to: str) -> str:
    """The state of a move the journal records as switched whose old path no longer links to the destination:
    ``remove_source`` took the link away. It is never copied again: a store at the old path now was made after
    the move (an app started with the old config creates empty stores) and is left as it is."""
    check_done(
        m.done,
        has_store(m.destination, folder=m.folder),
        lambda: RelocateError(
            f"the journal in {to} records {m.role} as moved to {m.destination}, which no longer "
            f"holds it; nothing was changed. Restore it from a backup, then remove {to}'s journal"
        ),
    )
    if os.path.lexists(m.store):
        m.notes.append(
            f"{m.store} holds a store made after the move (an app started with the old config?): left "
            f"as it is, not copied; the moved store is at {m.destination}"
        )
    return REMOVED


def _snippet(moves: list[_Move], locations: list[StoreLocation]) -> dict[str, Any]:
    snippet: dict[str, Any] = {}
    for m in moves:
        if m.role == "vector_store":
            vs = location_of(locations, "vector_store")
            snippet["vector_store"] = {
                "provider": m.kind,
                "config": {"path": m.destination, "collection_name": vs.collection or "mem0"},
            }
        elif m.role == "history_db":
            snippet["history_db_path"] = m.destination
        elif m.role == "ledger":
            snippet["hygiene"] = {"ledger_path": m.destination}
    return snippet


def _plan_rewrite(path: str | os.PathLike[str], moves: list[_Move]) -> ConfigRewrite:
    """The rewrite of the app's config file, checked before anything moves: the file must describe this
    deployment (each moved store's key names its old path, or already the new one, or is unset for a
    defaulted path)."""
    updates = {CONFIG_KEYS[m.role]: m.destination for m in moves if m.role in CONFIG_KEYS}
    rewrite = plan_config_rewrite(path, updates)
    locations = list(resolve(read_config_source(rewrite.path)).locations)
    for m in moves:
        if m.role not in CONFIG_KEYS:
            continue
        here = location_of(locations, m.role).path  # type: ignore[arg-type]
        if here is None or os.path.abspath(here) not in (m.source, m.store, m.destination):
            raise ConfigError(
                f"--update-config {rewrite.path}: its {m.role} is {here}, but the store being moved is at "
                f"{m.source}; give the config file of this deployment (the one --config reads)"
            )
    return rewrite


def _counts(m: _Move, path: str, *, ours: bool = False) -> dict[str, int]:
    if not os.path.exists(path):
        return {}
    if m.folder:  # a dry run's count (not ``ours``) leaves the store as it was, byte for byte
        return folder_counts(m.kind, path, m.collection, scratch=not ours)
    if m.kind == "sqlite" and ours:
        # our own copy: read-write (nothing is written), as the last read-only connection to a WAL database
        # would leave its -wal and -shm files behind
        with contextlib.closing(connect(path)) as conn:
            return table_counts(conn)
    if m.kind == "sqlite":
        return table_counts(path)
    return {"bytes": os.path.getsize(path)}


# ---------------------------------------------------------------------------------------------- doing


def _copy(m: _Move, sample_size: int) -> bool:
    """Stage one move: copy its store into the destination and verify the copy (False: nothing to copy)."""
    if m.state == RECOPY:
        remove_path(m.destination)
        if m.kind == "sqlite":
            remove_sidecars(m.destination)
        m.state = COPY
    if m.state != COPY:
        return False
    if m.kind == "qdrant":
        qcopy = copy_store_verified(m.store, m.destination, sample_size)
        m.counts_before, m.counts_after, m.sampled = qcopy.counts_before, qcopy.counts_after, qcopy.sampled
        m.signature = qcopy.signature
    elif m.folder:
        fcopy = copy_folder_verified(m.kind, m.store, m.destination, m.collection)
        m.counts_before, m.counts_after, m.sampled = fcopy.counts_before, fcopy.counts_after, fcopy.checksummed
        m.signature = fcopy.signature
    elif m.kind == "sqlite":
        scopy = copy_database(m.store, m.destination)
        m.counts_before, m.counts_after, m.integrity = scopy.counts_before, scopy.counts_after, scopy.integrity
        m.signature = scopy.signature
    else:
        m.signature = copy_file_verified(m.store, m.destination)
        m.counts_before = m.counts_after = {"bytes": os.path.getsize(m.destination)}
    m.copied = True
    m.state = SWITCH
    return True


def _uncopy(m: _Move) -> None:
    """Undo this run's copy of a move: nothing was switched yet, the old path still holds the store."""
    if m.copied:
        remove_path(m.destination)


def _switch(m: _Move) -> None:
    if m.state in (SWITCH, DONE):  # an interrupted switch is finished first (a moved-from copy left, ...)
        done = finish_swap(m.store, m.destination, folder=m.folder)
        if done:
            m.notes.append(done)
    if m.state == SWITCH:
        if not links_to(m.store, m.destination):
            if not os.path.lexists(m.store):
                os.symlink(m.destination, m.store, target_is_directory=m.folder)
            elif m.folder:
                swap_folder_for_link(m.store, m.destination, m.signature, lock=m.kind == "qdrant")
            else:
                swap_file_for_link(m.store, m.destination, m.signature, sqlite=m.kind == "sqlite")
        m.state = DONE
    if m.state == DONE and m.source != m.store and os.path.islink(m.source) and os.readlink(m.source) != m.destination:
        replace_with_link(m.source, m.destination)  # the configured path linked to the moved store: point it here


def _remove_links(m: _Move) -> None:
    for path in dict.fromkeys((m.source, m.store)):
        if os.path.islink(path) and links_to(path, m.destination):
            os.unlink(path)
    m.state = REMOVED


def relocate(
    config: dict[str, Any] | None,
    to_dir: str | os.PathLike[str],
    *,
    include_sqlite: bool = False,
    dry_run: bool = False,
    remove_source: bool = False,
    sample_size: int = DEFAULT_SAMPLE,
    update_config: str | os.PathLike[str] | None = None,
) -> RelocateResult:
    """Move the local vector-store folder of ``config`` (local Qdrant, Chroma or FAISS; and with ``include_sqlite``
    history.db, the ledger, the backup record and the registry of copies) to ``to_dir``, leaving a link at each old
    path. A vector store on a server (pgvector, a Qdrant server) stays there, said in ``skipped``, and the SQLite
    files move without ``include_sqlite``; a provider the seam lacks raises
    :class:`~mem0_hygiene.stores.vector.UnsupportedVectorStore`.

    The store folder lands in ``TO_DIR/PROVIDER`` (``qdrant``, ``chroma``, ``faiss``), the SQLite files keep their
    names (``TO_DIR/history.db``, ``TO_DIR/hygiene.db``), the backup record and the registry of copies follow the
    ledger (``TO_DIR/hygiene.backups.json``, ``TO_DIR/hygiene.copies.json``). Refuses
    when another process holds the store (:class:`~mem0_hygiene.errors.StoreLocked`, naming the remedies: local
    Qdrant's lock; for Chroma and FAISS, which take none, a process with a file of the folder open) or
    a destination is taken by something that is not this relocation's own copy
    (:class:`~mem0_hygiene.errors.RelocateError`). Each store is copied and verified; then each old path
    becomes a link to its new path (the moved-from data is deleted once the link is in place), so every
    reader of the old path sees the same store. ``remove_source`` removes the links too. ``update_config``
    names the app's JSON/YAML config file to rewrite with the new paths (checked before anything moves: it
    must describe this deployment; a ``module:ATTRIBUTE`` is refused); without it, ``config_snippet`` holds
    the keys to set by hand. A run killed at any point is finished by running it again (see the module
    docstring); a resumed run keeps the interrupted run's ``remove_source``.

    ``dry_run`` checks the same preconditions, reads the source counts, and writes nothing.
    """
    to = os.path.abspath(os.path.expanduser(os.fspath(to_dir)))
    if os.path.exists(to) and not os.path.isdir(to):
        raise RelocateError(f"{to} is not a folder")
    target = resolve(config)
    refuse_while_restoring(target.ledger_path, target.history_path, target.vector_path, "relocate the stores")
    locations = list(target.locations)
    journal = read_journal(to) if os.path.isdir(to) else None
    skipped: list[str] = []
    if journal is not None:
        remove_source = remove_source or bool(journal.get("remove_source"))
        moves = _plan_resumed(journal, locations, to, remove_source)
    else:
        moves, skipped = _plan_fresh(locations, to, include_sqlite)
    rewrite = _plan_rewrite(update_config, moves) if update_config is not None else None
    for m in moves:
        if m.folder and m.state != REMOVED:
            m.held_check = check_not_held(m.kind, m.store if os.path.lexists(m.store) else m.destination, "relocate")
    snippet = _snippet(moves, locations)

    if dry_run:
        for m in moves:
            m.counts_before = _counts(m, m.store if os.path.lexists(m.store) else m.destination)
        return _result(to, True, moves, skipped, snippet, rewrite, journal is not None, remove_source)

    work = remove_source or journal is not None or any(m.state != DONE for m in moves)
    run = Swap(
        moves, SwapJournal(lambda entries: write_journal(to, entries, remove_source), lambda: remove_journal(to))
    )
    if work:
        os.makedirs(to, exist_ok=True)
        if journal is None:
            run.record()
        # an exception while copying removes this run's copies (and a journal it wrote): the destination is as found
        with run.attempt(_uncopy, drop_journal=journal is None):
            run.stage(
                lambda m: _copy(m, sample_size), counted("copying and verifying the stores", moves), record_each=True
            )
    for m in moves:
        if not m.counts_after:  # not copied by this run: the earlier run verified the copy against the source
            m.counts_before = m.counts_after = _counts(m, m.destination, ours=True)
    # also when all were moved before: a crash's half switch is finished
    run.swap(_switch, counted("switching to the copies", moves))
    if remove_source:
        run.mark_done()  # journaled before any link goes: a rerun then never copies an old path again
    if rewrite is not None:
        rewrite = _plan_rewrite(rewrite.path, moves)  # read again just before writing: the file may have changed
        write_config_file(rewrite)
    if remove_source:
        for m in moves:
            _remove_links(m)
    if work:
        run.finish()
    return _result(to, False, moves, skipped, snippet, rewrite, journal is not None, remove_source)


def _result(
    to: str,
    dry_run: bool,
    moves: list[_Move],
    skipped: list[str],
    snippet: dict[str, Any],
    rewrite: ConfigRewrite | None,
    resumed: bool,
    remove_source: bool,
) -> RelocateResult:
    done = tuple(
        MovedStore(
            role=m.role,
            source=m.source,
            destination=m.destination,
            counts_before=m.counts_before,
            counts_after={} if dry_run else m.counts_after,
            sampled=m.sampled,
            integrity=m.integrity,
            linked=not dry_run and not remove_source,
            source_removed=remove_source,
            resumed=m.resumed,
            note="; ".join(m.notes),
            provider=m.kind if m.folder else "",
            held_check=m.held_check,
        )
        for m in moves
    )
    return RelocateResult(
        to_dir=to,
        dry_run=dry_run,
        moves=done,
        skipped=tuple(skipped),
        config_snippet=snippet,
        config_file=rewrite.path if rewrite else None,
        config_changes=tuple(k for k, _old, _new in rewrite.changes) if rewrite else (),
        config_comments_kept=rewrite.comments_kept if rewrite else True,
        resumed=resumed,
    )


__all__ = ["DEFAULT_SAMPLE", "MovedStore", "RelocateResult", "relocate", "relocate_qdrant_folder"]
