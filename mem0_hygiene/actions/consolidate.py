"""Consolidating a store that already exists: ``consolidate(target)``.

Months of plain-mem0 memories hold the same preference stated three ways and old facts quietly replaced by
newer ones, all live. For each scope (the exact user_id / agent_id / run_id of a memory), every live memory
is compared with the copies of its own text and each distinct text with its nearest neighbours among the
others in that scope (so repeats never fill a memory's neighbours), using the embeddings already stored in the
vector store (read once with their vectors; nothing is embedded again), and each pair goes through the write-time
decision (:func:`mem0_hygiene.memory.decision.classify`, with the thresholds in force for the app's embedder).
The result is a plan:

- duplicates are merged into the best-sourced, newest-confirmed one (the others are superseded by it);
- an older fact is superseded by the newer one that updates it;
- an older fact a newer one contradicts is invalidated;
- a pair the decision would change but is unsure of (the model's probability below ``CONFIDENT``, 0.75: the
  line below which a write would ask the LLM judge) is left alone and listed (``ConsolidationPlan.unsure``).
  Each memory meets several neighbours here, most of them about something else, so an unsure verdict, hiding a
  true fact when it is wrong, is not applied without a person.

Each memory is hidden at most once, no step points at a memory another step invalidates, and supersede
chains never loop; a merge into a memory that a newer fact then supersedes makes a chain whose live end is
that newer fact. Applying goes through the drop-in's ``supersede(old, new_id=)`` and ``invalidate`` (never a
delete). The plan is written to the ledger's record first (:mod:`mem0_hygiene.stores.consolidation_log`) and
each step is marked as it is applied, so a run killed midway is finished by the next one: steps already in
the ledger are only marked, none is applied twice and none is forgotten. ``mem0-hygiene history ID`` shows
the recorded reason ("consolidate: duplicate of X (similarity 0.93)").

Nearest neighbours are found over the stored vectors read from the store, scope by scope, in blocks (an exact
cosine top-k, as local Qdrant computes it): local Qdrant's own filtered search costs about 0.15 s per query
at 10k points, far too slow to ask once per memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..config import WriteDecisionSettings
from ..errors import ConfigError
from ..memory.birth import adoption_row
from ..memory.decision import (
    CONFIDENT,
    CONTRADICTION,
    DUPLICATE,
    UPDATE,
    Thresholds,
    classify,
    embedder_family,
    normalize_text,
    thresholds_for,
)
from ..memory.decision_guards import guard
from ..memory.recovery import point_item
from ..memory.scope import SCOPE_KEYS
from ..stores import consolidation_log as log
from ..stores.ledger import LedgerRow
from ..target import Target, resolve
from ..timeutil import to_iso
from .consolidate_plan import INVALIDATE, MERGE, SUPERSEDE, ConsolidationPlan, PlanStep, UnsurePair

BLOCK = 1024
"""Rows of the similarity matrix computed at once (1024 x 10k float32 = 40 MB)."""

PAGE = 10_000
"""Points read per scroll page (with their vectors)."""

SOURCE_RANK = {"user": 5, "import": 4, "system": 3, "assistant": 2, "tool": 1, "unknown": 0}
"""How well-sourced a memory is, by source kind (a merge keeps the best)."""

_ACTION_OF = {DUPLICATE: MERGE, UPDATE: SUPERSEDE, CONTRADICTION: INVALIDATE}


@dataclass
class Candidate:
    """A live memory to compare: its id, text, ledger row (or adoption row), scope and stored vector."""

    memory_id: str
    text: str
    row: LedgerRow
    scope: dict[str, str]
    vector: Any

    @property
    def keeper_rank(self) -> tuple[Any, ...]:
        """Best-sourced first, then the newest confirmation, then the most used (the one a merge keeps)."""
        r = self.row
        has_source = bool(r.source) and r.source != "unknown"
        return (
            SOURCE_RANK.get(r.source_kind, 0),
            has_source,
            r.confirmed_at or r.created_at or "",
            r.use_count,
            r.created_at or "",
            self.memory_id,
        )

    @property
    def age_rank(self) -> tuple[str, str]:
        """Older first (created_at, then id)."""
        return (self.row.created_at or "", self.memory_id)


def consolidate(
    target: Any, *, scope: dict[str, str] | None = None, dry_run: bool = False, neighbours: int | None = None
) -> ConsolidationPlan:
    """Find duplicates, older facts and contradicted facts among the live memories of each scope, and (unless
    ``dry_run``) apply the plan through ``supersede``/``invalidate``. Returns the
    :class:`~mem0_hygiene.actions.consolidate_plan.ConsolidationPlan` (the steps with their outcome).

    ``target``: the app's config dict, its live drop-in Memory, or a Target. ``scope`` narrows the run to the
    scopes matching every given key (``{"user_id": "dana"}``). ``neighbours``: how many nearest memories each
    memory is compared with (default ``hygiene.write_decision.candidates``, 5). A run that an earlier,
    interrupted run left unfinished first finishes that run's steps (shown with ``resumed``). A dry run writes
    nothing at all."""
    wanted = _check_scope(scope)
    tgt = resolve(target)
    decider = WriteDecisionSettings.parse(tgt.settings.write_decision) or WriteDecisionSettings()
    k = decider.candidates if neighbours is None else neighbours
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
        raise ConfigError(f"neighbours is {neighbours!r}; use a whole number from 1 to 100")
    with tgt.memory_for("consolidate", readonly=dry_run) as m:
        family = _family(tgt, m)
        thresholds = thresholds_for(decider, family)
        now = m.now()
        left = log.unfinished(m.ledger)
        resumed = [_resume(m, s, now, dry_run) for s in left]
        hidden_before = {s.memory_id for s in left}
        memories = [mem for mem in _live_memories(m, now, wanted) if mem.memory_id not in hidden_before]
        steps, scopes, pairs, unsure = plan_steps(memories, thresholds, k)
        plan_id = None
        if not dry_run and steps:
            plan_id = uuid.uuid4().hex
            stamp = to_iso(now)
            log.write_plan(
                m.ledger,
                [
                    log.LoggedStep(plan_id, i, s.action, s.memory_id, s.into_id, s.similarity, s.reason, stamp)
                    for i, s in enumerate(steps)
                ],
            )
            done = []
            for i, s in enumerate(steps):
                logged = log.LoggedStep(plan_id, i, s.action, s.memory_id, s.into_id, s.similarity, s.reason, stamp)
                done.append(_with_outcome(s, _apply(m, logged, now)))
            steps = done
        return ConsolidationPlan(
            steps=tuple([*resumed, *steps]),
            dry_run=dry_run,
            at=to_iso(now),
            scopes=scopes,
            memories=len(memories),
            pairs=pairs,
            thresholds=thresholds.as_dict(),
            embedder=family,
            plan_id=plan_id,
            unsure=tuple(unsure),
        )


# --------------------------------------------------------------------------------------------- reading


def _check_scope(scope: dict[str, str] | None) -> dict[str, str]:
    wanted = {k: v for k, v in (scope or {}).items() if v is not None}
    bad = [k for k in wanted if k not in SCOPE_KEYS]
    if bad:
        raise ConfigError(f"unknown scope key {bad[0]!r}; use {', '.join(SCOPE_KEYS)} (e.g. user_id=dana)")
    return {k: str(v) for k, v in wanted.items()}


def _family(tgt: Target, m: Any) -> str | None:
    """The app's embedder family: from its config (the store was opened with the offline embedder, which
    never runs here) or, in-process, from the app's own Memory."""
    if tgt.memory is None:
        emb = tgt.mem0_config.get("embedder") or {}
        conf = emb.get("config") or {}
        return embedder_family(emb.get("provider") or "openai", conf.get("model") if isinstance(conf, dict) else None)
    emb = m.config.embedder
    conf = emb.config if isinstance(emb.config, dict) else {}
    return embedder_family(emb.provider, conf.get("model"))


