"""Restoring a backup set: every store back together, or none.

:func:`restore` checks a set written by :func:`mem0_hygiene.actions.backup.backup` (the format:
:mod:`mem0_hygiene.stores.backup_set`; manifest, every file's checksum, nothing missing or extra),
refuses while a local Qdrant store is open, moves what it replaces aside (``<store>.replaced-STAMP``,
never deleted; SQLite sidecars keep their pairing, e.g. ``history.db.replaced-STAMP-wal``), puts all
stores back together, verifies the counts, and undoes everything when a step fails. Before its first rename
it writes a journal beside the ledger (:mod:`mem0_hygiene.stores.restore_journal`): a restore killed midway is
finished by running it again with the same set (or rolled back first by a restore of another set), and until
then nothing opens the stores. A set holding a link, a device or FIFO, a file hard-linked outside it, or a
manifest path outside it is refused before anything is read through it. Each store moved
aside is registered as a copy (``hygiene.copies.json``, :mod:`mem0_hygiene.stores.copies`) before it is
moved, so ``where``, the audit and ``forget --scrub`` see it even after a crash. The staging copies
(``.<store>.restoring-STAMP`` beside each store) are removed when the restore ends, and those a crash left
behind are removed at the start of the next restore.

The order (stage, journal, swap, roll back on failure, finish on rerun) is the swap engine's
(:mod:`mem0_hygiene.stores.swap`); this module holds the restore's steps. Its result is data
(:mod:`.restore_result`), its wording :mod:`.restore_text`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import BackupError, HygieneError, StoreLocked
from ..progress import step as progress_step
from ..stores import qdrant as qdrant_local
from ..stores.backup_record import update_record
from ..stores.backup_set import (
    MANIFEST,
    check_set,
    free_name,
    parse_backup_time,
    read_manifest,
    set_entries,
    sha256_of,
    time_stamp,
    unsafe_entries,
)
from ..stores.copies import (
    clean_leftovers,
    find_leftovers,
    holding,
    register_copy,
    size_of,
    temporary_name,
    unregister_copy,
)
from ..stores.database_url import is_database_url as is_postgres_url
from ..stores.erasures import erasures_undone_by, receipts_folder
from ..stores.ledger import open_ledger, scratch_copy
from ..stores.ledger import postgres_copy as pg
from ..stores.ledger.postgres import redact
from ..stores.ledger.tables import quote
from ..stores.restore_journal import (
    finish_command,
    read_journal,
    remove_journal,
    unfinished_message,
    write_journal,
)
from ..stores.sqlite import SIDECARS, connect, integrity_check, sidecars, table_counts
from ..stores.staging import remove_path
from ..stores.swap import Swap, SwapJournal
from ..stores.vector import DATA_FOLDERS
from ..target import Target, is_memory
from ..timeutil import as_utc, to_iso
from .backup import SEAM_KIND, backup_target
from .restore_erasures import ReappliedErasure, planned, reapply
from .restore_result import RestoredStore, RestoreResult

# ---------------------------------------------------------------------------------------------- restore


@dataclass
class _Step:
    role: str
    target: str
    source: str | None  # absolute path in the backup
    kind: str  # "folder" | "sqlite" | "postgres" (target: the ledger's URL, redacted) | "pgvector" (the table's)
    counts: dict[str, int]
    journal_mode: str = "delete"
    local: str | None = None  # postgres, pgvector: what the staged copy and the replaced rows' copy are named after
    staged: str | None = None
    aside: str | None = None
    placed: bool = False
    register_note: str = ""  # why the aside copy could not be listed
    done: bool = False  # never set: a restore's source is the backup set, which keeps its data
    provider: str = "qdrant"  # a "folder" step: whose folder it is (Qdrant, or Chroma/FAISS through the seam)
    collection: str | None = None  # a "pgvector" step: the table

    def entry(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "target": self.target,
            "source": self.source,
            "kind": self.kind,
            "counts": dict(self.counts),
            "journal_mode": self.journal_mode,
            "staged": self.staged,
            "aside": self.aside,
            "local": self.local,
            "provider": self.provider,
            "collection": self.collection,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> _Step:
        return cls(
            role=str(d["role"]),
            target=str(d["target"]),
            source=d.get("source"),
            kind=str(d["kind"]),
            counts=dict(d.get("counts") or {}),
            journal_mode=str(d.get("journal_mode") or "delete"),
            staged=d.get("staged"),
            aside=d.get("aside"),
            local=d.get("local"),
            provider=str(d.get("provider") or "qdrant"),
            collection=d.get("collection"),
        )

    @property
    def path(self) -> str:
        """The file or folder on this machine the step's staged copy and aside copy are named after."""
        return self.local or self.target

    def originals(self) -> list[str]:
        """The suffixes of the files the current store is made of: sidecars first, the database (or folder) last."""
        return [*SIDECARS, ""] if self.kind == "sqlite" else [""]


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
    config_source: str | None = None,
    reapply_erasures: bool = False,
) -> RestoreResult:
    """Put a backup set made by :func:`backup` back in place of the stores of ``target_config``.

    Steps: read the manifest and check every file (sha256 and size; anything missing, extra or
    different, and any link, device or path outside the set, refuses the whole set:
    :class:`~mem0_hygiene.errors.BackupError`); refuse while a Qdrant client holds the local store
    (:class:`~mem0_hygiene.errors.StoreLocked`: stop the app; there is no in-process route); copy each
    store next to its target and check the copy; write the restore journal
    (:mod:`mem0_hygiene.stores.restore_journal`); move each current store aside to
    ``<store>.replaced-STAMP`` (registered as a copy first; kept, never deleted; SQLite ``-wal``/``-shm``
    files go with their database) and move the copies in; open the restored stores and compare their
    counts with the manifest; remove the journal. If any step fails, everything moved is put back as it
    was. A restore killed midway (the journal is there) is finished by running it again with the same set,
    or rolled back first by a restore of another set. Backups of a Qdrant server (a server-side snapshot)
    cannot be restored from here. A Chroma or FAISS folder in the set (``vector/``) is one more folder step
    of the journal, its restored points counted through the provider seam. A pgvector table is a step of the
    journal too (its target the database without credentials, named by ``--config`` in the finishing command):
    after the journal is written its current rows are saved to ``pgvector-TABLE.rows.replaced-STAMP`` beside it
    (the seam's rows snapshot, registered as a copy first, kept like the other replaced stores), then the set's
    rows are loaded in one transaction verified by count and checksum before it commits; undone, the saved rows
    are loaded back the same way (then removed), finished, the set's rows are loaded again.
    ``dry_run`` checks the set and returns the plan.

    A ledger on PostgreSQL (``hygiene.ledger_url``) gets the set's ledger rows (its ``hygiene.db``, dumped by a
    backup of a PostgreSQL ledger or copied from a SQLite one) in one transaction, as one step of the journal:
    under the ledger's advisory locks (no replica migrates or prunes meanwhile; its tables are locked against
    writes), the rows it replaces are first dumped to ``ledger-postgresql.db.replaced-STAMP`` beside the journal
    (registered as a copy), then every table is emptied and loaded, and the counts and sha256 of every table are
    compared before it commits. A set whose ledger came from a SQLite file that still exists is refused: it is
    unclear whether it belongs in that file or in PostgreSQL. ``config_source`` (the CLI's ``--config``) is
    what the command that finishes an interrupted restore names, since the ledger's URL is never written down.

    A set made before an erasure (``forget --user ID``) that did not scrub it would bring the erased person back:
    it is refused, naming the receipt, unless ``reapply_erasures``; then, once the stores are back and verified
    and before the journal is removed (nothing opens the stores meanwhile), each such erasure is applied again to
    what was restored and its receipt checked (:mod:`mem0_hygiene.actions.restore_erasures`; the result's
    ``reapplied``). Killed in between, the next restore of the same set finishes it.
    """
    if is_memory(target_config):
        raise BackupError(
            "restore replaces the stores under the app: pass the app's config dict (not a live "
            "Memory), with the app stopped"
        )
    src_s = os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(src))))
    tgt = backup_target(target_config)
    jpath = tgt.side_file("restore_journal")
    ledger_url = tgt.ledger_path if is_postgres_url(tgt.ledger_path) else None
    pending = read_journal(jpath)
    registry = tgt.side_file("copies_registry")
    moment = as_utc(now) if now is not None else tgt.now()
    notes: list[str] = []
    try:
        with progress_step("checking the backup set"):
            doc = _checked_set(src_s)
    except BackupError as exc:
        if pending is None or dry_run or jpath is None:
            raise
        _refuse_locked(tgt)
        _roll_back(pending, jpath, registry, ledger_url, tgt)
        raise BackupError(
            f"{exc}. The interrupted restore of {pending['src']} was rolled back: the stores are the "
            "ones it had replaced, as they were"
        ) from exc
    if pending is not None and jpath is not None and pending.get("state") == "erasing":
        return _finish_erasing(pending, jpath, src_s, doc, tgt, moment, registry, notes, dry_run)
    undone = erasures_undone_by(receipts_folder(tgt.ledger_path, tgt.history_path), src_s, str(doc.get("created_at")))
    if pending is not None and pending.get("src") == src_s and pending.get("reapply"):
        reapply_erasures = True  # the interrupted run was asked to: its finish does it too
    if undone and not reapply_erasures:  # the erasures this set would undo (receipt, its forget options)
        raise BackupError(
            f"{src_s} was made before the erasure recorded in {undone[-1][0]} and was not scrubbed by it (left out "
            "with --keep-backups, or not registered then): restoring it would bring the erased memories back. "
            "Restore it with --reapply-erasures (the erasure is applied again to what was restored before anything "
            f"opens it), or re-apply the erasure to the set first (`mem0-hygiene forget {undone[-1][1]}`, without "
            "--keep-backups), then restore (nothing was changed)"
        )
    to_reapply = [path for path, _flags in undone] if reapply_erasures else []
    vs = doc["stores"].get("vector_store") or {}
    seam = vs.get("kind") == SEAM_KIND
    if seam and vs.get("provider") != tgt.provider:
        raise BackupError(
            f"{src_s} holds a {vs.get('provider')} vector store and the target config uses {tgt.provider}; "
            "restore it into a deployment on the same provider (nothing was changed)"
        )
    if not seam and vs.get("kind") != "local_qdrant":
        raise BackupError(
            f"{src_s} holds a Qdrant server snapshot ({vs.get('taken', 'no vector store')}), not a copy of a "
            "local folder; recover the snapshot on the server, then restore history.db and the ledger by hand "
            "(nothing was changed)"
        )
    if not seam and (not tgt.vector_location.is_local or not tgt.vector_path):
        raise BackupError(
            "the target config's vector store is a Qdrant server; this backup holds a local "
            "folder. Point vector_store.config.path at the folder to restore into"
        )
    _refuse_locked(tgt)
    resume = pending is not None and pending["src"] == src_s and pending["state"] == "swapping"

    if pending is not None and jpath is not None:
        if dry_run:
            what = (
                "finish it"
                if resume
                else "roll it back first (the stores it replaced are put back), then restore this set"
            )
            notes.append(f"a restore of {pending['src']} was interrupted ({jpath}); this run would {what}")
            if resume:
                steps = [_Step.from_dict(d) for d in pending["steps"]]
                return _result(
                    src_s, doc, moment, steps, True, registry, notes, resumed="finished", reapplied=planned(to_reapply)
                )
        elif resume:
            return _roll_forward(pending, jpath, src_s, doc, tgt, moment, registry, notes)
        else:
            _roll_back(pending, jpath, registry, ledger_url, tgt)
            notes.append(
                f"the interrupted restore of {pending['src']} was rolled back first (the stores it had "
                "replaced were put back)"
            )

    stamp = time_stamp(moment)
    assert jpath is not None  # the vector store is a local folder
    steps = _plan(tgt, src_s, doc, vs, notes, jpath)
    for step in steps:
        if step.kind in ("postgres", "pgvector") or os.path.lexists(step.target) or sidecars(step.target):
            step.aside = _aside_name(step.path, stamp)

    if dry_run:
        return _result(
            src_s,
            doc,
            moment,
            steps,
            True,
            registry,
            notes,
            leftovers=tuple(p for s in steps for p in _leftovers(s.path, remove=False)),
            reapplied=planned(to_reapply),
        )

    leftovers: list[str] = []
    for step in steps:  # staging copies a crashed restore left behind
        leftovers += _leftovers(step.path, remove=True, notes=notes)
    journal: dict[str, Any] = {
        "src": src_s,
        "state": "swapping",
        "started_at": to_iso(moment),
        "stamp": stamp,
        "backup_created_at": doc.get("created_at"),
        "command": finish_command(
            src_s,
            tgt.vector_path,
            tgt.collection,
            tgt.history_path,
            tgt.ledger_path,
            config=config_source,
            reapply=bool(to_reapply),
            server_vector=seam and vs.get("provider") == "pgvector",
        ),
        "steps": [],
    }
    if to_reapply:
        journal["reapply"] = to_reapply
    run = Swap(steps, _journal(jpath, journal))
    with (
        contextlib.ExitStack() as held,
        run.attempt(_unstage, _failing(journal, jpath, registry, stamp, ledger_url, tgt)),
    ):
        with progress_step("copying the set beside the stores"):
            run.stage(lambda step: _stage_one(step, src_s, doc, stamp, held))
        _refuse_locked(tgt)
        run.record()  # from here on a crash is finished or undone by the next run
        with progress_step("swapping the stores"):
            run.swap(
                _swapper(src_s, doc, registry, to_iso(moment), held=held, stamp=stamp, ledger_url=ledger_url, tgt=tgt)
            )
        with progress_step("verifying the restored stores"):
            verified = _verify_restored(steps, ledger_url, tgt)
    return _finish(src_s, doc, tgt, moment, steps, verified, jpath, registry, notes, tuple(leftovers), journal=journal)


