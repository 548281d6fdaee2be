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
from collections.abc import Iterator

from ...memory.decision import NEGATION_CUES, numbers
from ...report import Severity
from .base import CheckResult, Context, check, clip, clip_plain, finding, live_points

_WORD = re.compile(r"[^\W\d_]+|\d+")
_ANY_CUE = re.compile("|".join(f"(?:{pattern.pattern})" for _name, pattern in NEGATION_CUES), re.IGNORECASE)
# The same cues matched case-sensitively, for case-folded text (about three times faster than IGNORECASE). The cues
# are lower-case ASCII, and in case-folded text IGNORECASE makes one more character match one of their letters:
# the dotless "ı" (U+0131, which folds to itself) matches "i". A text holding it is matched with _ANY_CUE.
_FOLDED_CUE = re.compile(_ANY_CUE.pattern)
_NEGATIONS = frozenset(("not", "no", "don", "doesn", "t"))


def _framed(text: str) -> tuple[str, bool]:
    """:func:`frame` of ``text``, and whether a negation cue was taken out of it."""
    folded = text.casefold()
    uncued, cues = (_FOLDED_CUE if "ı" not in folded else _ANY_CUE).subn(" ", folded)
    words = _WORD.findall(uncued)
    return " ".join(sorted("#" if w.isdigit() else w for w in words if w not in _NEGATIONS)), cues > 0


def frame(text: str) -> str:
    """The text with its values masked and its negation cues removed, words sorted: the key of a "same fact"."""
    return _framed(text)[0]


def _cued(text: str, cue_in_folded: bool) -> bool:
    """Whether ``text`` holds a negation cue (``_ANY_CUE.search``); ``cue_in_folded`` is :func:`_framed`'s answer,
    which is the same for ASCII text (case-folding it is lower-casing it, and IGNORECASE matches nothing more)."""
    return cue_in_folded if text.isascii() else _ANY_CUE.search(text) is not None


def _differ(values: Iterator[frozenset[int]]) -> bool:
    """Whether the values are not all equal (reading them only until two differ)."""
    first = next(values, None)
    return any(v != first for v in values)


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
    groups: dict[tuple[str, str, str, str], list[tuple[str, str, str, bool]]] = {}
    for mid, text, norm, user, agent, run in ctx.db.rows(
        f"SELECT p.id, p.text, p.norm, p.user_id, p.agent_id, p.run_id FROM {frm} WHERE {where} AND p.norm <> ''",
        params,
    ):
        key, cue = _framed(text)
        if key:
            groups.setdefault((user or "", agent or "", run or "", key), []).append((mid, text, norm, cue))
    updates = contradictions = duplicates = 0
    examples: list[str] = []
    secret: set[str] | None = None
    for members in groups.values():
        if len({norm for _mid, _text, norm, _cue in members}) < 2:
            continue  # one text (maybe repeated word for word: DUPLICATE_MEMORIES)
        cued = {_cued(text, cue) for _mid, text, _norm, cue in members}
        if len(cued) > 1:
            contradictions += len(members) - 1
            kind = "contradiction"
        elif _differ(numbers(text) for _mid, text, _norm, _cue in members):
            updates += len(members) - 1
            kind = "update"
        else:
            duplicates += len(members) - 1
            kind = "near-duplicate"
        if len(examples) < ctx.examples:
            if secret is None:  # texts with no credential in them (no "secret" hit) are clipped without the scan
                secret = {str(r[0]) for r in ctx.db.rows("SELECT DISTINCT id FROM hits WHERE kind = 'secret'")}
            texts = sorted({clip(text, 40) if mid in secret else clip_plain(text, 40) for mid, text, _n, _c in members})
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
