"""The drop-in ``Memory``: mem0's ``Memory`` plus a ledger that knows how old, where from and whether
still true each memory is.

Everything stored or deleted goes through mem0's own public methods (``add``, ``update``, ``delete``,
``delete_all``, ``reset``); this class never writes to the vector store or history.db itself. Reads
hide what is no longer true: superseded, invalidated, quarantined, expired and deleted memories (see
:mod:`mem0_hygiene.memory.reads`).

This module holds the class, its constructor, the mem0 methods it overrides and the lifecycle verbs
(confirm, supersede, invalidate, adopt, review_queue, close). The rest is mixed in:
buffered ledger writes (:mod:`~mem0_hygiene.memory.buffer`), read filtering and paging
(:mod:`~mem0_hygiene.memory.reads`), the write-time decision (:mod:`~mem0_hygiene.memory.write_decision`),
pruning (:mod:`~mem0_hygiene.memory.pruning`), finishing what a crashed process left under way
(:mod:`~mem0_hygiene.memory.recovery`) and the write guard on the texts mem0 makes itself, its LLM's facts
included (:mod:`~mem0_hygiene.memory.fact_guard`). The package exports it with two operations on the whole
deployment added (``backup``, ``forget``: :mod:`mem0_hygiene.actions.drop_in`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from mem0 import Memory as Mem0Memory
from mem0.configs.base import MemoryConfig

from ..config import (
    ConfigFacts,
    HygieneSettings,
    RankSettings,
    WriteDecisionSettings,
    build_mem0_config,
    default_ledger_path,
    split_config,
)
from ..errors import (
    ConfigError,
    MemoryNotFound,
    MissingSource,
    StateError,
    SupersedeError,
)
from ..progress import counted
from ..stores.database_url import is_database_url as is_postgres_url
from ..stores.guard import guard_stores
from ..stores.ledger import Ledger, LedgerRow, open_ledger
from ..stores.paths import check_store_paths, deployment_paths
from ..stores.restore_journal import refuse_while_restoring
from ..stores.scores import EXACT, INNER
from ..stores.state_changes import confirm_rows, invalidate_row
from ..stores.vector.release import release
from ..stores.vectors import iter_points
from ..timeutil import Clock, as_utc, parse_duration, parse_time, shift_time, system_clock, to_iso
from .birth import adoption_row, birth_facts, birth_metadata, point_item, replaces_facts, strip_birth, upgraded
from .buffer import LedgerBufferMixin
from .embedder_check import check_embedder
from .fact_guard import FactGuardMixin, collecting_redactions, with_redactions
from .faiss_search import hook_faiss
from .guard import CLEAN, Screened, facts_of, screen_messages, screen_text
from .live_query import hook_for
from .mem0_rules import expiration_end, mem0_rejects
from .metrics import record_adds, watch
from .provenance import (
    QUARANTINED_KINDS,
    normalize_messages,
    resolve_kind,
    split_tool_messages,
)
from .pruning import PruneMixin
from .reads import LiveReadsMixin
from .recovery import RecoveryMixin
from .scope import SCOPE_KEYS, scope_of
from .timetravel import TimeWindow
from .write_decision import Link, WriteDecisionMixin, identity_key

logger = logging.getLogger(__name__)

_MISSING: Any = object()
_USER_ROLE = ["user"]


def build_models(config: MemoryConfig) -> None:
    """Build the embedder and LLM of ``config`` as mem0's constructor does, and drop them: raises what mem0's
    start would raise for them (a missing API key), before anything else is touched."""
    from mem0.utils.factory import EmbedderFactory, LlmFactory

    EmbedderFactory.create(config.embedder.provider, config.embedder.config, config.vector_store.config)
    LlmFactory.create(config.llm.provider, config.llm.config)


def _local_qdrant(config: MemoryConfig) -> str | None:
    """The local Qdrant folder mem0 opens for ``config`` (None for a server, a client or another provider)."""
    vs = config.vector_store
    conf = vs.config
    if vs.provider != "qdrant" or any(getattr(conf, k, None) for k in ("client", "url", "host")):
        return None
    path = getattr(conf, "path", None)
    return path if isinstance(path, str) else None


class Memory(
    WriteDecisionMixin, PruneMixin, RecoveryMixin, LiveReadsMixin, LedgerBufferMixin, FactGuardMixin, Mem0Memory
):
    """mem0's ``Memory`` with a hygiene ledger. Same constructor, ``from_config``, methods, arguments
    and result shapes; result items carry one extra key, ``"hygiene"``.

    Extra arguments: ``add(..., source=, source_kind=, ttl=, expires_at=, topic_key=)``,
    ``search``/``get_all(..., include_stale=False, as_of=, since=, until=)``. Opt-in settings:
    ``hygiene.write_decision`` (duplicate/update/contradiction decided at ``add``) and ``hygiene.rank``
    (decay in search ranking). Extra operations: :meth:`confirm`,
    :meth:`supersede`, :meth:`invalidate`, :meth:`review_queue`, :meth:`prune`, :meth:`adopt`.
    """

    def __init__(
        self,
        config: MemoryConfig | None = None,
        *,
        hygiene: HygieneSettings | dict[str, Any] | None = None,
        clock: Clock | None = None,
        config_facts: ConfigFacts | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        config = config if config is not None else MemoryConfig()
        settings = hygiene if isinstance(hygiene, HygieneSettings) else HygieneSettings.from_dict(hygiene)
        if clock is not None:
            settings.clock = clock
        self.hygiene_settings = settings
        self.ledger_path = settings.ledger_location or default_ledger_path(config.history_db_path)
        # a FIFO, socket, device or folder at a store path is refused before anything reads it (a FIFO blocks)
        check_store_paths(deployment_paths(config.history_db_path, self.ledger_path, _local_qdrant(config)))
        # a restore killed midway may have moved the ledger aside: never start (and create a fresh one) then
        refuse_while_restoring(
            None if is_postgres_url(self.ledger_path) else self.ledger_path,
            config.history_db_path,
            getattr(config.vector_store.config, "path", None),
            "open the stores",
        )
        # what can fail in mem0's own start (an embedder or LLM without its API key) fails before a store is moved
        self.store_warnings = guard_stores(
            config, settings, config_facts, self.ledger_path, before_change=lambda: build_models(config)
        )
        self.config_facts = config_facts or ConfigFacts()
        # an open ledger may be given (a scratch copy, for dry runs); otherwise the file at ledger_path
        self.ledger = ledger if ledger is not None else open_ledger(self.ledger_path)
        self._decider = WriteDecisionSettings.parse(settings.write_decision)
        try:
            # the mixins set up their own state first (auto-prune, ledger buffers and the exit hook that
            # flushes them), then mem0's own __init__ runs
            super().__init__(config)
        except BaseException:
            self.ledger.close()
            raise
        self.live_query = hook_for(self.vector_store)  # searches leave stale points out of the query
        self.faiss_search = hook_faiss(self.vector_store)  # searches build mem0's results for the scope's points only
        watch(self)  # its live/stale shares in the metrics (memory/metrics.py)
        try:  # a supersede a crashed process left half done: link its new memory, or forget the attempt
            self.recover_replacements()
        except Exception as exc:  # never keep the app from starting; the next start retries
            logger.warning("could not finish the replacements a previous process left under way: %s", exc)
        if ledger is None:  # the app's own ledger (a given one is a dry run's scratch copy: nothing may be deleted)
            try:  # a delete or prune a killed process left midway: plain mem0 would keep serving its points
                self.finish_deletes_once()
            except Exception as exc:  # never keep the app from starting; the next delete or prune retries
                logger.warning("could not finish the deletes a previous process left under way: %s", exc)
            if callable(getattr(self.ledger, "announce_replica", None)):  # a ledger on PostgreSQL: say it is open
                try:
                    self.ledger.announce_replica()  # type: ignore[attr-defined]
                except Exception as exc:  # never keep the app from starting
                    logger.debug("could not announce this replica on the ledger: %s", exc)
            try:  # which embedder makes the vectors: recorded on an empty store, compared on every start
                mismatch = check_embedder(self.ledger, self.config, self.vector_store, self.now())
            except Exception as exc:  # a read-only ledger, a store that cannot list: nothing recorded, nothing lost
                logger.debug("could not check the store's embedder: %s", exc)
            else:
                if mismatch:
                    logger.warning("%s", mismatch)
                    self.store_warnings.append(mismatch)

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        """Build from a mem0 config dict with an optional ``"hygiene"`` section."""
        mem0_part, settings, facts = split_config(config_dict)
        return cls(build_mem0_config(mem0_part), hygiene=settings, config_facts=facts)

    # -- helpers ----------------------------------------------------------------------------
    def now(self) -> datetime:
        """The current time by this instance's clock (UTC): an injected one, else the ledger's (a PostgreSQL
        ledger's is the database server's)."""
        clock = self.hygiene_settings.clock
        return as_utc(self.ledger.now() if clock is system_clock else clock())

    def _resolve_expiry(self, now: datetime, ttl: Any, expires_at: Any, expiration_date: Any) -> datetime | None:
        if ttl is None and expires_at is None and expiration_date is None:
            return None  # the common case, on every add
        given = [
            n
            for n, v in (("ttl", ttl), ("expires_at", expires_at), ("expiration_date", expiration_date))
            if v is not None
        ]
        if len(given) > 1:
            raise ConfigError(f"give only one of ttl, expires_at and expiration_date (got {', '.join(given)})")
        if ttl is not None:
            return shift_time(now, parse_duration(ttl, what="ttl"), what="ttl")
        if expires_at is None:
            # mem0's own argument behaves as in mem0: its values, its errors, and a past date is stored (hidden
            # as expired, as mem0 hides it through that UTC day's end)
            return expiration_end(expiration_date)
        when = parse_time(expires_at, what="expires_at")  # a time without an offset is local time
        if when <= now:
            raise ConfigError(
                f"the expiry {to_iso(when)} is already past (now is {to_iso(now)}); give a future time, or "
                f"use ttl='7d' for a relative one"
            )
        return when

    def require_row(self, memory_id: str) -> LedgerRow:
        """The ledger row for a memory (buffered rows flushed first), adopting it if only the store
        knows it. Raises :class:`~mem0_hygiene.errors.MemoryNotFound` when neither knows it."""
        self.flush()
        row = self.ledger.get(memory_id)
        if row is not None:
            return row
        # the raw point, not mem0's get(): its birth facts (and nothing an override of get() adds) are there
        point = self.vector_store.get(vector_id=memory_id)
        if point is None:
            raise MemoryNotFound(memory_id, "it is in neither the vector store nor the ledger; check the id")
        row = adoption_row(point_item(point, memory_id), self.now)
        self.ledger.insert([row], ignore_existing=True)
        return self.ledger.get(memory_id) or row

    # -- writes -----------------------------------------------------------------------------
    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        source: str | None = None,
        source_kind: str | None = None,
        ttl: timedelta | str | None = None,
        expires_at: datetime | str | None = None,
        topic_key: str | None = None,
    ) -> dict[str, Any]:
        """mem0's ``add`` plus provenance and expiry.

        ``source``: where the fact came from (free text); ``source_kind``: user, assistant, tool, system,
        import or unknown (inferred from ``source`` prefixes such as ``tool:``/``https://``/``file:`` and
        from message roles). ``ttl`` ("7d", "12h", a timedelta) or ``expires_at`` (datetime/ISO) set an
        expiry; mem0's ``expiration_date`` is also set so plain mem0 hides it too. Messages with role
        ``tool``/``function`` are dropped unless ``hygiene.trust_tool_output``; tool and web content is
        quarantined until :meth:`confirm`.
        """
        now = self.now()
        with collecting_redactions() as found:  # what the guard took out of the facts mem0's LLM returned
            results, rows, links, extra = self._store(
                messages,
                now,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=metadata,
                timestamp=timestamp,
                expiration_date=expiration_date,
                infer=infer,
                memory_type=memory_type,
                prompt=prompt,
                source=source,
                source_kind=source_kind,
                ttl=ttl,
                expires_at=expires_at,
                topic_key=topic_key,
            )
        if found:
            rows = with_redactions(results, rows, found)
        self.buffer_new(rows)
        if links:
            self.apply_decisions(links, now)  # each linked row is written with its link, in one transaction
        else:
            self.flush_soon()
        self.maybe_auto_prune(now)
        record_adds(results, rows)
        return {**extra, "results": results}

    def _store(
        self,
        messages: Any,
        now: datetime,
        *,
        user_id: str | None,
        agent_id: str | None,
        run_id: str | None,
        metadata: dict[str, Any] | None,
        timestamp: Any,
        expiration_date: Any,
        infer: bool,
        memory_type: str | None,
        prompt: str | None,
        source: str | None,
        source_kind: str | None,
        ttl: Any,
        expires_at: Any,
        topic_key: str | None,
        replaces: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[LedgerRow], list[Link], dict[str, Any]]:
        """Store messages through mem0's ``add`` with their birth facts: returns (result items, the new
        memories' ledger rows, not yet written anywhere, the write-time decisions' links to apply, mem0's
        other result keys). ``replaces``: the id of the memory the new one supersedes (a birth fact; the
        write-time decision is not asked then)."""
        expiry = self._resolve_expiry(now, ttl, expires_at, expiration_date)
        if self.hygiene_settings.require_source and not source:
            raise MissingSource(
                "hygiene.require_source is on and this add() has no source; pass source='chat 2026-08-08' "
                "(or 'tool:NAME URL', 'file:PATH') saying where the fact came from"
            )
        from_source = CLEAN
        if source and self.hygiene_settings.secrets != "allow":  # stored in the payload and the ledger too
            source, from_source = screen_text(source, self.hygiene_settings.secrets, "allow", "the source")
        groups: list[tuple[Any, str]] = []
        screened: list[Screened] = []  # what the write guard found, per group
        if isinstance(messages, str):  # the commonest call: one user message, screened as the text it is
            text, seen = screen_text(
                messages, self.hygiene_settings.secrets, self.hygiene_settings.instructions, "the text"
            )
            groups.append(([{"role": "user", "content": text}], resolve_kind(source_kind, source, _USER_ROLE)))
            screened.append(seen)
        elif isinstance(msgs := normalize_messages(messages), list):
            msgs, dropped = split_tool_messages(msgs, self.hygiene_settings.trust_tool_output)
            if dropped:
                logger.info(
                    "dropped %d tool/function message(s): tool output is not a source of facts "
                    "unless hygiene.trust_tool_output is true",
                    dropped,
                )
            if not msgs:
                return [], [], [], {}
            # before mem0 (and its LLM, and its messages table) sees anything
            msgs, found = screen_messages(msgs, self.hygiene_settings.secrets, self.hygiene_settings.instructions)
            roles = [str(m.get("role")) for m in msgs if isinstance(m, dict)]
            if infer:
                groups = [(msgs, resolve_kind(source_kind, source, roles))]
                merged = CLEAN
                for seen in found:
                    merged = merged.merged(seen)
                screened = [merged]
            else:
                for msg, seen in zip(msgs, found):
                    role = [str(msg.get("role"))] if isinstance(msg, dict) else []
                    kind = resolve_kind(source_kind, source, role)
                    if groups and groups[-1][1] == kind and screened[-1] == seen:
                        groups[-1][0].append(msg)
                    else:
                        groups.append(([msg], kind))
                        screened.append(seen)
        else:
            groups = [(msgs, resolve_kind(source_kind, source, []))]
            screened = [CLEAN]

        now_iso = to_iso(now)
        expiry_iso = to_iso(expiry) if expiry is not None else None
        results: list[dict[str, Any]] = []
        rows: list[LedgerRow] = []
        scope = scope_of(user_id, agent_id, run_id)
        extra: dict[str, Any] = {}
        decider = self._decider if memory_type is None and replaces is None else None
        links: list[Link] = []
        for (group, kind), seen in zip(groups, screened):
            seen = seen.merged(from_source) if from_source is not CLEAN else seen
            meta = dict(metadata or {})
            quarantined = kind in QUARANTINED_KINDS or seen.quarantine
            redacted = ",".join(seen.redacted) or None
            if self.hygiene_settings.clock is not system_clock:
                meta.setdefault("created_at", now_iso)
            facts = birth_facts(source, kind, expiry_iso, quarantined, topic_key)
            if replaces is not None:
                facts.update(replaces_facts(replaces))
            meta = birth_metadata(meta, facts)
            if decider is not None and scope:
                template = LedgerRow(
                    memory_id="",
                    user_id=scope.get("user_id"),
                    agent_id=scope.get("agent_id"),
                    run_id=scope.get("run_id"),
                    source=source,
                    source_kind=kind,
                    created_at=now_iso,
                    confirmed_at=now_iso,
                    expires_at=expiry_iso,
                    quarantined=quarantined,
                    topic_key=identity_key(topic_key, metadata, decider),
                    redacted=redacted,
                    flag=seen.flag,
                )
                call = {
                    "user_id": user_id,
                    "agent_id": agent_id,
                    "run_id": run_id,
                    "metadata": meta or None,
                    "timestamp": timestamp,
                    "infer": infer,
                    "memory_type": memory_type,
                    "prompt": prompt,
                    "expiration_date": expiration_date
                    if expiration_date is not None
                    else (expiry.date().isoformat() if expiry is not None else None),
                }
                self.add_deciding(decider, group, call, template, scope, now, results, rows, links, extra)
                continue
            # the new rows' facts and their result items' "hygiene" dict are made now, while they are at hand;
            # after mem0's add only the id is put in
            born = LedgerRow.of(
                memory_id="",
                user_id=scope.get("user_id"),
                agent_id=scope.get("agent_id"),
                run_id=scope.get("run_id"),
                source=source,
                source_kind=kind,
                created_at=now_iso,
                confirmed_at=now_iso,
                expires_at=expiry_iso,
                quarantined=quarantined,
                topic_key=topic_key,
                redacted=redacted,
                flag=seen.flag,
            )
            shown = self.hygiene_facts(born, now, now_iso)
            if seen is not CLEAN:
                shown.update(facts_of(seen))
            res = super().add(
                group,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=meta or None,
                timestamp=timestamp,
                expiration_date=expiration_date
                if expiration_date is not None
                else (expiry.date().isoformat() if expiry is not None else None),
                infer=infer,
                memory_type=memory_type,
                prompt=prompt,
            )
            extra.update({k: v for k, v in res.items() if k != "results"})
            for item in res.get("results", []):
                if item.get("event", "ADD") != "ADD":
                    continue
                rows.append(born.with_id(str(item["id"])))
                item["hygiene"] = dict(shown)
                results.append(item)
        return results, rows, links, extra

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _MISSING,
        data: str | None = None,
    ) -> dict[str, Any]:
        """mem0's ``update``; a new text counts as a confirmation, an expiration date is recorded. The new
        text goes through the write guard (``hygiene.secrets``, ``hygiene.instructions``) first. Birth facts an
        earlier version wrote in another payload shape are rewritten in the current one (see :mod:`.birth`)."""
        seen = CLEAN
        for name, value in (("text", text), ("data", data)):
            if isinstance(value, str):
                cleaned, found = screen_text(
                    value, self.hygiene_settings.secrets, self.hygiene_settings.instructions, f"the new {name}"
                )
                seen = seen.merged(found)
                text, data = (cleaned, data) if name == "text" else (text, cleaned)
        row = self.ledger.get(memory_id)
        if row is not None and row.deleted_at:
            raise MemoryNotFound(memory_id, f"it was deleted on {row.deleted_at}")
        kwargs: dict[str, Any] = {}
        expiry: datetime | None = None
        if expiration_date is not _MISSING:
            kwargs["expiration_date"] = expiration_date
            if expiration_date is not None:
                expiry = self._resolve_expiry(self.now(), None, None, expiration_date)
        point = self.vector_store.get(vector_id=memory_id)
        reshaped = upgraded(getattr(point, "payload", None)) if point is not None else None
        if reshaped:
            metadata = {**(metadata or {}), **reshaped}
        result = super().update(memory_id, text=text, metadata=metadata, data=data, **kwargs)
        if row is None:
            row = self.require_row(memory_id)
        if expiration_date is not _MISSING:
            self.ledger.set_expiry(memory_id, expiry)
        if (text or data) is not None:
            self.ledger.confirm(memory_id, self.now(), via="update")
            self.ledger.mark_guarded(memory_id, seen.redacted, seen.flag, quarantine=seen.quarantine)
        return result

    # -- lifecycle --------------------------------------------------------------------------
    def confirm(self, memory_id: str) -> dict[str, Any]:
        """Mark a memory as re-checked against its source today; releases it from quarantine."""
        self.require_row(memory_id)  # buffered rows written first; a memory only the store knows adopted
        confirm_rows(self.ledger, [memory_id], self.now())  # compare-and-set, refused as the CLI refuses
        return self._item(memory_id) or {}

    def supersede(
        self,
        old_id: str,
        text: str | None = None,
        *,
        new_id: str | None = None,
        source: str | None = None,
        source_kind: str | None = None,
        ttl: timedelta | str | None = None,
        expires_at: datetime | str | None = None,
        topic_key: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Replace ``old_id`` by a new fact (``text``, stored in the old memory's scope) or by an existing
        memory (``new_id=``). The old one is hidden from reads and points at its replacement.
        Returns the new memory's id."""
        if (text is None) == (new_id is None):
            raise ConfigError("supersede needs exactly one of text= (a new fact) or new_id= (an existing memory)")
        now = self.now()
        old = self.require_row(old_id)
        old_state = old.state(now)
        if old_state == "superseded":
            if text is not None and old.superseded_by and self._holds_text(old.superseded_by, text):
                return old.superseded_by  # done already (a retry after a crash): nothing is stored twice
            raise SupersedeError(
                f"{old_id} is already superseded by {old.superseded_by}; supersede {old.superseded_by} instead"
            )
        if old_state in ("deleted", "invalidated"):
            raise SupersedeError(f"{old_id} is {old_state}; there is nothing live to supersede")
        if new_id is not None:
            target = self.require_row(new_id)
            tstate = target.state(now)
            if tstate in ("superseded", "invalidated", "deleted"):
                raise SupersedeError(
                    f"{new_id} is {tstate} and cannot be the replacement; use the live end of its chain"
                    + (f" ({self.ledger.successors(new_id)[-1]})" if tstate == "superseded" else "")
                )
            self.ledger.link_supersede(old_id, new_id, now)
            return new_id
        scope = old.scope
        if not scope:
            item = super().get(old_id) or {}
            scope = {k: item[k] for k in SCOPE_KEYS if item.get(k)}
        # Journaled first, and the new memory says in its payload what it replaces: if the process dies
        # after mem0 stored it, the next start links the two (see memory/recovery.py).
        self.ledger.begin(old_id, "supersede", now)
        try:
            _results, rows, _links, _extra = self._store(
                text,
                now,
                **{k: scope.get(k) for k in SCOPE_KEYS},
                metadata=metadata,
                timestamp=None,
                expiration_date=None,
                infer=False,
                memory_type=None,
                prompt=None,
                source=source,
                source_kind=source_kind,
                ttl=ttl,
                expires_at=expires_at,
                topic_key=topic_key or old.topic_key,
                replaces=old_id,
            )
        except BaseException:
            self.resolve_replacement(old_id, "supersede", to_iso(now))  # mem0 may have stored it before failing
            raise
        if not rows:
            self.ledger.settle([old_id], "supersede")
            raise StateError(f"the replacement for {old_id} was not stored (was it tool output?)")
        # one transaction: readers see the old fact, or the new one and the link; never both live
        try:
            self.ledger.add_linked(rows[0], old_id, now)
        except SupersedeError:
            # another writer (a replica) superseded or deleted it meanwhile: refused, and the new fact goes
            self.ledger.insert_tombstoned(rows[:1], now)
            self.ledger.settle([old_id], "supersede")
            self.delete_ids([rows[0].memory_id])
            raise
        return rows[0].memory_id

    def _holds_text(self, memory_id: str, text: str) -> bool:
        item = super().get(memory_id)
        return item is not None and str(item.get("memory") or "").strip() == text.strip()

    def invalidate(self, memory_id: str, reason: str = "") -> None:
        """Declare a memory untrue (soft delete with a date); kept for audit until prune. A deleted, superseded
        or already invalidated memory is refused (compare-and-set: also when another writer got there first).
        The reason goes through the write guard (``hygiene.secrets``) as a memory's text does."""
        self.require_row(memory_id)
        if reason and self.hygiene_settings.secrets != "allow":  # the reason is kept in the ledger
            reason = screen_text(reason, self.hygiene_settings.secrets, "allow", "the reason")[0]
        invalidate_row(self.ledger, memory_id, reason or "invalidated", self.now())

    # -- deletes ----------------------------------------------------------------------------
    def delete(self, memory_id: str) -> dict[str, Any]:
        """mem0's ``delete``, plus the memories this one superseded (each through mem0's API) and a
        tombstone that keeps them hidden if their points ever reappear."""
        self.finish_deletes_once(leaving=[memory_id])  # what a process that died midway left, this id aside
        self.flush_keyed(memory_id)  # a buffered supersede by topic key is written first: the delete takes its chain
        fresh = self.unbuffer_new(memory_id)
        if fresh is not None:
            # added and not yet written to the ledger: it superseded nothing, so there is no chain to
            # cascade; its row goes in with its tombstone (journaled), then mem0 deletes it
            self.ledger.insert_tombstoned([fresh], self.now())
            Mem0Memory.delete(self, memory_id)
            self.settle_later([memory_id])
            return {"message": "Memory deleted successfully!"}
        self.flush_adoption(memory_id)  # the other buffered writes wait for their batch
        chain = self.ledger.tombstone_live_chain(memory_id, self.now())
        if chain is not None:  # the usual case: one write tombstoned it and what it superseded
            missing = self.delete_tombstoned(chain)
        else:
            row = self.ledger.get(memory_id)
            if row is None:
                Mem0Memory.delete(self, memory_id)  # raises mem0's ValueError for an unknown id
                self.ledger.insert(
                    [
                        LedgerRow(
                            memory_id,
                            source="unknown",
                            created_at=to_iso(self.now()),
                            deleted_at=to_iso(self.now()),
                            adopted=True,
                        )
                    ],
                    ignore_existing=True,
                )
                return {"message": "Memory deleted successfully!"}
            if row.deleted_at and self.vector_store.get(vector_id=memory_id) is None:
                raise MemoryNotFound(memory_id, f"it was already deleted on {row.deleted_at}")
            missing = self.delete_ids([memory_id])  # deleted, and its point came back: deleted again
        if memory_id in missing:
            raise MemoryNotFound(memory_id, "it was not in the vector store; the ledger now marks it deleted")
        return {"message": "Memory deleted successfully!"}

    def delete_ids(self, memory_ids: Sequence[str]) -> list[str]:
        """Tombstone (journaled as pending deletes), then delete through mem0: the ids and everything they
        superseded; the journal entries are closed as each point goes. Deletes a process that died midway
        left unfinished are finished first (once per process). Returns the ids that were already gone from
        the vector store (their tombstones are written all the same)."""
        ordered: dict[str, None] = {}
        for mid in memory_ids:
            if mid not in ordered:
                ordered.update(dict.fromkeys(self.ledger.deletion_chain(mid)))
        order = list(ordered)
        self.ledger.tombstone(order, self.now())  # one transaction for them all
        return self.delete_tombstoned(order)

    def delete_tombstoned(self, order: list[str]) -> list[str]:
        """Delete through mem0, in this order, memories whose tombstones are written (and journaled); see
        :meth:`delete_ids`."""
        missing: list[str] = []
        done: list[str] = []
        self.deleting(order, add=True)
        try:
            self.finish_deletes_once()  # leaves this call's own ids to the loop below
            for mid in counted("deleting memories through mem0", order):
                try:
                    Mem0Memory.delete(self, mid)
                except ValueError:
                    missing.append(mid)  # already gone from the store (pruned earlier): the tombstone is what matters
                done.append(mid)
        except BaseException:
            self.deletes_left_unfinished()  # the rest stays journaled: the next delete finishes it
            raise
        finally:
            self.deleting(order, add=False)
            self.settle_later(done)
        return missing

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """mem0's ``delete_all``; the scope's ledger rows (and their chains) are tombstoned first, and what
        mem0 left of the chains is deleted through its API after."""
        scope = scope_of(user_id, agent_id, run_id)
        if scope:
            self.flush()
            self.finish_deletes_once()
            ids = self.ledger.scope_ids(scope)
            chain = [p for mid in ids for p in self.ledger.predecessors(mid)]
            self.ledger.tombstone([*ids, *chain], self.now())
            result = super().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)
            self.ledger.settle(ids, "delete")
            self.finish_deletes()  # the chains: a predecessor kept in another scope goes through mem0 too
            return result
        return super().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)

    def delete_all_each(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """mem0's ``AsyncMemory.delete_all``: every memory of the scope deleted on its own, a failure logged
        and the rest deleted all the same (mem0's sync ``delete_all`` stops at the first). The scope's rows
        (and their chains) are tombstoned first; those whose delete failed get their tombstone back, so the
        ledger says exactly what was deleted."""
        scope = scope_of(user_id, agent_id, run_id)
        if not scope:  # mem0's own error
            return super().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)
        self.flush()
        self.finish_deletes_once()
        ids = self.ledger.scope_ids(scope)
        chain = [p for mid in ids for p in self.ledger.predecessors(mid)]
        self.ledger.tombstone([*ids, *chain], self.now())
        failed: dict[str, BaseException] = {}
        seen: set[tuple[str, ...]] = set()
        while True:
            listed = self.vector_store.list(filters=scope, top_k=1000)
            batch = [p for p in (listed[0] if listed else []) if str(p.id) not in failed]
            if not batch:
                break
            key = tuple(sorted(str(p.id) for p in batch))
            if key in seen:
                logger.warning("Stopping delete_all after a repeated memory batch")
                break
            seen.add(key)
            for point in batch:
                try:
                    self._delete_memory(point.id)
                except Exception as exc:  # as mem0's AsyncMemory: logged, the others still deleted
                    failed[str(point.id)] = exc
        if failed:
            logger.warning("Failed to delete %d memories", len(failed))
            for error in failed.values():
                logger.warning("Delete error: %s", error)
            self.ledger.untombstone(list(failed))
        self.ledger.settle([mid for mid in ids if mid not in failed], "delete")
        self.finish_deletes()  # the chains: a predecessor kept in another scope goes through mem0 too
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """mem0's ``reset``; every ledger row is tombstoned (prune later compacts them)."""
        self.flush()
        self.ledger.tombstone_all(self.now())
        super().reset()
        self.ledger.settle([mid for mid, _action, _since in self.ledger.pending("delete")], "delete")

    # -- reads ------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        include_stale: bool = False,
        as_of: datetime | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """mem0's ``search`` over live memories only; ``top_k=k`` returns min(k, live matches).
        ``include_stale=True`` returns every state, each item saying its own in ``["hygiene"]["state"]``.
        ``as_of=T``: what was believed at T (created by T, not yet superseded, invalidated, expired or
        deleted at T); ``since``/``until``: created in [since, until). With ``hygiene.rank`` on, the page
        is reordered by relevance, recency and importance (``["hygiene"]["rank"]`` says how). ``source``: who asks
        (a label), kept by the read log (``hygiene.read_log``) with the ids served."""
        if mem0_rejects(top_k, threshold):  # mem0 raises its own error, before anything of ours runs
            return Mem0Memory.search(
                self,
                query,
                top_k=top_k,
                filters=filters,
                threshold=threshold,
                rerank=rerank,
                explain=explain,
                reference_date=reference_date,
                show_expired=show_expired,
                **kwargs,
            )
        now = self.now()
        window = TimeWindow.build(as_of, since, until)
        rank = RankSettings.parse(self.hygiene_settings.rank)
        to_cosine = self.rank_scale() if rank is not None else None
        details = explain or to_cosine is not None  # the ranking reads the semantic score from mem0's details

        def run(fetch: int) -> dict[str, Any]:
            return Mem0Memory.search(
                self,
                query,
                top_k=fetch,
                filters=filters,
                threshold=threshold,
                rerank=rerank,
                explain=details,
                reference_date=reference_date,
                show_expired=True,
                **kwargs,
            )

        res = self.paged_read(
            run,
            top_k,
            now,
            include_stale,
            show_expired,
            window,
            rank,
            filters,
            vector_query=True,
            to_cosine=to_cosine,
        )
        if details and not explain:
            for item in res.get("results", []):
                item.pop("score_details", None)
        if self._read_log:
            self.note_reads("search", res.get("results", []), filters, source, to_iso(now))
        self.maybe_auto_prune(now)
        return res

    def rank_scale(self) -> Callable[[float], float] | None:
        """How the decay ranking reads this store's search scores as cosine similarity: None when they are
        cosine already, or when their scale cannot be known (mem0's scores are then ranked as they are, and
        the write decision refuses to run; see :mod:`mem0_hygiene.stores.scores`)."""
        cached: tuple[Callable[[float], float] | None] | None = getattr(self, "_rank_scale", None)
        if cached is None:
            try:
                scale = self.score_scale()
                cached = (None if scale.formula in (EXACT, INNER) else scale.cosine,)
            except ConfigError:
                cached = (None,)
            self._rank_scale = cached
        return cached[0]

    def get_all(
        self,
        *,
        filters: dict[str, Any] | None = None,
        top_k: int = 20,
        show_expired: bool = False,
        include_stale: bool = False,
        as_of: datetime | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """mem0's ``get_all`` over live memories only (``include_stale=True`` for all, with states);
        ``as_of``/``since``/``until`` and ``source`` as in :meth:`search`."""
        if mem0_rejects(top_k):  # mem0 raises its own error, before anything of ours runs
            return Mem0Memory.get_all(self, filters=filters, top_k=top_k, show_expired=show_expired, **kwargs)
        now = self.now()
        window = TimeWindow.build(as_of, since, until)

        def run(fetch: int) -> dict[str, Any]:
            return Mem0Memory.get_all(self, filters=filters, top_k=fetch, show_expired=True, **kwargs)

        res = self.paged_read(run, top_k, now, include_stale, show_expired, window, filters=filters)
        if self._read_log:
            self.note_reads("get_all", res.get("results", []), filters, source, to_iso(now))
        return res

    def get(self, memory_id: str, *, source: str | None = None) -> dict[str, Any] | None:
        """mem0's ``get``, whatever the memory's state; ``["hygiene"]["state"]`` says which. ``source`` as in
        :meth:`search`."""
        item = self._item(memory_id)
        if item is not None and self._read_log:
            scope = {k: item.get(k) for k in SCOPE_KEYS}
            self.note_reads("get", [item], scope, source, to_iso(self.now()))
        return item

    def _item(self, memory_id: str) -> dict[str, Any] | None:
        """mem0's item with its ``"hygiene"`` facts (no read logged: the drop-in's own lookups)."""
        item = super().get(memory_id)
        if item is None:
            return None
        row = self.row_for(item, self.ledger.get_many([memory_id]))
        item["hygiene"] = self.hygiene_facts(row, self.now())
        return item

    # -- maintenance ------------------------------------------------------------------------
    def adopt(self) -> int:
        """Give every memory in the store that has no ledger row one (source "unknown"). Returns how many."""
        self.flush()
        added = 0
        for page in iter_points(self.vector_store):
            ids = [str(p["id"]) for p in page]
            known = self.ledger.get_many(ids)
            fresh = [adoption_row(p, self.now) for p in page if str(p["id"]) not in known]
            added += self.ledger.insert(fresh, ignore_existing=True) if fresh else 0
        return added

    def review_queue(
        self, older_than: timedelta | str | None = None, limit: int = 20, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Live, non-expiring memories whose last confirmation is older than ``older_than`` (default
        ``hygiene.review_older_than``, 90 days), oldest first, at most ``limit`` (20: a week's review)."""
        self.adopt()
        now = self.now()
        delta = (
            parse_duration(older_than, what="older_than")
            if older_than is not None
            else self.hygiene_settings.review_older_than
        )
        scope = {k: v for k, v in (filters or {}).items() if k in SCOPE_KEYS and v}
        out = []
        for row in self.ledger.review_candidates(now, delta, limit, scope):
            item = super().get(row.memory_id)
            if item is None:
                continue  # in the ledger, gone from the store: the audit reports it
            strip_birth(item)
            item["hygiene"] = self.hygiene_facts(row, now)
            out.append(item)
        return out

    def history_lock(self) -> Any:
        """The lock mem0 holds around every use of its history.db connection: hold it while editing that file
        from another connection (erasure), so mem0's own writes wait instead of failing. mem0 keeps it private
        (``SQLiteManager._lock``); this is the one place that reaches for it."""
        return getattr(self.db, "_lock", None) or contextlib.nullcontext()

    def close(self) -> None:
        """Flush the ledger, close it, mem0's history db and the vector stores' clients and connection pools
        (releases a local Qdrant folder's lock and a pgvector server's connections at once)."""
        self.stop_deferred_flushes()
        try:
            self.flush()
        finally:
            self.ledger.close()
            super().close()
            # mem0's memory store, its entity store (mem0 2.2) and, with MEM0_TELEMETRY on, a second local Qdrant
            # store for telemetry; a pool the app handed in (vector_store.config.connection_pool) is the app's
            own_pool = getattr(self.config.vector_store.config, "connection_pool", None) is None
            for name in ("vector_store", "_entity_store", "_telemetry_vector_store"):
                release(getattr(self, name, None), own_pool=own_pool)