def _journal(jpath: str, journal: dict[str, Any]) -> SwapJournal:
    """The restore journal as the swap engine writes it: ``journal`` with the steps' entries."""

    def write(entries: list[dict[str, Any]]) -> None:
        journal["steps"] = entries
        write_journal(jpath, journal)

    return SwapJournal(write, lambda: remove_journal(jpath))


def _failing(
    journal: dict[str, Any], jpath: str, registry: str | None, stamp: str, ledger_url: str | None, tgt: Target
) -> Callable[[BaseException], None]:
    """The engine's roll back: :func:`_fail` (undo everything from the journal, then raise)."""
    return lambda exc: _fail(exc, journal, jpath, registry, stamp, ledger_url, tgt)


def _refuse_locked(tgt: Target) -> None:
    if tgt.vector_path and qdrant_local.is_locked(tgt.vector_path):
        raise StoreLocked(_restore_message(tgt.vector_path))


def _checked_set(src: str) -> dict[str, Any]:
    """The set's manifest, after every check passed (BackupError naming the first problems otherwise)."""
    if not os.path.isdir(src):
        raise BackupError(f"there is no backup folder at {src}")
    if os.path.islink(os.path.join(src, MANIFEST)):
        raise BackupError(
            f"refusing to restore {src}: its {MANIFEST} is a symbolic link; a backup set holds only "
            "regular files and folders, so this one was altered. Nothing was changed; pick another "
            "backup (or make a new one with `mem0-hygiene backup`)"
        )
    doc = read_manifest(src)
    unsafe = unsafe_entries(src, doc)
    if unsafe:
        raise BackupError(
            f"refusing to restore {src}: {unsafe[0]}"
            + (f" (and {len(unsafe) - 1} more such entries)" if len(unsafe) > 1 else "")
            + "; a backup set holds only regular files and folders inside it, so this one was altered. Nothing "
            "was changed; pick another backup (or make a new one with `mem0-hygiene backup`)"
        )
    problems = check_set(src, doc)
    if problems:
        raise BackupError(
            f"refusing to restore {src}: the backup set is incomplete or damaged ("
            + "; ".join(problems[:10])
            + (f"; and {len(problems) - 10} more" if len(problems) > 10 else "")
            + "). Nothing was changed; pick another backup"
        )
    return doc


