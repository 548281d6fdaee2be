"""The write-time decision of the drop-in ``Memory`` (``hygiene.write_decision``): at ``add``, each new
memory is compared with the live memory of the same identity key, or else the nearest live memory in
exactly the same scope (one vector search), and stored, reinforced (duplicate), or stored superseding
or invalidating the old one. The rules themselves are in :mod:`mem0_hygiene.memory.decision`; the guards of
:mod:`mem0_hygiene.memory.decision_guards` check every decision by likeness after it (a guarded pair is stored
as an add and kept as a possible conflict, :mod:`mem0_hygiene.memory.conflicts`); so is a pair the model was
too unsure of to drop or hide a fact (``Verdict.held_back``).

With ``infer=False`` the decision is taken before mem0 stores the memory, so a supersede or invalidation
is journaled in the ledger first and the new memory carries what it replaces in its birth facts; its
ledger row and the link are then written in one transaction. A crash anywhere in between leaves the old
fact or the new one, never both live (see :mod:`mem0_hygiene.memory.recovery`). With ``infer=True`` mem0
stores the extracted facts before they can be decided, so a crash between mem0's write and the ledger's
leaves both live until the decision is taken again.

With ``judge: "llm_batch"`` an ``infer=True`` add is decided in two steps: every extracted fact first by the
deterministic decision (the unsure ones kept aside, before the guards), then one LLM call over all the unsure
pairs, then the guards and the quarantine rule on each answer, in the facts' order. A fact whose compared memory
was taken by an earlier fact of the same add is decided again without the judge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeAlias

from mem0 import Memory as Mem0Memory

from ..config import WriteDecisionSettings
from ..stores.ledger import LedgerRow
from ..stores.scores import ScoreScale, score_scale
from ..stores.states import live_sql
from ..timeutil import to_iso
from .birth import birth_metadata, replaces_facts
from .conflicts import record_conflict
from .decision import (
    CONTRADICTION,
    DUPLICATE,
    UNRELATED,
    UPDATE,
    Thresholds,
    classify,
    embedder_family,
    normalize_text,
    thresholds_for,
)
from .decision_guards import guard
from .judge import JUDGE, JUDGE_BATCH, JUDGES, Judgement, ask_judge, ask_judge_batch, record_judgement
from .recovery import invalidation_reason
from .scope import SCOPE_KEYS

if TYPE_CHECKING:
    from ..stores.ledger import Ledger

Link: TypeAlias = tuple[str, str, str, str, dict[str, Any] | None]
"""A decision to apply once the new rows are in the ledger: ``(action, old_id, new_id, reason,
old_item)``, action "supersede" or "invalidate"; ``old_item`` is the result item that reports the
invalidated memory (None for a supersede)."""


def identity_key(topic_key: str | None, metadata: dict[str, Any] | None, settings: WriteDecisionSettings) -> str | None:
    """``topic_key=``, else the first identity key in the metadata (``source_ref`` values are kept
    as ``"source_ref:VALUE"`` in the ledger's topic_key, so different kinds of key never meet)."""
    if topic_key:
        return topic_key
    for name in settings.identity_keys:
        value = (metadata or {}).get(name)
        if value is not None and value != "":
            return str(value) if name == "topic_key" else f"{name}:{value}"
    return None


@dataclass
class _Found:
    """The write-time decision for one new memory against the nearest live one (old_* None: none near)."""

    label: str
    similarity: float | None
    reason: str
    old_id: str | None = None
    old_text: str | None = None
    old_row: LedgerRow | None = None
    judged: Judgement | None = None
    deterministic: str | None = None  # the label before the judge, when one was asked
    conflict: str | None = None  # a guard took the decision back: why the pair is a possible conflict
    unsure: bool = False  # left for a batched judge: neither judged nor guarded yet
    batch: int | None = None  # how many pairs the batched call that judged it held

    def describe(self, **names: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "reason": self.reason,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }
        if self.judged is not None:
            out["judge"] = {
                "by": JUDGE,
                "event": self.judged.event or None,
                "reason": self.judged.reason,
                "deterministic": self.deterministic,
            }
            if self.batch is not None:
                out["judge"]["batch"] = self.batch
        if self.old_id is not None:
            out[
                {UPDATE: "supersedes", CONTRADICTION: "invalidates", DUPLICATE: "reinforces"}.get(self.label, "nearest")
            ] = self.old_id
        if self.conflict is not None:
            out["possible_conflict"] = self.conflict
        out.update(names)
        return out


class WriteDecisionMixin:
    """Mixin: ``add`` with the write-time decision, through mem0's own ``add``/``get``/``delete``.

    Expects from the class it is mixed into: mem0's ``config``, ``embedding_model`` and
    ``vector_store``; ``ledger``; ``hygiene_facts`` (:class:`~mem0_hygiene.memory.reads.LiveReadsMixin`);
    ``flush``, ``note_uses``, ``row_for`` and ``unbuffer_new`` (:class:`~mem0_hygiene.memory.buffer.LedgerBufferMixin`);
    ``resolve_replacement`` (:class:`~mem0_hygiene.memory.recovery.RecoveryMixin`).
    """

    config: Any
    embedding_model: Any
    vector_store: Any
    llm: Any
    ledger: Ledger

    if TYPE_CHECKING:

        @staticmethod
        def hygiene_facts(
            row: LedgerRow, now: datetime, now_iso: str | None = None, state: str | None = None
        ) -> dict[str, Any]: ...
        def flush(self) -> None: ...
        def note_uses(self, items: Iterable[dict[str, Any]], now: datetime) -> None: ...
        def row_for(self, item: dict[str, Any], rows: dict[str, LedgerRow]) -> LedgerRow: ...
        def unbuffer_new(self, memory_id: str) -> LedgerRow | None: ...
        def resolve_replacement(self, old_id: str, action: str, since: str) -> str | None: ...

    def score_scale(self) -> ScoreScale:
        """How this store's search scores read as cosine similarity (read once; see
        :mod:`mem0_hygiene.stores.scores`). A :class:`~mem0_hygiene.errors.ConfigError` when that cannot be
        known, or when it needs unit vectors and the embedder's are not (checked once, on a probe text)."""
        scale: ScoreScale | None = getattr(self, "_score_scale", None)
        if scale is None:
            scale = score_scale(str(self.config.vector_store.provider), self.vector_store)
            if scale.needs_unit:
                scale.check_unit(self.embedding_model.embed("unit length check", "search"))
            self._score_scale = scale
        return scale

    def _embedder_family(self) -> str | None:
        emb = self.config.embedder
        conf = emb.config if isinstance(emb.config, dict) else {}
        return embedder_family(emb.provider, conf.get("model"))

    def add_deciding(
        self,
        settings: WriteDecisionSettings,
        group: Any,
        call: dict[str, Any],
        template: LedgerRow,
        scope: dict[str, str],
        now: datetime,
        results: list[dict[str, Any]],
        rows: list[LedgerRow],
        links: list[Link],
        extra: dict[str, Any],
    ) -> None:
        """Store one group of messages with the write-time decision, one vector search per memory.

        ``infer=False``: each message is checked before it is stored (a duplicate is never stored).
        ``infer=True``: mem0's LLM extracts and stores the facts; each is then checked, and a duplicate
        is taken back out through mem0's ``delete``. ``call`` holds mem0 ``add``'s keyword arguments,
        ``template`` the new rows' facts. Result items go to ``results``, new rows to ``rows``, mem0's
        other result keys to ``extra``; supersede/invalidate links are queued in ``links`` and applied
        by :meth:`apply_decisions` once the new rows are in the ledger."""
        thresholds = thresholds_for(settings, self._embedder_family())
        self.score_scale()  # refused before anything is stored when the store's scores cannot be read as cosine
        pending = {r.memory_id: r for r in rows}
        dead = {link[1] for link in links}

        def record(item: dict[str, Any], found: _Found) -> None:
            mid = str(item["id"])
            topic = template.topic_key or (found.old_row.topic_key if found.label == UPDATE and found.old_row else None)
            row = replace(template, memory_id=mid, topic_key=topic)
            rows.append(row)
            pending[mid] = row
            item["hygiene"] = {**self.hygiene_facts(row, now), "decision": found.describe()}
            results.append(item)
            self._keep_judgement(mid, found, now)
            if found.conflict is not None and found.old_id is not None:
                record_conflict(self.ledger, mid, found.old_id, found.label, found.conflict, found.similarity, now)
            if found.old_id is None:
                return
            if found.label == UPDATE:
                item["event"] = "UPDATE"
                item["previous_memory"] = found.old_text
                links.append(("supersede", found.old_id, mid, found.reason, None))
                dead.add(found.old_id)
            elif found.label == CONTRADICTION:
                said = {k: v for k, v in found.describe().items() if k != "invalidates"}
                old_item = {
                    "id": found.old_id,
                    "memory": found.old_text,
                    "event": "DELETE",
                    "hygiene": {"decision": {**said, "invalidated_by": mid}},
                }
                results.append(old_item)
                links.append(("invalidate", found.old_id, mid, found.reason, old_item))
                dead.add(found.old_id)

        def reinforce(found: _Found) -> None:
            assert found.old_id is not None and found.old_row is not None
            results.append(
                {
                    "id": found.old_id,
                    "memory": found.old_text,
                    "event": "NONE",
                    "hygiene": {**self.hygiene_facts(found.old_row, now), "decision": found.describe()},
                }
            )
            self.note_uses([{"id": found.old_id}], now)
            self._keep_judgement(found.old_id, found, now)

        if not call["infer"]:
            for msg in group if isinstance(group, list) else [{"role": "user", "content": group}]:
                text = msg.get("content") if isinstance(msg, dict) else None
                if not isinstance(text, str) or not text.strip() or msg.get("role") == "system":
                    found = _Found(UNRELATED, None, "not decided")  # mem0 skips or rejects it itself
                else:
                    found = self._decide(text, scope, template, settings, thresholds, set(), pending, dead, now)
                    if found.label == DUPLICATE:
                        reinforce(found)
                        continue
                res = self._add_replacing(msg, call, found, now)
                extra.update({k: v for k, v in res.items() if k != "results"})
                for item in res.get("results", []):
                    if item.get("event", "ADD") == "ADD":
                        record(item, found)
            return
        res = Mem0Memory.add(self, group, **call)
        extra.update({k: v for k, v in res.items() if k != "results"})
        added = [i for i in res.get("results", []) if i.get("event", "ADD") == "ADD"]
        undecided = {str(i["id"]) for i in added}
        if settings.judge == JUDGE_BATCH:
            self._add_judged_in_batch(
                added, scope, template, settings, thresholds, pending, dead, now, record, reinforce
            )
            return
        for item in added:
            mid = str(item["id"])
            undecided.discard(mid)
            found = self._decide(
                str(item.get("memory") or ""),
                scope,
                template,
                settings,
                thresholds,
                undecided | {mid},
                pending,
                dead,
                now,
            )
            if found.label == DUPLICATE:
                Mem0Memory.delete(self, mid)  # mem0 already stored it: take it back out through its API
                reinforce(found)
            else:
                record(item, found)

    def _add_judged_in_batch(
        self,
        added: list[dict[str, Any]],
        scope: dict[str, str],
        template: LedgerRow,
        settings: WriteDecisionSettings,
        thresholds: Thresholds,
        pending: dict[str, LedgerRow],
        dead: set[str],
        now: datetime,
        record: Callable[[dict[str, Any], _Found], None],
        reinforce: Callable[[_Found], None],
    ) -> None:
        """The facts mem0 stored for one ``infer=True`` add: each decided deterministically, then one judge call
        over all the unsure pairs, then each answer guarded and applied in the facts' order."""
        undecided = {str(i["id"]) for i in added}
        decided: list[tuple[dict[str, Any], str, set[str], _Found]] = []
        for item in added:
            mid, text = str(item["id"]), str(item.get("memory") or "")
            undecided.discard(mid)
            exclude = undecided | {mid}  # the add's later facts are not compared with: no cycle among them
            found = self._decide(text, scope, template, settings, thresholds, exclude, pending, dead, now, True)
            decided.append((item, text, exclude, found))
        unsure = [(text, found.old_text or "") for _item, text, _exclude, found in decided if found.unsure]
        answers = iter(ask_judge_batch(self.llm, unsure))
        gone: set[str] = set()  # facts of this add taken back out as duplicates
        alone = replace(settings, judge=None)
        for item, text, exclude, found in decided:
            mid = str(item["id"])
            if found.unsure:
                found = self._settle(self._apply_judgement(found, next(answers), len(unsure)), text, template)
            if found.old_id is not None and (found.old_id in dead or found.old_id in gone):
                # an earlier fact of this add superseded, invalidated or dropped the compared memory: decide again
                found = self._decide(text, scope, template, alone, thresholds, exclude, pending, dead | gone, now)
                found = replace(
                    found, reason=f"{found.reason} (decided again without the judge: compared memory taken)"
                )
            if found.label == DUPLICATE:
                Mem0Memory.delete(self, mid)  # mem0 already stored it: take it back out through its API
                gone.add(mid)
                reinforce(found)
            else:
                record(item, found)

    def _add_replacing(self, msg: Any, call: dict[str, Any], found: _Found, now: datetime) -> dict[str, Any]:
        """mem0's ``add`` of one message; when it supersedes or invalidates an old memory, journaled first and
        with that in the new memory's birth facts."""
        action = {UPDATE: "supersede", CONTRADICTION: "invalidate"}.get(found.label)
        if action is None or found.old_id is None:
            return Mem0Memory.add(self, [msg], **call)
        self.ledger.begin(found.old_id, action, now)
        meta = birth_metadata(call.get("metadata"), replaces_facts(found.old_id, action, found.reason))
        try:
            return Mem0Memory.add(self, [msg], **{**call, "metadata": meta})
        except BaseException:
            self.resolve_replacement(found.old_id, action, to_iso(now))  # mem0 may have stored it first
            raise

    def _decide(
        self,
        text: str,
        scope: dict[str, str],
        template: LedgerRow,
        settings: WriteDecisionSettings,
        thresholds: Thresholds,
        exclude: set[str],
        pending: dict[str, LedgerRow],
        dead: set[str],
        now: datetime,
        defer: bool = False,
    ) -> _Found:
        """Compare a new memory with the live memory of the same identity key, or else with the nearest
        live memory in exactly the same scope (one vector search), and decide. ``defer``: an unsure decision
        is returned as it is (``unsure``), for a batched judge and then :meth:`_settle`."""
        key = template.topic_key
        found: _Found | None = None
        if key is not None:
            found = self._identity_match(text, key, scope, exclude, pending, dead, now)
        if found is None:
            found = self._nearest(text, scope, key, settings, thresholds, exclude, pending, dead, now, defer)
        return found if found.unsure else self._quarantine(found, template)

    @staticmethod
    def _quarantine(found: _Found, template: LedgerRow) -> _Found:
        if template.quarantined and found.label in (UPDATE, CONTRADICTION):
            # tool output may add a memory, never replace or retract one (prompt injection through memory)
            return replace(found, label=UNRELATED, reason=f"{found.label} not applied: quarantined source")
        return found

    def _settle(self, found: _Found, text: str, template: LedgerRow) -> _Found:
        """A decision left unsure, once judged: the guards, then the quarantine rule."""
        return self._quarantine(self._apply_guards(replace(found, unsure=False), text, found.old_text or ""), template)

    @staticmethod
    def _apply_guards(found: _Found, text: str, old_text: str) -> _Found:
        guarded = guard(found.label, text, old_text)  # the judge's answer too: never on likeness alone
        if guarded.changed is None:
            return found
        return replace(
            found, label=guarded.label, reason=f"{found.reason}; {guarded.changed}", conflict=guarded.conflict
        )

    def _identity_match(
        self,
        text: str,
        key: str,
        scope: dict[str, str],
        exclude: set[str],
        pending: dict[str, LedgerRow],
        dead: set[str],
        now: datetime,
    ) -> _Found | None:
        where = "topic_key = ? AND " + live_sql(expiry=False)  # expiry is judged below, by the clock
        params: list[Any] = [key]
        for name in SCOPE_KEYS:
            where += f" AND {self.ledger.dialect.is_same(name)}"
            params.append(scope.get(name))
        stored = list(self.ledger.iter_rows(where, params, order="created_at DESC"))
        fresh = [r for r in reversed(pending.values()) if r.topic_key == key and r.scope == scope]
        for row in [*fresh, *stored]:
            if row.memory_id in exclude or row.memory_id in dead or row.state(now) != "live":
                continue
            item = Mem0Memory.get(self, row.memory_id)
            if item is None:
                continue  # in the ledger, gone from the store: the audit reports it
            old_text = str(item.get("memory") or "")
            same = normalize_text(old_text) == normalize_text(text)
            return _Found(
                DUPLICATE if same else UPDATE,
                None,
                "same text" if same else "same identity key",
                row.memory_id,
                old_text,
                row,
            )
        return None

    def _nearest(
        self,
        text: str,
        scope: dict[str, str],
        key: str | None,
        settings: WriteDecisionSettings,
        thresholds: Thresholds,
        exclude: set[str],
        pending: dict[str, LedgerRow],
        dead: set[str],
        now: datetime,
        defer: bool = False,
    ) -> _Found:
        vector = self.embedding_model.embed(text, "search")
        hits = self.vector_store.search(query=text, vectors=vector, top_k=settings.candidates, filters=dict(scope))
        scale = self.score_scale()
        similarity = {str(h.id): scale.cosine(h.score) for h in hits}  # one scale whatever the provider
        hits = sorted(
            (h for h in hits if str(h.id) not in exclude and str(h.id) not in dead),
            key=lambda h: -similarity[str(h.id)],
        )
        rows = self.ledger.get_many([str(h.id) for h in hits]) if hits else {}
        for hit in hits:
            hid, payload = str(hit.id), dict(hit.payload or {})
            if any(payload.get(name) != scope.get(name) for name in SCOPE_KEYS):
                continue  # a wider or narrower scope is another memory's business
            row = pending.get(hid) or self.row_for({**payload, "id": hid, "payload": payload}, rows)
            if row.state(now) != "live":
                continue
            if key is not None and row.topic_key is not None and row.topic_key != key:
                continue  # different identity keys never merge
            old_text = str(payload.get("data") or "")
            verdict = classify(similarity[hid], text, old_text, thresholds)
            found = _Found(verdict.label, verdict.similarity, verdict.reason, hid, old_text, row)
            if verdict.held_back is not None:  # too unsure to drop or hide a fact: added, and queued for review
                found.conflict = f"may be {verdict.held_back}: the model was unsure ({verdict.reason})"
            if settings.judge in JUDGES and verdict.ambiguous:
                if defer:
                    return replace(found, unsure=True)  # judged in the add's batch, then guarded (_settle)
                found = self._judge(found, text, old_text, settings.judge)
            return self._apply_guards(found, text, old_text)
        return _Found(UNRELATED, None, "no live memory nearby")

    def _judge(self, found: _Found, text: str, old_text: str, judge: str = JUDGE) -> _Found:
        """Ask the app's mem0 LLM about one unsure decision (one call); its answer decides when usable."""
        if judge == JUDGE_BATCH:  # one pair, in the batch's format: the app's LLM sees one kind of question
            return self._apply_judgement(found, ask_judge_batch(self.llm, [(text, old_text)])[0], 1)
        return self._apply_judgement(found, ask_judge(self.llm, text, old_text))

    @staticmethod
    def _apply_judgement(found: _Found, judged: Judgement, batch: int | None = None) -> _Found:
        """The judge's answer decides when usable; else the deterministic decision stands, the reason says why."""
        if judged.label is None:
            reason = f"{found.reason}; {judged.reason}"
            return replace(found, judged=judged, deterministic=found.label, reason=reason, batch=batch)
        reason = f"llm: {judged.reason}"  # judged: no longer a conflict for a person (the guards may make it one)
        return replace(
            found,
            label=judged.label,
            reason=reason,
            judged=judged,
            deterministic=found.label,
            batch=batch,
            conflict=None,
        )

    def _keep_judgement(self, memory_id: str, found: _Found, now: datetime) -> None:
        if found.judged is not None:
            record_judgement(self.ledger, memory_id, found.old_id, found.label, found.judged, found.similarity, now)

    def apply_decisions(self, links: list[Link], now: datetime) -> None:
        """Supersede or invalidate the old memories the decisions named: each new memory's ledger row and
        its link in one transaction (the other new rows, and an adopted old memory's row, are flushed first)."""
        fresh = {new_id: self.unbuffer_new(new_id) for _action, _old, new_id, _reason, _item in links}
        self.flush()  # an adopted old memory gets its ledger row first
        for action, old_id, new_id, reason, old_item in links:
            row = fresh.get(new_id)
            why = invalidation_reason(new_id, reason)
            if row is not None:
                self.ledger.add_linked(row, old_id, now, action, why, follow=True)  # lost a race: the new head
                fresh[new_id] = None  # written: a second link of the same memory only links
            elif action == "supersede":
                self.ledger.link_supersede(old_id, new_id, now, follow=True)
            else:
                self.ledger.invalidate(old_id, why, now)
            if old_item is not None:
                row_now = self.ledger.get(old_id)
                if row_now is not None:
                    old_item["hygiene"] = {**self.hygiene_facts(row_now, now), **old_item["hygiene"]}
