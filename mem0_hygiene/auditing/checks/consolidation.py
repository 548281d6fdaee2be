"""Consolidation candidates: live memories in one scope that look like the same fact said twice, an older
value beside its replacement, or a fact beside its retraction (what ``mem0-hygiene consolidate`` resolves).

Cheap on purpose (one pass over the live points' texts, no vectors): texts are compared by their *frame*, the
normalised text with its numbers masked and negation cues taken out. Two live memories of one scope with the
same frame are an unresolved update when their numbers differ ("Postgres 15" / "Postgres 16"), an unresolved
contradiction when one has a negation cue the other lacks ("No longer deploys with Docker Compose"), and else
near-duplicates (the same words in another case, punctuation or order; word-for-word repeats are
``DUPLICATE_MEMORIES``). ``consolidate`` itself decides over the stored embeddings and finds more.
"""

from __future__ import annotations

import re

from ...memory.decision import NEGATION_CUES, numbers
from ...report import Severity
from .base import CheckResult, Context, check, clip, finding, live_points

_WORD = re.compile(r"[^\W\d_]+|\d+")
_ANY_CUE = re.compile("|".join(f"(?:{pattern.pattern})" for _name, pattern in NEGATION_CUES), re.IGNORECASE)
_NEGATIONS = frozenset(("not", "no", "don", "doesn", "t"))


def frame(text: str) -> str:
    """The text with its values masked and its negation cues removed, words sorted: the key of a "same fact"."""
    words = _WORD.findall(_ANY_CUE.sub(" ", text.casefold()))
    return " ".join(sorted("#" if w.isdigit() else w for w in words if w not in _NEGATIONS))


@check(
    "CONSOLIDATE_CANDIDATES",
    "content",
    needs=("points",),
    severity="info/warning",
    means=(
        "live memories beside an older value of the same fact, its retraction (warning) or a near-duplicate "
        "(info) in one scope; fix with `consolidate --dry-run`"
    ),
    fix="`mem0-hygiene consolidate --dry-run`, review the plan, then run it",
)
def candidates(ctx: Context) -> CheckResult:
    frm, where, params = live_points(ctx)
    groups: dict[tuple[str, str, str, str], list[tuple[str, str, str]]] = {}
    for mid, text, norm, user, agent, run in ctx.db.rows(
        f"SELECT p.id, p.text, p.norm, p.user_id, p.agent_id, p.run_id FROM {frm} WHERE {where} AND p.norm <> ''",
        params,
    ):
        key = frame(text)
        if key:
            groups.setdefault((user or "", agent or "", run or "", key), []).append((mid, text, norm))
    updates = contradictions = duplicates = 0
    examples: list[str] = []
    for members in groups.values():
        if len({norm for _mid, _text, norm in members}) < 2:
            continue  # one text (maybe repeated word for word: DUPLICATE_MEMORIES)
        cued = {_ANY_CUE.search(text) is not None for _mid, text, _norm in members}
        if len(cued) > 1:
            contradictions += len(members) - 1
            kind = "contradiction"
        elif len({numbers(text) for _mid, text, _norm in members}) > 1:
            updates += len(members) - 1
            kind = "update"
        else:
            duplicates += len(members) - 1
            kind = "near-duplicate"
        if len(examples) < ctx.examples:
            texts = sorted({clip(text, 40) for _mid, text, _norm in members})
            examples.append(f"{kind}: " + " / ".join(texts[:3]))
    total = updates + contradictions + duplicates
    if not total:
        return
    stale = updates + contradictions
    yield finding(
        "CONSOLIDATE_CANDIDATES",
        Severity.WARNING if stale else Severity.INFO,
        "content",
        f"{total} live memories look stale or repeated beside another in their scope ({updates} older values, "
        f"{contradictions} retracted facts, {duplicates} near-duplicates), by their wording alone",
        count=total,
        examples=examples,
        updates=updates,
        contradictions=contradictions,
        near_duplicates=duplicates,
        why="An old fact beside its replacement (or its retraction) is served as if still true, and repeats crowd "
        "other memories out of a search page. mem0 only accumulates; nothing resolved these when they were "
        "written.",
        fix=ctx.cmd("consolidate --dry-run") + "  # compares meanings too, so it may find more; review the plan, "
        "then apply it with --apply",
    )