def _plan(tgt: Target, src: str, doc: dict[str, Any], vs: dict[str, Any], notes: list[str], jpath: str) -> list[_Step]:
    """One step per store to put back (targets through links: a relocated store is restored where it points)."""
    steps = []
    if vs.get("kind") != SEAM_KIND or (vs.get("provider") in DATA_FOLDERS and vs.get("folder")):
        assert tgt.vector_path is not None
        data = os.path.join(src, vs["folder"])
        if vs.get("kind") == SEAM_KIND:  # the copy of the store's own folder inside the seam's snapshot
            data = os.path.join(data, DATA_FOLDERS[vs["provider"]])
        steps.append(
            _Step(
                "vector_store",
                os.path.realpath(tgt.vector_path),
                data,
                "folder",
                dict(vs.get("counts") or {}),
                provider=str(vs.get("provider") or "qdrant"),
            )
        )
    elif vs.get("kind") == SEAM_KIND and vs.get("provider") == "pgvector" and vs.get("folder"):
        steps.append(_pgvector_step(tgt, src, vs, jpath))
    if str(tgt.collection) not in (vs.get("counts") or {}) and vs.get("counts"):
        notes.append(f"the backup has collections {sorted(vs['counts'])}, the config uses {tgt.collection!r}")
    for role, path in (("history_db", tgt.history_path), ("ledger", tgt.ledger_path)):
        if path == ":memory:":
            notes.append(f"{role} is in memory in the target config: not restored")
            continue
        if is_postgres_url(path):
            step = _postgres_step(path, src, doc, notes, jpath)
            if step is not None:
                steps.append(step)
            continue
        path = os.path.realpath(path)
        store = doc["stores"].get(role)
        if store is None:
            notes.append(f"the backup has no {role}: the current one (if any) is moved aside, none is put back")
        steps.append(
            _Step(
                role,
                path,
                os.path.join(src, store["file"]) if store else None,
                "sqlite",
                dict((store or {}).get("counts") or {}),
                journal_mode=str((store or {}).get("journal_mode") or "delete").lower(),
            )
        )
    return steps


