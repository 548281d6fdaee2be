"""Reading a deployment's vector store into the audit's scratch database (shared by ``audit`` and ``inspect``),
through the provider seam (:mod:`mem0_hygiene.stores.vector`).

The app's own open client is used in-process (or a client passed in the config); otherwise the store is opened
by its provider's module: a Qdrant server, a local Qdrant folder (unless another process holds its lock: then the
points are marked missing with the reason, and every check that needs them is reported as skipped, never as
clean), pgvector, Chroma or FAISS. A Qdrant folder this process may only read (its lock cannot be opened for
writing) is read from its collection's own SQLite file, read-only, without the lock (``extra["read_only"]`` says
how). A provider the seam has no module for is recorded in ``extra["unsupported"]``: the audit's verdict is then
incomplete, not clean.
"""

from __future__ import annotations

import gc
import os
import queue
import threading
from collections.abc import Iterator
from typing import Any

from ..errors import HygieneError
from ..stores.qdrant import check_collection_named, is_locked, locked_message
from ..stores.restore_journal import refuse_while_restoring
from ..stores.vector import UnsupportedVectorStore, for_target
from ..stores.vector.qdrant_local import QdrantLocalStore
from ..stores.vector.qdrant_server import QdrantClientStore
from ..target import Target
from .scratch import POINT_KEYS, ScratchDB


def load_vector_points(db: ScratchDB, target: Target, extra: dict[str, Any], page_size: int) -> None:
    """Stream the target's points into ``db`` in pages, or record in ``db.sources.missing`` why they could not
    be read (``extra["locked_path"]`` names a folder another process holds; ``extra["unsupported"]`` a provider
    the seam cannot read). Refused while a restore of the stores is unfinished
    (:func:`~mem0_hygiene.stores.restore_journal.refuse_while_restoring`): they may be half swapped, and the audit
    would blame the tool for the half."""
    if target.memory is None:
        refuse_while_restoring(target.ledger_path, target.history_path, target.vector_path, "audit the stores")
    try:
        store = for_target(target, action="audit")
    except UnsupportedVectorStore as exc:
        db.sources.missing["points"] = str(exc)
        extra["unsupported"] = str(exc)
        return
    except HygieneError:
        raise
    except Exception as exc:  # a server that is down or refuses us: the other checks still run
        db.sources.missing["points"] = f"the {target.provider} store could not be opened ({type(exc).__name__}: {exc})"
        return
    with store:
        if isinstance(store, QdrantLocalStore):
            _load_local_qdrant(db, store, extra, page_size)
            return
        try:
            if isinstance(store, QdrantClientStore):
                check_collection_named(
                    target.vector_location.remote or "the configured Qdrant", store.collection, store.collections()
                )
            elif not store.exists():
                db.sources.missing["points"] = f"no collection {store.collection!r} in the {store.describe()}"
                return
            db.load_fields(_reported(read_ahead(store.field_pages(POINT_KEYS, page_size))))
        except HygieneError:
            raise
        except Exception as exc:  # a server that is down or refuses us: the other checks still run
            db.sources.missing["points"] = f"the {store.describe()} could not be read ({type(exc).__name__}: {exc})"


def _load_local_qdrant(db: ScratchDB, store: QdrantLocalStore, extra: dict[str, Any], page_size: int) -> None:
    path = store.path
    if not os.path.isfile(os.path.join(path, "meta.json")):
        db.sources.missing["points"] = f"no local Qdrant store at {path}"
        return
    check_collection_named(path, store.collection, store.collections())
    if not store.read_only and is_locked(path):
        extra["locked_path"] = path
        db.sources.missing["points"] = (
            locked_message(path, "audit") + " For the audit: `from mem0_hygiene import audit; audit(m)` in the app."
        )
        return
    gc_paused = gc.isenabled()
    gc.disable()  # every point is long-lived here: the cyclic collector would rescan the growing heap
    try:
        db.load_points(_reported(store.pages(page_size)))
    finally:
        if gc_paused:
            gc.enable()
    if store.read_only:
        extra["read_only"] = store.note


def _reported(pages: Any) -> Any:
    """The pages, reporting the points read so far (the total is not known before the end)."""
    from ..progress import report

    read = 0
    for page in pages:
        yield page
        read += len(page)
        report("reading the vector store", read, None)


_END = object()


def read_ahead(pages: Iterator[Any]) -> Iterator[Any]:
    """``pages``, the next one read by a thread while the caller works on this one: a client that waits for its
    store without the GIL (pgvector's socket, Chroma's core, a Qdrant server's HTTP) reads on while the points
    already read are scanned and inserted. One page is held ahead at most. An error reading is raised here, where
    the page would have come; when the caller stops early the reader stops after the page it is reading, and
    ``pages`` is closed (a server-side cursor's transaction ends) before this returns."""
    ahead: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def hand(item: tuple[Any, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        error: BaseException | None = None
        try:
            for page in pages:
                if not hand((page, None)):
                    break
        except BaseException as exc:  # handed to the caller's thread
            error = exc
        try:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        except BaseException as exc:
            error = error or exc
        hand((_END, error))

    thread = threading.Thread(target=read, daemon=True, name="mem0-hygiene-read-ahead")
    thread.start()
    try:
        while True:
            page, error = ahead.get()
            if page is _END:
                if error is not None:
                    raise error
                return
            yield page
    finally:
        stop.set()
        thread.join()