def stored_vectors(vector_store: Any, page: int = PAGE) -> Iterator[list[Any]]:
    """Every point of the mem0 vector store with its payload and stored vector, in pages (``id``, ``payload`` and
    ``vector`` attributes), on any provider the seam reads (:func:`~mem0_hygiene.stores.vector.from_mem0`)."""
    from ..stores.vector import UnsupportedVectorStore, from_mem0

    try:
        store = from_mem0(vector_store)
    except UnsupportedVectorStore as exc:
        raise ConfigError(f"consolidate reads the stored embeddings, and {exc}; nothing was changed") from exc
    with store:
        for points in store.pages(page, with_vectors=True):
            yield [SimpleNamespace(id=p["id"], payload=p["payload"], vector=p.get("vector")) for p in points]


def _vector(point: Any) -> Any:
    vec = point.vector
    if isinstance(vec, dict):  # named vectors: mem0 stores one
        vec = next(iter(vec.values()), None)
    return vec


def _live_memories(m: Any, now: datetime, wanted: dict[str, str]) -> list[Candidate]:
    """The live memories (ledger state, or as the drop-in would adopt them) with a text and a vector."""
    out: list[Candidate] = []
    for points in stored_vectors(m.vector_store):
        rows = m.ledger.get_many([str(p.id) for p in points])
        for p in points:
            payload = dict(p.payload or {})
            scope = {k: str(payload[k]) for k in SCOPE_KEYS if payload.get(k)}
            if any(scope.get(k) != v for k, v in wanted.items()):
                continue
            text = payload.get("data")
            vec = _vector(p)
            if not isinstance(text, str) or not text.strip() or vec is None:
                continue
            mid = str(p.id)
            row = rows.get(mid) or adoption_row(point_item(p), m.now)
            if row.state(now) != "live":
                continue
            out.append(Candidate(mid, text, row, scope, vec))
    return out