LOCAL_NAME = "ledger-postgresql.db"
"""Beside the restore journal: what the staged copy of a set's ledger and the dump of the PostgreSQL rows a
restore replaced are named after (``.ledger-postgresql.db.restoring-*``, ``ledger-postgresql.db.replaced-STAMP``)."""


def _postgres_step(url: str, src: str, doc: dict[str, Any], notes: list[str], jpath: str) -> _Step | None:
    """The step that loads the set's ledger into the PostgreSQL ledger; None (with a note) when the set has none.
    Refuses a set whose ledger was copied from a SQLite file that still exists (which ledger is meant?)."""
    store = doc["stores"].get("ledger")
    if not isinstance(store, dict):
        notes.append(f"the backup has no ledger: the PostgreSQL ledger at {redact(url)} is left as it is")
        return None
    if store.get("kind") != "postgresql_dump":
        origin = (doc.get("source") or {}).get("ledger_path")
        if isinstance(origin, str) and origin != ":memory:" and os.path.isfile(origin):
            raise BackupError(
                f"{src} holds the ledger copied from the SQLite file {origin}, which is still there, and the config's "
                f"ledger is on PostgreSQL ({redact(url)}): which one it belongs in is unclear. To put it into "
                f"PostgreSQL, move {origin} away first (ledger migrate leaves it); to put it back into the file, "
                "restore with hygiene.ledger_path (--ledger FILE) instead of hygiene.ledger_url. Nothing was changed"
            )
    return _Step(
        "ledger",
        redact(url),
        os.path.join(src, store["file"]),
        "postgres",
        dict(store.get("counts") or {}),
        local=os.path.join(os.path.dirname(jpath), LOCAL_NAME),
    )


def _mark(src: str, stamp: str) -> str:
    """What the PostgreSQL ledger keeps (:data:`~mem0_hygiene.stores.ledger.postgres_copy.RESTORE_MARK`) in the
    transaction that loads this restore's rows."""
    return f"{stamp} {src}"


def _result(
    src: str,
    doc: dict[str, Any],
    moment: datetime,
    steps: list[_Step],
    dry_run: bool,
    registry: str | None,
    notes: list[str],
    *,
    verified: dict[str, dict[str, int]] | None = None,
    leftovers: tuple[str, ...] = (),
    resumed: str = "",
    reapplied: tuple[ReappliedErasure, ...] = (),
) -> RestoreResult:
    return RestoreResult(
        src=src,
        dry_run=dry_run,
        restored_at=to_iso(moment),
        backup_created_at=str(doc.get("created_at", "")),
        checked_files=len(doc["files"]),
        stores=tuple(
            RestoredStore(
                s.role,
                s.target,
                s.source,
                s.aside if dry_run or _moved(s) else None,
                verified[s.role] if verified is not None else s.counts,
            )
            for s in steps
        ),
        leftovers=leftovers,
        copies_path=registry,
        notes=tuple(dict.fromkeys(notes)),
        resumed=resumed,
        reapplied=reapplied,
    )


