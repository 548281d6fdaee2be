"""The result of ``consolidate``: a reviewable plan of merges, supersedes and invalidations, shown as a diff.

Frozen dataclasses with ``to_dict()`` (what ``--json`` prints, credentials redacted) and a diff-like view
(:class:`~mem0_hygiene.render.tables.LinesView`: the same lines in the terminal and in Jupyter): for each
change the memory that goes (``-``) and the one that stays (``+``), with the reason and the similarity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..display.tables import Line, LinesView, short
from ..display.text import redacted_data

MERGE = "merge"
SUPERSEDE = "supersede"
INVALIDATE = "invalidate"
ACTIONS = (MERGE, SUPERSEDE, INVALIDATE)

_HEADS = {
    MERGE: "duplicate: merge into the best-sourced, newest-confirmed one",
    SUPERSEDE: "update: the older fact is superseded by the newer one",
    INVALIDATE: "contradiction: the older fact is invalidated",
}


def scope_text(scope: dict[str, str]) -> str:
    """``"user_id=dana, agent_id=ops"`` ("(no scope)" for none)."""
    return ", ".join(f"{k}={v}" for k, v in scope.items()) or "(no scope)"


@dataclass(frozen=True)
class PlanStep:
    """One change of the plan.

    Fields:
        action: "merge" (a duplicate superseded by the one kept), "supersede" (an older fact by a newer one)
            or "invalidate" (an older fact a newer one contradicts).
        memory_id, text: the memory that is hidden.
        into_id, into_text: the memory that stays (the one kept, the newer fact, the contradiction).
        similarity: the cosine similarity of their stored embeddings.
        decision: the decision's own reason ("similarity", "same text", "different numbers", a negation cue).
        reason: the sentence recorded and shown by ``history`` ("consolidate: duplicate of X (similarity 0.93)").
        scope: user_id / agent_id / run_id of both.
        into_source: the source of the memory that stays (why it was kept, for a merge).
        outcome: None in a plan not applied; "applied", or "skipped: WHY" when the memory changed meanwhile.
        resumed: the step was planned by an earlier run that was interrupted, and is finished by this one.
    """

    action: str
    memory_id: str
    text: str | None
    into_id: str
    into_text: str | None
    similarity: float
    decision: str
    reason: str
    scope: dict[str, str] = field(default_factory=dict)
    into_source: str | None = None
    outcome: str | None = None
    resumed: bool = False


@dataclass(frozen=True)
class UnsurePair:
    """A pair the decision would change but is unsure of (the model's probability below
    :data:`~mem0_hygiene.memory.decision.CONFIDENT`): left alone, listed for a person to judge.

    Fields:
        label: what the decision leans to ("duplicate", "update" or "contradiction").
        confidence: the model's probability of that label.
        memory_id, text: the older memory (the one a change would hide, or merge).
        into_id, into_text: the newer one.
        similarity, decision, scope: as in :class:`PlanStep`.
    """

    label: str
    confidence: float
    memory_id: str
    text: str | None
    into_id: str
    into_text: str | None
    similarity: float
    decision: str
    scope: dict[str, str] = field(default_factory=dict)


UNSURE_SHOWN = 20
"""Unsure pairs the diff shows (``--json`` lists them all)."""


@dataclass(frozen=True)
class ConsolidationPlan(LinesView):
    """What ``consolidate`` found (and, unless ``dry_run``, did).

    Fields:
        steps: the changes, in the order they are (or would be) applied.
        dry_run: True when nothing was changed.
        at: when (UTC ISO).
        scopes: how many scopes were compared.
        memories: how many live memories were compared.
        pairs: how many nearest-neighbour pairs the decision judged.
        thresholds: the decision's thresholds (duplicate / update / contradiction).
        embedder: the embedder family the thresholds are for ("offline", "all-MiniLM-L6-v2", or None).
        plan_id: the run's id in the ledger's record (None for a dry run).
        unsure: the pairs left alone because the decision was unsure of them, most similar first.
    """

    steps: tuple[PlanStep, ...]
    dry_run: bool
    at: str
    scopes: int = 0
    memories: int = 0
    pairs: int = 0
    thresholds: dict[str, float] = field(default_factory=dict)
    embedder: str | None = None
    plan_id: str | None = None
    unsure: tuple[UnsurePair, ...] = ()

    def __len__(self) -> int:
        return len(self.steps)

    def counts(self) -> dict[str, int]:
        """Steps per action."""
        return {a: sum(1 for s in self.steps if s.action == a) for a in ACTIONS}

    @property
    def applied(self) -> int:
        return sum(1 for s in self.steps if s.outcome == "applied")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, steps as dicts, and counts per action (credentials redacted)."""
        return redacted_data(
            {
                "at": self.at,
                "dry_run": self.dry_run,
                "plan_id": self.plan_id,
                "scopes": self.scopes,
                "memories": self.memories,
                "pairs": self.pairs,
                "thresholds": self.thresholds,
                "embedder": self.embedder,
                "counts": self.counts(),
                "applied": self.applied,
                "steps": [{**asdict(s), "similarity": round(s.similarity, 4)} for s in self.steps],
                "unsure": [
                    {**asdict(u), "similarity": round(u.similarity, 4), "confidence": round(u.confidence, 4)}
                    for u in self.unsure
                ],
            }
        )

    def summary(self) -> str:
        c = self.counts()
        what = (
            f"{c[MERGE]} duplicate(s) to merge, {c[SUPERSEDE]} older fact(s) to supersede, "
            f"{c[INVALIDATE]} contradicted fact(s) to invalidate"
        )
        unsure = f"; {len(self.unsure)} unsure pair(s) left alone" if self.unsure else ""
        return (
            f"compared {self.memories} live memories in {self.scopes} scope(s) ({self.pairs} nearest-neighbour "
            f"pairs): {what}{unsure}"
        )

    def _lines(self) -> list[Line]:
        title = "consolidation plan (dry run: nothing changed)" if self.dry_run else "consolidation"
        lines: list[Line] = [((f"{title} at {self.at}", "bold"),), ((self.summary(), ""),)]
        scope = None
        for step in self.steps:
            here = scope_text(step.scope)
            if here != scope:
                scope = here
                lines.append((("", ""),))
                lines.append(((here, "bold"),))
            head = f"  {_HEADS[step.action]}; similarity {step.similarity:.2f}"
            if step.decision not in ("similarity",):
                head += f" ({step.decision})"
            if step.resumed:
                head += " [left by an interrupted run]"
            lines.append(((head, ""),))
            lines.append(((f"  - {step.memory_id}  {short(step.text)}", "red"),))
            kept = f"  + {step.into_id}  {short(step.into_text)}"
            if step.action == MERGE:
                kept += f"  (kept; source: {short(step.into_source)})"
            lines.append(((kept, "green"),))
            if step.outcome is not None:
                lines.append(((f"    {step.outcome}", "dim" if step.outcome != "applied" else ""),))
        lines.extend(self._unsure_lines())
        if not self.steps:
            if self.unsure:
                lines.append((("", ""),))
            lines.append(
                (
                    (
                        "nothing to consolidate: no live memory is a duplicate, an older version or a "
                        "contradicted version of another in its scope"
                        + (" that the decision is sure of" if self.unsure else ""),
                        "",
                    ),
                )
            )
        elif self.dry_run:
            lines.append((("", ""),))
            lines.append(
                (
                    (
                        "apply with `mem0-hygiene consolidate --apply` (the same options); every change "
                        "goes through supersede/invalidate, nothing is deleted",
                        "",
                    ),
                )
            )
        else:
            skipped = len(self.steps) - self.applied
            lines.append((("", ""),))
            lines.append(
                (
                    (
                        f"applied {self.applied} change(s)"
                        + (f", {skipped} skipped" if skipped else "")
                        + "; `mem0-hygiene history ID` explains each",
                        "",
                    ),
                )
            )
        return lines

    def _unsure_lines(self) -> list[Line]:
        if not self.unsure:
            return []
        lines: list[Line] = [
            (("", ""),),
            (
                (
                    f"unsure, left alone ({len(self.unsure)}): the decision's probability is "
                    "below 0.75; if one is right, change it by hand (mem0-hygiene supersede "
                    "/ invalidate / forget)",
                    "bold",
                ),
            ),
        ]
        for u in self.unsure[:UNSURE_SHOWN]:
            lines.append(
                ((f"  ? {u.label} ({u.confidence:.2f}); similarity {u.similarity:.2f}; {scope_text(u.scope)}", ""),)
            )
            lines.append(((f"    {u.memory_id}  {short(u.text)}", "dim"),))
            lines.append(((f"    {u.into_id}  {short(u.into_text)}", "dim"),))
        if len(self.unsure) > UNSURE_SHOWN:
            lines.append(((f"  ... and {len(self.unsure) - UNSURE_SHOWN} more (--json lists them all)", "dim"),))
        return lines