# --------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Edge:
    action: str
    hidden: Candidate
    into: Candidate
    similarity: float
    decision: str


def neighbour_pairs(vectors: np.ndarray, k: int) -> dict[tuple[int, int], float]:
    """(i, j) with i < j -> cosine similarity, for each row's ``k`` nearest other rows (exact, in blocks)."""
    n = len(vectors)
    if n < 2:
        return {}
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    kk = min(k, n - 1)
    out: dict[tuple[int, int], float] = {}
    for start in range(0, n, BLOCK):
        sims = unit[start : start + BLOCK] @ unit.T
        rows = np.arange(sims.shape[0])
        sims[rows, start + rows] = -np.inf
        nearest = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        for r, cols in enumerate(nearest.tolist()):
            i = start + r
            for j in cols:
                pair = (i, j) if i < j else (j, i)
                if pair not in out:
                    out[pair] = min(1.0, float(sims[r, j]))  # a unit vector with itself can round above 1
    return out


def plan_steps(
    memories: Sequence[Candidate], thresholds: Thresholds, k: int
) -> tuple[list[PlanStep], int, int, list[UnsurePair]]:
    """The plan for these live memories: (steps in the order to apply, scopes compared, pairs judged, the pairs
    left alone as unsure, most similar first)."""
    by_scope: dict[tuple[str | None, ...], list[Candidate]] = {}
    for mem in memories:
        by_scope.setdefault(tuple(mem.scope.get(name) for name in SCOPE_KEYS), []).append(mem)
    steps: list[PlanStep] = []
    unsure: list[UnsurePair] = []
    pairs_judged = 0
    for key in sorted(by_scope, key=lambda t: tuple(v or "" for v in t)):
        group = sorted(by_scope[key], key=lambda mem: mem.age_rank)
        edges, judged, left = _edges(group, thresholds, k)
        pairs_judged += judged
        steps.extend(_choose(edges))
        unsure.extend(left)
    unsure.sort(key=lambda u: (-u.similarity, u.memory_id, u.into_id))
    return steps, len(by_scope), pairs_judged, unsure