def _moved(step: _Step) -> bool:
    return step.aside is not None and any(os.path.lexists(step.aside + s) for s in step.originals())


def _finish(
    src: str,
    doc: dict[str, Any],
    tgt: Target,
    moment: datetime,
    steps: list[_Step],
    verified: dict[str, dict[str, int]],
    jpath: str,
    registry: str | None,
    notes: list[str],
    leftovers: tuple[str, ...],
    resumed: str = "",
    journal: dict[str, Any] | None = None,
) -> RestoreResult:
    """Apply again the erasures the journal names (``reapply``), record the restore, then remove the journal: the
    restore is complete."""
    reapplied: tuple[ReappliedErasure, ...] = ()
    if journal is not None and journal.get("reapply"):
        reapplied = reapply(tgt, jpath, journal)
    notes += [n for n in dict.fromkeys(s.register_note for s in steps) if n]
    note = update_record(
        tgt.side_file("backup_record"),
        restore={"src": src, "at": to_iso(moment), "backup_created_at": doc.get("created_at")},
    )
    if note:
        notes.append(note.replace("this backup", "this restore"))
    for step in steps:  # the PostgreSQL ledger's staged copy was loaded, not moved into place
        if step.kind == "postgres" and step.staged and os.path.lexists(step.staged):
            remove_path(step.staged)
    remove_journal(jpath)
    return _result(
        src,
        doc,
        moment,
        steps,
        False,
        registry,
        notes,
        verified=verified,
        leftovers=leftovers,
        resumed=resumed,
        reapplied=reapplied,
    )


def _fail(
    exc: BaseException,
    journal: dict[str, Any],
    jpath: str,
    registry: str | None,
    stamp: str,
    ledger_url: str | None,
    tgt: Target,
) -> None:
    """A step failed after the journal was written: undo everything (journaled as ``undoing``), then raise."""
    try:
        journal["state"] = "undoing"
        write_journal(jpath, journal)
        _roll_back(journal, jpath, registry, ledger_url, tgt)
    except Exception as undo_exc:
        raise BackupError(
            f"the restore failed ({exc}) and putting the replaced stores back also failed ({undo_exc}). The "
            f"replaced stores are in the *.replaced-{stamp} paths; {unfinished_message(jpath, journal, 'retry')}"
        ) from exc
    if isinstance(exc, HygieneError) or not isinstance(exc, Exception):
        raise exc
    raise BackupError(f"the restore failed ({type(exc).__name__}: {exc}); everything was put back as it was") from exc


def _roll_forward(
    pending: dict[str, Any],
    jpath: str,
    src: str,
    doc: dict[str, Any],
    tgt: Target,
    moment: datetime,
    registry: str | None,
    notes: list[str],
) -> RestoreResult:
    """Finish a restore of the same set that a crash interrupted: the journal says what goes where."""
    steps = [_Step.from_dict(d) for d in pending["steps"]]
    stamp = str(pending.get("stamp") or time_stamp(moment))
    started = str(pending.get("started_at") or to_iso(moment))
    notes.append(f"finished the restore of {src} started {started}, which was interrupted")
    ledger_url = tgt.ledger_path if is_postgres_url(tgt.ledger_path) else None
    run = Swap.resumed(steps, _journal(jpath, pending))
    with (
        contextlib.ExitStack() as held,
        run.attempt(_unstage, _failing(pending, jpath, registry, stamp, ledger_url, tgt)),
    ):
        run.swap(_swapper(src, doc, registry, started, held=held, stamp=stamp, ledger_url=ledger_url, tgt=tgt))
        verified = _verify_restored(steps, ledger_url, tgt)
    removed: list[str] = []
    for step in steps:  # staging copies of other interrupted runs
        removed += _leftovers(step.path, remove=True, notes=notes)
    return _finish(
        src,
        doc,
        tgt,
        parse_backup_time(started) or moment,
        steps,
        verified,
        jpath,
        registry,
        notes,
        tuple(removed),
        resumed="finished",
        journal=pending,
    )


def _finish_erasing(
    pending: dict[str, Any],
    jpath: str,
    src: str,
    doc: dict[str, Any],
    tgt: Target,
    moment: datetime,
    registry: str | None,
    notes: list[str],
    dry_run: bool,
) -> RestoreResult:
    """Every store of an earlier restore is back and its erasures are being applied again (state ``erasing``):
    the same set finishes that; another set is refused until then (it would put back stores the erasure has not
    reached yet, or roll back half an erasure)."""
    if pending["src"] != src:
        raise BackupError(unfinished_message(jpath, pending, "restore another set"))
    steps = [_Step.from_dict(d) for d in pending["steps"]]
    for s in steps:
        s.placed = True
    notes.append(f"finished the restore of {src} started {pending.get('started_at')}: its erasures applied again")
    if dry_run:
        return _result(
            src,
            doc,
            moment,
            steps,
            True,
            registry,
            notes,
            resumed="finished",
            reapplied=planned([str(r) for r in pending.get("reapply") or []]),
        )
    started = parse_backup_time(str(pending.get("started_at") or "")) or moment
    counts = {s.role: dict(s.counts) for s in steps}
    return _finish(src, doc, tgt, started, steps, counts, jpath, registry, notes, (), "finished", journal=pending)


