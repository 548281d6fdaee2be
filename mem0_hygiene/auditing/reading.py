"""Reading a deployment's vector store into the audit's scratch database (shared by ``audit`` and ``inspect``).

The app's own open client is used in-process (or a client passed in the config); otherwise a Qdrant server is
scrolled, or a local Qdrant folder opened, unless another process holds its lock: then the points are marked
missing with the reason, and every check that needs them is reported as skipped, never as clean. A folder this
process may only read (its lock cannot be opened for writing) is read from its collection's own SQLite file,
read-only, without the lock (:class:`~mem0_hygiene.stores.qdrant_file.QdrantFolder`; ``extra["read_only"]`` says
how).
"""

from __future__ import annotations

import gc
import os
from typing import Any

from ..errors import HygieneError
from ..stores.locations import QDRANT_DEFAULT_PATH
from ..stores.qdrant import check_collection_named, is_locked, locked_message
from ..stores.qdrant_file import QdrantFolder, lock_refusal
from ..stores.restore_journal import refuse_while_restoring
from ..stores.vectors import qdrant_pages
from ..target import Target
from .scratch import ScratchDB


def load_vector_points(db: ScratchDB, target: Target, extra: dict[str, Any], page_size: int) -> None:
    """Stream the target's points into ``db`` in pages, or record in ``db.sources.missing`` why they could not
    be read (``extra["locked_path"]`` names a folder another process holds). Refused while a restore of the
    stores is unfinished (:func:`~mem0_hygiene.stores.restore_journal.refuse_while_restoring`): they may be half
    swapped, and the audit would blame the tool for the half."""
    if target.memory is None:
        refuse_while_restoring(target.ledger_path, target.history_path, target.vector_path, "audit the stores")
    if target.client is not None:
        _scroll_into(db, target.client, target.collection, page_size)
        return
    if target.provider != "qdrant":
        db.sources.missing["points"] = (
            f"vector-store checks read Qdrant (local folder or server); provider {target.provider!r} is not "
            f"supported yet, so checks that compare the store with history.db and the ledger did not run"
        )
        return
    conf = target.vector_conf
    from qdrant_client import QdrantClient

    if conf.get("url") or (conf.get("host") and conf.get("port")):
        try:
            client = QdrantClient(
                url=conf.get("url"),
                host=conf.get("host"),
                port=conf.get("port"),
                api_key=conf.get("api_key"),
                https=conf.get("https"),
            )
            try:
                _scroll_into(db, client, target.collection, page_size, str(target.vector_location.remote or ""))
            finally:
                client.close()
        except HygieneError:
            raise
        except Exception as exc:  # a server that is down or refuses us: the other checks still run
            db.sources.missing["points"] = f"the Qdrant server could not be read ({type(exc).__name__}: {exc})"
        return
    path = target.vector_path or os.path.expanduser(conf.get("path") or QDRANT_DEFAULT_PATH)
    if not os.path.isfile(os.path.join(path, "meta.json")):
        db.sources.missing["points"] = f"no local Qdrant store at {path}"
        return
    why = lock_refusal(path)
    if why:  # read access only: the collection's own file, read-only, the lock not taken
        with QdrantFolder(path, why) as folder:
            check_collection_named(path, target.collection, set(folder.collections()))
            gc_paused = gc.isenabled()
            gc.disable()  # as in _open_local: long-lived objects
            try:
                db.load_points(_reported(folder.pages(target.collection, page_size)))
            finally:
                if gc_paused:
                    gc.enable()
            extra["read_only"] = folder.note
        return
    if is_locked(path):
        extra["locked_path"] = path
        db.sources.missing["points"] = (
            locked_message(path, "audit") + " For the audit: `from mem0_hygiene import audit; audit(m)` in the app."
        )
        return
    client = _open_local(path)
    try:
        _scroll_into(db, client, target.collection, page_size)
    finally:
        client.close()


def _open_local(path: str) -> Any:
    """Open a local Qdrant folder. It loads every point into memory at once; Python's cyclic garbage
    collector would scan that growing heap again and again (about 2 s at 100k points), so it is paused
    for the load only: the objects loaded are long-lived anyway."""
    from qdrant_client import QdrantClient

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return QdrantClient(path=path)
    finally:
        if was_enabled:
            gc.enable()


def _scroll_into(db: ScratchDB, client: Any, collection: str, page_size: int, where: str = "") -> None:
    names = {c.name for c in client.get_collections().collections}
    check_collection_named(where or "the configured Qdrant", collection, names)
    db.load_points(_reported(qdrant_pages(client, collection, page_size)) if collection in names else iter(()))


def _reported(pages: Any) -> Any:
    """The pages, reporting the points read so far (the total is not known before the end)."""
    from ..progress import report

    read = 0
    for page in pages:
        yield page
        read += len(page)
        report("reading the vector store", read, None)
