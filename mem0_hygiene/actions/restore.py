"""Restoring a backup set: every store back together, or none.

:func:`restore` checks a set written by :func:`mem0_hygiene.actions.backup.backup` (the format:
:mod:`mem0_hygiene.stores.backup_set`; manifest, every file's checksum, nothing missing or extra),
refuses while a local Qdrant store is open, moves what it replaces aside (``<store>.replaced-STAMP``,
never deleted; SQLite sidecars keep their pairing, e.g. ``history.db.replaced-STAMP-wal``), puts all
stores back together, verifies the counts, and undoes everything when a step fails. Each store moved
aside is registered as a copy (``hygiene.copies.json``, :mod:`mem0_hygiene.stores.copies`) before it is
moved, so ``where``, the audit and ``forget --scrub`` see it even after a crash. The staging copies
(``.<store>.restoring-STAMP`` beside each store) are removed when the restore ends, and those a crash left
behind are removed at the start of the next restore.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import BackupError, HygieneError, StoreLocked
from ..render.tables import Line, LinesView, counts_text
from ..stores import qdrant as qdrant_local
from ..stores.backup_record import update_record
from ..stores.backup_set import check_set, free_name, read_manifest, set_files, sha256_of, time_stamp
from ..stores.copies import (
    clean_leftovers,
    find_leftovers,
    holding,
    register_copy,
    size_of,
    temporary_name,
    unregister_copy,
)
from ..stores.sqlite import SIDECARS, connect, integrity_check, sidecars, table_counts
from ..target import is_memory
from ..timeutil import as_utc, to_iso
from .backup import backup_target, copies_path, record_path


@dataclass(frozen=True)
class RestoredStore:
    """One store put back by :func:`restore`.

    Fields:
        role: "vector_store", "history_db" or "ledger".
        target: where it now lives (the config's path).
        source: the file or folder in the backup it came from (None: the backup had none, so the
            current one was only moved aside).
        replaced_to: where the store it replaced was moved (None when there was nothing there).
        counts: points per collection or rows per table, as verified after the restore (in a dry
            run: as the manifest says).
    """

    role: str
    target: str
    source: str | None
    replaced_to: str | None
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "target": self.target, "source": self.source,
                "replaced_to": self.replaced_to, "counts": dict(self.counts)}


@dataclass(frozen=True)
class RestoreResult(LinesView):
    """What :func:`restore` did (or, with ``dry_run``, would do).

    Fields:
        src: the backup folder.
        dry_run: the set was checked and the plan made; nothing was moved.
        restored_at: when (UTC ISO).
        backup_created_at: when the backup was taken.
        checked_files: how many files of the set were checked against their sha256.
        stores: each store restored (or to be restored), where it went and what it replaced.
        leftovers: staging copies of an earlier, interrupted restore that were removed at the start (in a
            dry run: that would be removed).
        copies_path: the registry of copies the replaced stores are listed in.
        notes: anything else worth saying.
    """

    src: str
    dry_run: bool
    restored_at: str
    backup_created_at: str
    checked_files: int
    stores: tuple[RestoredStore, ...]
    leftovers: tuple[str, ...] = ()
    copies_path: str | None = None
    notes: tuple[str, ...] = ()

    def store(self, role: str) -> RestoredStore | None:
        for s in self.stores:
            if s.role == role:
                return s
        return None

    def _lines(self) -> list[Line]:
        head = "dry run: would restore" if self.dry_run else "restored"
        out: list[Line] = [[(f"{head} the backup taken {self.backup_created_at} from {self.src} "
                             f"({self.checked_files} files checked against their sha256)", "")]]
        for s in self.stores:
            line = f"  {s.role}: {s.source or '(none in the backup)'} -> {s.target} ({counts_text(s.counts)})"
            if s.replaced_to:
                line += f"; the current one {'would be' if self.dry_run else 'was'} moved to {s.replaced_to}"
            out.append([(line, "")])
        for old in self.leftovers:
            out.append([(f"  {'would remove' if self.dry_run else 'removed'} the staging copy of an interrupted "
                         f"restore: {old}", "")])
        if self.copies_path and not self.dry_run and any(s.replaced_to for s in self.stores):
            out.append([(f"  the replaced stores are listed as copies in {self.copies_path} (where, the audit and "
                         "forget --scrub read it)", "")])
        out += [[("  ", ""), ("note", "yellow"), (f": {note}", "")] for note in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dry_run": self.dry_run,
            "restored_at": self.restored_at,
            "backup_created_at": self.backup_created_at,
            "checked_files": self.checked_files,
            "stores": [s.to_dict() for s in self.stores],
            "leftovers": list(self.leftovers),
            "copies_path": self.copies_path,
            "notes": list(self.notes),
        }



# ---------------------------------------------------------------------------------------------- restore


@dataclass
class _Step:
    role: str
    target: str
    source: str | None  # absolute path in the backup
    kind: str  # "folder" | "sqlite"
    counts: dict[str, int]
    journal_mode: str = "delete"
    staged: str | None = None
    aside: str | None = None
    placed: bool = False
    moved: list[tuple[str, str]] = field(default_factory=list)  # (original, aside) pairs moved
    registered: bool = False  # the aside path is listed in the registry of copies
    register_note: str = ""  # why it could not be listed


def _aside_name(path: str, stamp: str) -> str:
    """``<path>.replaced-STAMP`` (``-2``, ``-3``, ... when taken), free for the path and its SQLite sidecars."""
    base = f"{path}.replaced-{stamp}"
    name, n = base, 1
    while os.path.lexists(name) or any(os.path.lexists(name + s) for s in SIDECARS):
        n += 1
        name = f"{base}-{n}"
    return name


def _restore_message(path: str) -> str:
    return (
        f"cannot restore into the local Qdrant store at {path}: another Qdrant client holds its lock "
        f"({qdrant_local.lock_file(path)}), most likely the running app. A restore replaces the stores under "
        "the app, so it has no in-process route: stop the app (close its Memory), then run the restore again"
    )


def restore(
    target_config: dict[str, Any] | None,
    src: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    now: datetime | None = None,
) -> RestoreResult:
    """Put a backup set made by :func:`backup` back in place of the stores of ``target_config``.

    Steps: read the manifest and check every file (sha256 and size; anything missing, extra or
    different refuses the whole set: :class:`~mem0_hygiene.errors.BackupError`); refuse while a
    Qdrant client holds the local store (:class:`~mem0_hygiene.errors.StoreLocked`: stop the app;
    there is no in-process route); copy each store next to its target and check the copy; move each
    current store aside to ``<store>.replaced-STAMP`` (kept, never deleted; SQLite ``-wal``/``-shm``
    files go with their database) and move the copies in; open the restored stores and compare their
    counts with the manifest. If any step fails, everything moved is put back as it was. Backups of a
    Qdrant server (a server-side snapshot) cannot be restored from here. ``dry_run`` checks the set
    and returns the plan.
    """
    if is_memory(target_config):
        raise BackupError("restore replaces the stores under the app: pass the app's config dict (not a live "
                          "Memory), with the app stopped")
    src_s = os.path.abspath(os.path.expanduser(os.fspath(src)))
    if not os.path.isdir(src_s):
        raise BackupError(f"there is no backup folder at {src_s}")
    doc = read_manifest(src_s)
    problems = check_set(src_s, doc)
    if problems:
        raise BackupError(
            f"refusing to restore {src_s}: the backup set is incomplete or damaged ("
            + "; ".join(problems[:10]) + (f"; and {len(problems) - 10} more" if len(problems) > 10 else "")
            + "). Nothing was changed; pick another backup"
        )
    vs = doc["stores"].get("vector_store") or {}
    if vs.get("kind") != "local_qdrant":
        raise BackupError(
            f"{src_s} holds a Qdrant server snapshot ({vs.get('taken', 'no vector store')}), not a copy of a "
            "local folder; recover the snapshot on the server, then restore history.db and the ledger by hand "
            "(nothing was changed)"
        )
    tgt = backup_target(target_config)
    if not tgt.vector_location.is_local or not tgt.vector_path:
        raise BackupError("the target config's vector store is a Qdrant server; this backup holds a local "
                          "folder. Point vector_store.config.path at the folder to restore into")
    if qdrant_local.is_locked(tgt.vector_path):
        raise StoreLocked(_restore_message(tgt.vector_path))
    moment = as_utc(now) if now is not None else tgt.now()
    stamp = time_stamp(moment)
    notes: list[str] = []
    # a store path that is a link (left by a relocation) is restored where it points: replacing the link
    # itself would leave a second live store behind it
    steps = [_Step("vector_store", os.path.realpath(tgt.vector_path), os.path.join(src_s, vs["folder"]), "folder",
                   dict(vs.get("counts") or {}))]
    if str(tgt.collection) not in (vs.get("counts") or {}) and vs.get("counts"):
        notes.append(f"the backup has collections {sorted(vs['counts'])}, the config uses {tgt.collection!r}")
    for role, path in (("history_db", tgt.history_path), ("ledger", tgt.ledger_path)):
        path = path if path == ":memory:" else os.path.realpath(path)
        store = doc["stores"].get(role)
        if path == ":memory:":
            notes.append(f"{role} is in memory in the target config: not restored")
            continue
        if store is None:
            notes.append(f"the backup has no {role}: the current one (if any) is moved aside, none is put back")
        steps.append(_Step(role, path, os.path.join(src_s, store["file"]) if store else None, "sqlite",
                           dict((store or {}).get("counts") or {}),
                           journal_mode=str((store or {}).get("journal_mode") or "delete").lower()))
    for step in steps:
        if step.kind == "folder" and os.path.lexists(step.target):
            step.aside = _aside_name(step.target, stamp)
        elif step.kind == "sqlite" and (os.path.lexists(step.target) or sidecars(step.target)):
            step.aside = _aside_name(step.target, stamp)

    if dry_run:
        return RestoreResult(
            src=src_s, dry_run=True, restored_at=to_iso(moment), backup_created_at=str(doc.get("created_at", "")),
            checked_files=len(doc["files"]),
            stores=tuple(RestoredStore(s.role, s.target, s.source, s.aside, s.counts) for s in steps),
            leftovers=tuple(p for s in steps for p in _leftovers(s.target, remove=False)),
            copies_path=copies_path(tgt), notes=tuple(notes),
        )

    leftovers: list[str] = []
    for step in steps:  # staging copies a crashed restore left behind
        leftovers += _leftovers(step.target, remove=True, notes=notes)
    registry = copies_path(tgt)
    with contextlib.ExitStack() as held:
        try:
            _stage_and_swap(steps, src_s, doc, stamp, tgt.vector_path, registry, to_iso(moment), held)
            verified = _verify_restored(steps)
        except BaseException as exc:
            undo_problems = _undo(steps)
            unregister_copy(registry, [s.aside for s in steps if s.aside and s.registered and not s.moved])
            if undo_problems:
                raise BackupError(
                    f"the restore failed ({exc}) and putting the replaced stores back also failed: "
                    + "; ".join(undo_problems) + ". The replaced stores are in the *.replaced-" + stamp + " paths"
                ) from exc
            if isinstance(exc, HygieneError) or not isinstance(exc, Exception):
                raise
            raise BackupError(f"the restore failed ({type(exc).__name__}: {exc}); everything was put back as it "
                              "was") from exc
    notes += [n for n in dict.fromkeys(s.register_note for s in steps) if n]
    note = update_record(record_path(tgt), restore={"src": src_s, "at": to_iso(moment),
                                                    "backup_created_at": doc.get("created_at")})
    if note:
        notes.append(note.replace("this backup", "this restore"))
    return RestoreResult(
        src=src_s, dry_run=False, restored_at=to_iso(moment), backup_created_at=str(doc.get("created_at", "")),
        checked_files=len(doc["files"]),
        stores=tuple(RestoredStore(s.role, s.target, s.source, s.aside if s.moved else None, verified[s.role])
                     for s in steps),
        leftovers=tuple(leftovers), copies_path=registry, notes=tuple(notes),
    )


def _leftovers(target: str, *, remove: bool, notes: list[str] | None = None) -> list[str]:
    """Staging copies (``.<store>.restoring-*``) of an interrupted restore beside ``target``: found, or removed."""
    parent, stem = os.path.dirname(target), os.path.basename(target)
    if not remove:
        return find_leftovers(parent, "restore", stems=[stem])
    removed, problems = clean_leftovers(parent, "restore", stems=[stem])
    if notes is not None:
        notes += [f"could not remove the staging copy of an interrupted restore {p}" for p in problems]
    return removed


def _stage_and_swap(steps: list[_Step], src: str, doc: dict[str, Any], stamp: str, vector_path: str,
                    registry: str | None, at: str, held: contextlib.ExitStack) -> None:
    """Copy each store of the set beside its target and check it, then move each current store aside
    (registered as a copy first) and each staged copy in. Any exception leaves ``steps`` saying what moved."""
    for step in steps:  # stage: copies beside their targets (same filesystem: renames are atomic)
        if step.source is None:
            continue
        parent = os.path.dirname(step.target)
        os.makedirs(parent, exist_ok=True)
        step.staged = os.path.join(parent, free_name(parent, temporary_name(os.path.basename(step.target),
                                                                            "restore") + stamp))
        if step.kind == "folder":
            shutil.copytree(step.source, step.staged, symlinks=True)
        else:
            shutil.copyfile(step.source, step.staged)
        held.enter_context(holding(step.staged))  # a restore starting meanwhile leaves it alone
        _check_staged(step, src, doc)
        if step.kind == "sqlite" and step.journal_mode == "wal":
            _set_wal(step.staged)
    if qdrant_local.is_locked(vector_path):
        raise StoreLocked(_restore_message(vector_path))
    for step in steps:  # swap: current aside, copy in
        if step.aside is not None:
            # listed before it moves: a crash right after the rename leaves it accounted for
            step.register_note = register_copy(registry, "replaced_aside", step.aside, roles=[step.role],
                                               created_at=at, note=f"replaced by the restore of {src}",
                                               size_bytes=size_of(step.target))
            step.registered = not step.register_note
            for original in [step.target, *sidecars(step.target)] if step.kind == "sqlite" else [step.target]:
                if not os.path.lexists(original):
                    continue
                aside = step.aside + original[len(step.target):]
                os.rename(original, aside)
                step.moved.append((original, aside))
        if step.staged is not None:
            os.rename(step.staged, step.target)
            step.staged = None
            step.placed = True


def _check_staged(step: _Step, src: str, doc: dict[str, Any]) -> None:
    """The staged copy holds exactly the backup's bytes."""
    assert step.staged is not None and step.source is not None
    rel_root = os.path.relpath(step.source, src).replace(os.sep, "/")
    if step.kind == "folder":
        want = {rel[len(rel_root) + 1:]: meta for rel, meta in doc["files"].items() if rel.startswith(rel_root + "/")}
        got = set_files(step.staged)
        if set(got) != set(want):
            raise BackupError(f"the staged copy of {step.role} does not hold the backup's files")
        for rel, full in got.items():
            if sha256_of(full) != want[rel]["sha256"]:
                raise BackupError(f"the staged copy of {step.role}/{rel} differs from the backup")
    elif sha256_of(step.staged) != doc["files"][rel_root]["sha256"]:
        raise BackupError(f"the staged copy of {step.role} differs from the backup")


def _set_wal(path: str) -> None:
    """Put a restored copy back in WAL mode, as its source was (the ledger: readers beside one writer)."""
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()


def _verify_restored(steps: list[_Step]) -> dict[str, dict[str, int]]:
    """Open every restored store and compare its counts with the manifest's."""
    got: dict[str, dict[str, int]] = {}
    for step in steps:
        if not step.placed:
            got[step.role] = {}
            continue
        if step.kind == "folder":
            try:
                with qdrant_local.opened(step.target, "verify the restored") as client:
                    counts = qdrant_local.client_counts(client)
            except StoreLocked:
                raise
            except Exception as exc:
                raise BackupError(f"the restored vector store at {step.target} cannot be opened: {exc}") from exc
        else:
            result = integrity_check(step.target)
            if result != "ok":
                raise BackupError(f"the restored {step.role} at {step.target} failed PRAGMA integrity_check: {result}")
            conn = connect(step.target)
            try:
                counts = table_counts(conn)
            finally:
                conn.close()
        if counts != step.counts:
            raise BackupError(f"the restored {step.role} holds {counts}, the backup's manifest says {step.counts}")
        got[step.role] = counts
    return got


def _undo(steps: list[_Step]) -> list[str]:
    """Put back what a failed restore moved; returns what could not be put back."""
    problems: list[str] = []
    for step in reversed(steps):
        try:
            if step.placed:
                if step.kind == "folder":
                    shutil.rmtree(step.target)
                else:
                    for path in [step.target, *sidecars(step.target)]:
                        os.unlink(path)
                step.placed = False
            for original, aside in reversed(step.moved):
                os.rename(aside, original)
            step.moved.clear()
        except OSError as exc:
            problems.append(f"{step.role}: {exc}")
        if step.staged is not None:
            if os.path.isdir(step.staged):
                shutil.rmtree(step.staged, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(step.staged)
    return problems