def _roll_back(pending: dict[str, Any], jpath: str, registry: str | None, ledger_url: str | None, tgt: Target) -> None:
    """Undo an interrupted (or failed) restore from its journal: the staged copies and the restored stores are
    removed, the stores moved aside go back; then the journal is removed. Works from any point a crash left."""
    if pending.get("state") != "undoing":
        pending = {**pending, "state": "undoing"}
        write_journal(jpath, pending)
    steps = [_Step.from_dict(d) for d in pending["steps"]]
    for step in reversed(steps):
        if step.kind == "postgres":
            _roll_back_postgres(step, ledger_url, _mark(str(pending["src"]), str(pending.get("stamp"))))
            continue
        if step.kind == "pgvector":
            _roll_back_pgvector(step, tgt)
            continue
        if step.staged and os.path.lexists(step.staged):
            remove_path(step.staged)
        if step.aside and os.path.lexists(step.aside):
            # the store was moved aside (its sidecars first): whatever is at the target is the restored copy
            for suffix in step.originals():
                if os.path.lexists(step.target + suffix):
                    remove_path(step.target + suffix)
            os.rename(step.aside, step.target)
        elif (
            step.source
            and not step.aside
            and os.path.lexists(step.target)
            and not (step.staged and os.path.lexists(step.staged))
        ):
            for suffix in step.originals():  # there was no store before: the one there is the restored copy
                if os.path.lexists(step.target + suffix):
                    remove_path(step.target + suffix)
        if step.aside:
            for suffix in step.originals():
                if suffix and os.path.lexists(step.aside + suffix) and not os.path.lexists(step.target + suffix):
                    os.rename(step.aside + suffix, step.target + suffix)
    unregister_copy(registry, [s.aside for s in steps if s.aside and not _moved(s)])
    remove_journal(jpath)


def _postgres(url: str | None, step: _Step) -> pg.PostgresLedger:
    if url is None or redact(url) != step.target:
        raise BackupError(
            f"the interrupted restore loaded the ledger at {step.target}, and this config's ledger is "
            f"{redact(url) if url else 'not on PostgreSQL'}; run the restore with the config it was "
            "started with"
        )
    return pg.PostgresLedger(url)


def _roll_back_postgres(step: _Step, url: str | None, mark: str) -> None:
    """Undo the PostgreSQL step: when its transaction committed (the ledger holds this restore's mark), load the
    rows it replaced back from their dump; then remove the staged copy and the dump (its rows are back)."""
    if step.aside and os.path.lexists(step.aside):
        ledger = _postgres(url, step)
        try:
            with ledger.exclusive("prune"), pg.held_for_load(ledger) as conn:
                if pg.restore_mark(ledger) == mark:
                    source = open_ledger(step.aside, readonly=True)
                    try:
                        pg.load_rows(ledger, conn, source, replace=True)
                    finally:
                        source.close()
                    pg.set_restore_mark(conn, None)
        finally:
            ledger.close()
    for path in (step.staged, step.aside):
        if path and os.path.lexists(path):
            remove_path(path)


def _swap_postgres(
    step: _Step,
    url: str | None,
    src: str,
    doc: dict[str, Any],
    registry: str | None,
    at: str,
    mark: str,
    held: contextlib.ExitStack | None,
    stamp: str,
) -> None:
    """The PostgreSQL step, in one transaction under the ledger's locks: unless it already committed (the mark),
    dump the rows it replaces aside (registered first), empty every table, load the staged copy, verify every
    table's count and sha256, set the mark, commit."""
    ledger = _postgres(url, step)
    try:
        with ledger.exclusive("prune"), pg.held_for_load(ledger) as conn:
            if pg.restore_mark(ledger) == mark:
                return  # the interrupted run committed it
            if step.staged is None or not os.path.lexists(step.staged):  # the staged copy is gone: make it again
                assert held is not None
                _stage_one(step, src, doc, stamp, held)
            assert step.staged is not None and step.aside is not None
            _dump_aside(ledger, step, registry, at, src)
            source = scratch_copy(step.staged)  # a set older than schema 4 arrives upgraded (the copy only)
            source.path = step.staged  # what its messages name
            try:
                pg.load_rows(ledger, conn, source, replace=True)
            finally:
                source.close()
            pg.set_restore_mark(conn, mark)
    finally:
        ledger.close()