def _edges(group: list[Candidate], thresholds: Thresholds, k: int) -> tuple[list[_Edge], int, list[UnsurePair]]:
    """The decided pairs of one scope (group sorted oldest first): each memory with the best-ranked copy of its
    own text, each distinct text with its ``k`` nearest distinct texts (so repeats never fill a memory's
    neighbours), and memories of one identity key with the newest of them; and the pairs the decision would
    change but is unsure of (the model's probability below :data:`CONFIDENT`), left alone."""
    if len(group) < 2:
        return [], 0, []
    vectors = np.asarray([mem.vector for mem in group], dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)

    def cos(i: int, j: int) -> float:
        return min(1.0, float(unit[i] @ unit[j]))

    copies: dict[str, list[int]] = {}
    for i, mem in enumerate(group):
        copies.setdefault(normalize_text(mem.text), []).append(i)
    pairs: dict[tuple[int, int], float] = {}
    reps = []
    for members in copies.values():
        rep = max(members, key=lambda i: group[i].keeper_rank)
        reps.append(rep)
        for i in members:
            if i != rep:
                pairs[(min(i, rep), max(i, rep))] = cos(i, rep)
    reps.sort()
    for (x, y), sim in neighbour_pairs(unit[reps], k).items():
        pairs[(reps[x], reps[y])] = sim
    by_key: dict[str, list[int]] = {}
    for i, mem in enumerate(group):
        if mem.row.topic_key:
            by_key.setdefault(mem.row.topic_key, []).append(i)
    keyed: dict[tuple[int, int], float] = {}
    for members in by_key.values():  # the same identity key: the newest replaces every older one
        newest = members[-1]
        for i in members[:-1]:
            keyed[(i, newest)] = cos(i, newest)
    edges: list[_Edge] = []
    unsure: list[UnsurePair] = []
    for (i, j), sim in {**pairs, **keyed}.items():
        older, newer = group[i], group[j]  # the group is sorted oldest first and i < j
        a, b = older.row.topic_key, newer.row.topic_key
        if a and b and a != b:
            continue  # different identity keys never merge
        verdict = classify(sim, newer.text, older.text, thresholds)
        label, decision = verdict.label, verdict.reason
        keyed_update = bool(a and a == b and label not in (DUPLICATE, CONTRADICTION))
        if keyed_update:
            label, decision = UPDATE, "same identity key"
        else:
            guarded = guard(label, newer.text, older.text)  # never drop or hide a fact on likeness alone
            if guarded.conflict is not None:  # a possible conflict: both stay, listed for a person
                unsure.append(
                    UnsurePair(
                        label,
                        verdict.confidence if verdict.confidence is not None else 0.0,
                        older.memory_id,
                        older.text,
                        newer.memory_id,
                        newer.text,
                        sim,
                        f"possible conflict: {guarded.conflict}",
                        dict(older.scope),
                    )
                )
                continue
            if guarded.changed is not None:
                label, decision = guarded.label, f"{decision}; {guarded.changed}"
        action = _ACTION_OF.get(label)
        if action is None:
            if verdict.held_back is not None and not keyed_update:  # the model was unsure: listed, not applied
                unsure.append(
                    UnsurePair(
                        verdict.held_back,
                        verdict.confidence if verdict.confidence is not None else 0.0,
                        older.memory_id,
                        older.text,
                        newer.memory_id,
                        newer.text,
                        sim,
                        f"possible conflict: {verdict.reason}",
                        dict(older.scope),
                    )
                )
            continue
        if not keyed_update and verdict.confidence is not None and verdict.confidence < CONFIDENT:
            unsure.append(
                UnsurePair(
                    label,
                    verdict.confidence,
                    older.memory_id,
                    older.text,
                    newer.memory_id,
                    newer.text,
                    sim,
                    decision,
                    dict(older.scope),
                )
            )
            continue
        if action == MERGE:
            keep, drop = (newer, older) if newer.keeper_rank >= older.keeper_rank else (older, newer)
            edges.append(_Edge(action, drop, keep, sim, decision))
        else:
            edges.append(_Edge(action, older, newer, sim, decision))
    return edges, len(pairs) + len(keyed), unsure


def _choose(edges: list[_Edge]) -> list[PlanStep]:
    """Pick the edges to apply, strongest first: each memory hidden once, no link to an invalidated memory,
    no supersede cycle; ordered so that every link's target is still live when the link is made."""
    order = {INVALIDATE: 0, SUPERSEDE: 1, MERGE: 2}
    chosen: dict[str, _Edge] = {}
    linked_to: set[str] = set()
    invalid: set[str] = set()
    for edge in sorted(edges, key=lambda e: (-e.similarity, order[e.action], e.hidden.memory_id)):
        v, h = edge.hidden.memory_id, edge.into.memory_id
        if v in chosen:
            continue
        if edge.action == INVALIDATE:
            if v in linked_to:
                continue  # another memory is merged into it or superseded by it: it must stay valid
            invalid.add(v)
        else:
            if h in invalid or _leads_to(chosen, h, v):
                continue
            linked_to.add(h)
        chosen[v] = edge
    _merge_into_keepers(chosen, edges)

    def depth(mid: str) -> int:
        steps = 0
        seen = {mid}
        while mid in chosen and chosen[mid].action != INVALIDATE:
            mid = chosen[mid].into.memory_id
            if mid in seen:
                break
            seen.add(mid)
            steps += 1
        return steps

    ordered = sorted(chosen.values(), key=lambda e: (-depth(e.hidden.memory_id), e.hidden.age_rank))
    return [_step(e) for e in ordered]


def _merge_into_keepers(chosen: dict[str, _Edge], edges: list[_Edge]) -> None:
    """A duplicate merged into a copy that is itself merged into a better one goes straight into the better
    one when the two are duplicates too (C -> B -> A becomes C -> A, B -> A)."""
    merges = {frozenset((e.hidden.memory_id, e.into.memory_id)): e for e in edges if e.action == MERGE}
    changed = True
    while changed:
        changed = False
        for v, edge in list(chosen.items()):
            nxt = chosen.get(edge.into.memory_id)
            if edge.action != MERGE or nxt is None or nxt.action != MERGE:
                continue
            direct = merges.get(frozenset((v, nxt.into.memory_id)))
            if direct is not None and direct.hidden.memory_id == v:
                chosen[v] = direct
                changed = True