def _dump_aside(ledger: pg.PostgresLedger, step: _Step, registry: str | None, at: str, src: str) -> None:
    """The rows the restore replaces, as a SQLite ledger file at ``step.aside`` (a fresh dump on every attempt:
    nothing was committed before it), listed in the registry of copies before it appears. The dump is made under
    a staging name (``.ledger-postgresql.db.restoring-dump*``), which the next restore removes if a crash left it."""
    assert step.aside is not None
    parent = os.path.dirname(step.aside)
    tmp = os.path.join(parent, free_name(parent, temporary_name(os.path.basename(step.path), "restore") + "dump"))
    try:
        pg.dump_into_file(ledger, tmp)
        conn = connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            conn.close()
        if not os.path.lexists(step.aside):
            step.register_note = register_copy(
                registry,
                "replaced_aside",
                step.aside,
                roles=[step.role],
                created_at=at,
                note=f"the ledger rows replaced by the restore of {src}",
                size_bytes=size_of(tmp),
            )
        os.replace(tmp, step.aside)
    finally:
        if os.path.lexists(tmp):
            remove_path(tmp)


def _unstage(step: _Step) -> None:
    """Remove the step's staged copy (a failure before the journal was written: nothing was swapped)."""
    if step.staged is not None and os.path.lexists(step.staged):
        with contextlib.suppress(OSError):
            remove_path(step.staged)


def _leftovers(target: str, *, remove: bool, notes: list[str] | None = None) -> list[str]:
    """Staging copies (``.<store>.restoring-*``) of an interrupted restore beside ``target``: found, or removed."""
    parent, stem = os.path.dirname(target), os.path.basename(target)
    if not remove:
        return find_leftovers(parent, "restore", stems=[stem])
    removed, problems = clean_leftovers(parent, "restore", stems=[stem])
    if notes is not None:
        notes += [f"could not remove the staging copy of an interrupted restore {p}" for p in problems]
    return removed


def _stage_one(step: _Step, src: str, doc: dict[str, Any], stamp: str, held: contextlib.ExitStack) -> bool:
    """Copy the step's store of the set beside its target (same filesystem: renames are atomic) and check the
    copy; False when the set has none for it."""
    if step.source is None:
        return False
    if step.kind == "pgvector":  # loaded from the set's own rows (checked with the set); nothing to copy
        from ..stores.vector import Snapshot

        Snapshot.read(step.source)
        return False
    parent = os.path.dirname(step.path)
    os.makedirs(parent, exist_ok=True)
    step.staged = os.path.join(
        parent, free_name(parent, temporary_name(os.path.basename(step.path), "restore") + stamp)
    )
    if step.kind == "folder":
        shutil.copytree(step.source, step.staged, symlinks=True)
    else:
        shutil.copyfile(step.source, step.staged, follow_symlinks=False)
    held.enter_context(holding(step.staged))  # a restore starting meanwhile leaves it alone
    _check_staged(step, src, doc)
    if step.kind == "sqlite" and step.journal_mode == "wal":
        _set_wal(step.staged)
    if step.kind == "postgres":  # an older set's ledger gets the current schema first, as a ledger file would
        open_ledger(step.staged).close()
        step.counts = table_counts(step.staged)
    return True


def _swapper(
    src: str,
    doc: dict[str, Any],
    registry: str | None,
    at: str,
    *,
    held: contextlib.ExitStack,
    stamp: str,
    ledger_url: str | None,
    tgt: Target,
) -> Callable[[_Step], None]:
    """The restore's swap of one step, for the engine."""
    return lambda step: _swap_one(step, src, doc, registry, at, held=held, stamp=stamp, ledger_url=ledger_url, tgt=tgt)


def _swap_one(
    step: _Step,
    src: str,
    doc: dict[str, Any],
    registry: str | None,
    at: str,
    *,
    held: contextlib.ExitStack,
    stamp: str,
    ledger_url: str | None,
    tgt: Target,
) -> None:
    """Move the current store aside (registered as a copy first; SQLite sidecars before their database) and the
    staged copy in. Done from the state on disk, so it also finishes a swap a crash interrupted (a staged copy
    that went missing is made again from the set)."""
    if step.kind == "postgres":
        _swap_postgres(step, ledger_url, src, doc, registry, at, _mark(src, stamp), held, stamp)
        step.placed = True
        return
    if step.kind == "pgvector":
        _swap_pgvector(step, tgt, src, registry, at)
        step.placed = True
        return
    if step.aside is not None and not os.path.lexists(step.aside):
        if os.path.lexists(step.target) or sidecars(step.target):
            # listed before it moves: a crash right after the rename leaves it accounted for
            step.register_note = register_copy(
                registry,
                "replaced_aside",
                step.aside,
                roles=[step.role],
                created_at=at,
                note=f"replaced by the restore of {src}",
                size_bytes=size_of(step.target),
            )
        for suffix in step.originals():
            if os.path.lexists(step.target + suffix) and not os.path.lexists(step.aside + suffix):
                os.rename(step.target + suffix, step.aside + suffix)
    if step.source is None:
        return
    if step.staged is not None and os.path.lexists(step.staged):
        if os.path.lexists(step.target):
            raise BackupError(
                f"{step.target} appeared while the restore was under way; move it away and run the restore again"
            )
        os.rename(step.staged, step.target)
    elif not os.path.lexists(step.target):  # the staged copy is gone: make it again
        _stage_one(step, src, doc, stamp, held)
        assert step.staged is not None
        os.rename(step.staged, step.target)
    step.placed = True