def _leads_to(chosen: dict[str, _Edge], start: str, goal: str) -> bool:
    mid: str | None = start
    seen: set[str] = set()
    while mid is not None and mid not in seen:
        if mid == goal:
            return True
        seen.add(mid)
        edge = chosen.get(mid)
        mid = edge.into.memory_id if edge is not None and edge.action != INVALIDATE else None
    return False


def reason_text(action: str, into_id: str, similarity: float, decision: str) -> str:
    """The reason recorded for a step: ``"consolidate: duplicate of X (similarity 0.93)"``."""
    what = {MERGE: "duplicate of", SUPERSEDE: "older fact, superseded by", INVALIDATE: "contradicted by"}[action]
    extra = "" if decision in ("similarity",) else f", {decision}"
    return f"consolidate: {what} {into_id} (similarity {similarity:.2f}{extra})"


def _step(edge: _Edge) -> PlanStep:
    sim = edge.similarity
    return PlanStep(
        action=edge.action,
        memory_id=edge.hidden.memory_id,
        text=edge.hidden.text,
        into_id=edge.into.memory_id,
        into_text=edge.into.text,
        similarity=sim,
        decision=edge.decision,
        reason=reason_text(edge.action, edge.into.memory_id, sim, edge.decision),
        scope=dict(edge.hidden.scope),
        into_source=edge.into.row.source,
    )


# --------------------------------------------------------------------------------------------- applying


def _apply(m: Any, step: log.LoggedStep, now: datetime) -> str:
    """Apply one recorded step through the drop-in and mark it; a step whose change is already in the ledger
    (the run was killed between the two) is only marked. Returns the outcome."""
    outcome = _outcome(m, step, now)
    if outcome is None:
        if step.action == INVALIDATE:
            m.invalidate(step.memory_id, reason=step.reason)
        else:
            m.supersede(step.memory_id, new_id=step.into_id)
        outcome = "applied"
    log.mark(m.ledger, step, outcome, to_iso(m.now()))
    return outcome


def _outcome(m: Any, step: log.LoggedStep, now: datetime) -> str | None:
    """ "applied" when the step's change is already in the ledger, "skipped: WHY" when it no longer applies,
    None when it is to be applied now."""
    row = _row(m, step.memory_id)
    if row is None:
        return f"skipped: {step.memory_id} is gone from the store"
    if step.action == INVALIDATE and row.invalid_at and row.invalid_reason == step.reason:
        return "applied"
    if step.action != INVALIDATE and row.superseded_by == step.into_id:
        return "applied"
    state = row.state(now)
    if state != "live":
        return f"skipped: {step.memory_id} is {state} now"
    if step.action != INVALIDATE:
        into = _row(m, step.into_id)
        into_state = into.state(now) if into is not None else "gone"
        if into_state != "live":
            return f"skipped: {step.into_id} is {into_state} now"
    return None


def _row(m: Any, memory_id: str) -> LedgerRow | None:
    """The memory's ledger row, or the row the drop-in would adopt it with (nothing written); None when
    neither the ledger nor the store knows it."""
    row = m.ledger.get(memory_id)
    if row is not None:
        return row
    point = m.vector_store.get(vector_id=memory_id)
    return adoption_row(point_item(point), m.now) if point is not None else None


def _resume(m: Any, step: log.LoggedStep, now: datetime, dry_run: bool) -> PlanStep:
    """A step an interrupted run left: finished now (or, in a dry run, shown as it would be)."""
    outcome = _outcome(m, step, now) if dry_run else _apply(m, step, now)
    texts = {}
    for mid in (step.memory_id, step.into_id):
        point = m.vector_store.get(vector_id=mid)
        texts[mid] = (point.payload or {}).get("data") if point is not None else None
    row = m.ledger.get(step.memory_id)
    into = m.ledger.get(step.into_id)
    decision = step.reason.rsplit(", ", 1)[-1].rstrip(")") if ", " in step.reason else "similarity"
    return PlanStep(
        action=step.action,
        memory_id=step.memory_id,
        text=texts[step.memory_id],
        into_id=step.into_id,
        into_text=texts[step.into_id],
        similarity=step.similarity or 0.0,
        decision=decision,
        reason=step.reason,
        scope=row.scope if row is not None else {},
        into_source=into.source if into is not None else None,
        outcome=None if dry_run and outcome is None else (outcome or "applied"),
        resumed=True,
    )


def _with_outcome(step: PlanStep, outcome: str) -> PlanStep:
    return replace(step, outcome=outcome)