def _check_staged(step: _Step, src: str, doc: dict[str, Any]) -> None:
    """The staged copy holds exactly the backup's bytes (regular files only; links are not followed)."""
    assert step.staged is not None and step.source is not None
    rel_root = os.path.relpath(step.source, src).replace(os.sep, "/")
    if step.kind == "folder":
        want = {rel[len(rel_root) + 1 :]: meta for rel, meta in doc["files"].items() if rel.startswith(rel_root + "/")}
        got, odd = set_entries(step.staged)
        if odd or set(got) != set(want):
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


def _verify_restored(
    steps: list[_Step], ledger_url: str | None = None, tgt: Target | None = None
) -> dict[str, dict[str, int]]:
    """Open every restored store and compare its counts with the manifest's."""
    got: dict[str, dict[str, int]] = {}
    for step in steps:
        if not step.placed:
            got[step.role] = {}
            continue
        if step.kind == "postgres":
            ledger = _postgres(ledger_url, step)
            try:
                counts = {
                    t.name: int(ledger.query(f"SELECT count(*) FROM {quote(t.name)}")[0][0])
                    for t in pg.postgres_tables(ledger.pg)
                }
            finally:
                ledger.close()
            counts = {t: n for t, n in counts.items() if n or t in step.counts}
        elif step.kind == "pgvector":
            assert tgt is not None
            with _table(tgt, step) as store:
                points = store.count()
            counts = {next(iter(step.counts), str(step.collection)): points} if points or step.counts else {}
        elif step.kind == "folder" and step.provider != "qdrant":
            counts = _seam_counts(step)
        elif step.kind == "folder":
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


def _seam_counts(step: _Step) -> dict[str, int]:
    """Points per collection of a restored Chroma or FAISS folder, read through the provider seam."""
    from ..stores.vector import forget_cached, open_vector_store

    forget_cached(step.provider, step.target)  # this process may have cached the folder that was swapped out
    out: dict[str, int] = {}
    for collection in step.counts:
        try:
            with open_vector_store(step.provider, {"path": step.target}, collection) as store:
                out[collection] = store.count()
        except Exception as exc:
            raise BackupError(f"the restored vector store at {step.target} cannot be read: {exc}") from exc
    return out


PGVECTOR_NAME = "pgvector-{collection}.rows"
"""Beside the restore journal: what the copy of the pgvector table's rows a restore replaces is named after
(``pgvector-TABLE.rows.replaced-STAMP``: the seam's rows snapshot, a folder; made under
``.pgvector-TABLE.rows.restoring-*`` first)."""


def _pgvector_step(tgt: Target, src: str, vs: dict[str, Any], jpath: str) -> _Step:
    """The step that loads the set's rows (its ``vector/`` snapshot) into the pgvector table."""
    with _table(tgt) as store:
        where = store.where
    return _Step(
        "vector_store",
        where,
        os.path.join(src, vs["folder"]),
        "pgvector",
        dict(vs.get("counts") or {}),
        local=os.path.join(os.path.dirname(jpath), PGVECTOR_NAME.format(collection=tgt.collection)),
        provider="pgvector",
        collection=str(tgt.collection),
    )


def _table(tgt: Target, step: _Step | None = None) -> Any:
    """The pgvector table of ``tgt`` through the seam (a context manager); with ``step``, refused unless it is the
    table the journal's step names (the connection string is never written down: the config gives it)."""
    from ..stores.vector import for_target

    store = for_target(tgt, action="restore")
    if step is not None and (store.where != step.target or store.collection != step.collection):
        store.close()
        raise BackupError(
            f"the interrupted restore loaded the pgvector table {step.collection} on {step.target}, and this "
            f"config's is {store.collection} on {store.where}; run the restore with the config it was started with"
        )
    return store


def _swap_pgvector(step: _Step, tgt: Target, src: str, registry: str | None, at: str) -> None:
    """The pgvector step: unless a run already did (its copy is there), save the table's rows beside the journal
    (the seam's snapshot, made under a temporary name, registered as a copy before it gets its name), then load the
    set's rows in one transaction, verified by count and checksum before it commits. Loading again is harmless: a
    rerun of the same set does it from the start."""
    from ..stores.vector import Snapshot

    assert step.aside is not None and step.source is not None
    with _table(tgt, step) as store:
        if not os.path.lexists(step.aside):
            parent = os.path.dirname(step.aside)
            tmp = os.path.join(
                parent, free_name(parent, temporary_name(os.path.basename(step.path), "restore") + "rows")
            )
            try:
                store.snapshot(tmp)
                step.register_note = register_copy(
                    registry,
                    "replaced_aside",
                    step.aside,
                    roles=[step.role],
                    created_at=at,
                    note=f"the pgvector rows replaced by the restore of {src}",
                    size_bytes=size_of(tmp),
                )
                os.rename(tmp, step.aside)
            finally:
                if os.path.lexists(tmp):
                    remove_path(tmp)
        with progress_step("loading the pgvector table"):  # one transaction, checked before it commits
            store.restore(Snapshot.read(step.source))


def _roll_back_pgvector(step: _Step, tgt: Target) -> None:
    """Undo the pgvector step: when the rows it replaced were saved (the load comes after), load them back (in one
    verified transaction; harmless when the set's rows were never loaded), then remove their copy."""
    from ..stores.vector import Snapshot

    if step.aside and os.path.lexists(step.aside):
        with _table(tgt, step) as store:
            store.restore(Snapshot.read(step.aside))
        remove_path(step.aside)
