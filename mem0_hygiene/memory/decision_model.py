"""A small calibrated model of the write-time decision: multinomial logistic regression over the similarity
and the text features of :mod:`mem0_hygiene.memory.decision_features`, shipped as a few numbers.

The numbers (:mod:`mem0_hygiene.memory.decision_weights`) are fitted by ``benchmarks/train_decision.py`` on
the labelled pairs in ``benchmarks/data`` (not on the held-out file), one model per measured embedder. The
label chosen is the one of least expected cost (:meth:`DecisionModel.cost`), a plain mistake costing 1:

* hiding a true fact costs ``hide_cost``: an unrelated fact taken for a duplicate, an update or a contradiction
  (the old fact is hidden or the new one dropped), or an update or contradiction taken for a duplicate (the new
  fact dropped);
* leaving a stale fact live costs ``stale_cost``: an update or a contradiction taken for an unrelated fact (both
  stay live, the old one beside its replacement);
* a paraphrase taken for an update costs ``swap_cost``: the old wording is superseded by the new one, nothing lost.

The trainer fixes ``swap_cost`` and picks ``hide_cost``, ``stale_cost`` and ``margin`` by cross-validation on the
pairs it fits on (the most accurate setting that hides at most 1.5% of the true facts in its inner folds).

**When unsure, add and queue** (``margin``): a duplicate, an update or a contradiction is decided only when the
model's probability of it clears the next label's by ``margin``; otherwise the pair is unrelated (the new memory
is added, nothing is dropped or hidden) and the label held back (:meth:`DecisionModel.held_back`) makes the pair a
possible conflict for review. A store cannot reliably decide that a fact became wrong: it automates the queue, not
the verdict.

Before the model, one rule (:func:`apart`): two facts that share no word, state no opposite predicates and are far
apart in the embedding are unrelated, whatever cue either one has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .decision_features import PairFeatures, pair_features

# The order of the model's classes (the same as decision.LABELS).
CLASSES = ("duplicate", "update", "contradiction", "unrelated")

FEATURE_NAMES = (
    "similarity",
    "similarity^2",
    "frame_overlap",
    "value_overlap",
    "values_differ",
    "new_words",
    "negation_cue",
    "plain_negation",
    "change_verb",
    "opposite",
    "similarity*frame_overlap",
    "values_differ*frame_overlap",
    "same_values",
    "edit",
    "edit*edit_position",
    "same_values*(1-frame_overlap)",
    "negation_cue*values_differ",
    "plain_negation*frame_overlap",
    "possessive",
    "opposite*frame_overlap",
    "negation_cue*frame_overlap",
    "swapped_values",
    "swapped_words",
    "dropped_negation",
    "missing_words",
    "similarity*negation_cue",
    "similarity*opposite",
    "similarity*values_differ",
    "word_overlap",
    "bigram_overlap",
    "similarity*bigram_overlap",
    "opposite_beside",
)


# Below this similarity, two facts that share no content word (synonyms joined) and state no opposite
# predicates are about different things (:func:`apart`). The model alone judged "No longer lives in Leeds" /
# "Fatima is their manager now" (similarity 0.20) a contradiction, so a consolidation would have invalidated the
# retraction: the labelled pairs hold few unrelated facts with a negation cue, while a store's nearest
# neighbours are mostly such. Chosen on the training and SICK pairs: below 0.3 with nothing shared there are
# 50 unrelated pairs and one update ("Their home is in Valencia" / "Moved to Kraków last month", which the
# model judged unrelated too); at 0.35 a contradiction joins them ("Is vegetarian" / "Eats steak most weekends").
APART_BELOW = 0.3


def apart(similarity: float, word_overlap: float, opposite: bool) -> bool:
    """Whether two facts are unrelated by rule, before the model: no shared content word, no opposite
    predicates and a similarity below :data:`APART_BELOW`."""
    return similarity < APART_BELOW and word_overlap == 0 and not opposite


APART_REASON = f"nothing in common (no shared word, similarity below {APART_BELOW})"


def feature_vector(similarity: float, features: PairFeatures) -> list[float]:
    """The model's inputs for one pair, in :data:`FEATURE_NAMES` order."""
    s, f = similarity, features
    neg = float(f.negation is not None)
    return [
        s,
        s * s,
        f.frame_overlap,
        f.value_overlap,
        float(f.values_differ),
        min(f.new_words, 5) / 5,
        neg,
        float(f.plain_negation),
        float(f.change),
        float(f.opposite),
        s * f.frame_overlap,
        float(f.values_differ) * f.frame_overlap,
        float(f.same_values),
        float(f.edit),
        float(f.edit) * f.edit_position,
        float(f.same_values) * (1 - f.frame_overlap),
        neg * float(f.values_differ),
        float(f.plain_negation) * f.frame_overlap,
        float(f.possessive),
        float(f.opposite) * f.frame_overlap,
        neg * f.frame_overlap,
        float(f.swapped == "values"),
        float(f.swapped == "words"),
        float(f.dropped_negation),
        min(f.missing_words, 5) / 5,
        s * neg,
        s * float(f.opposite),
        s * float(f.values_differ),
        f.word_overlap,
        f.bigram_overlap,
        s * f.bigram_overlap,
        float(f.opposite_beside),
    ]


def hides(truth: str, decided: str) -> bool:
    """Whether deciding ``decided`` for a pair labelled ``truth`` hides a true fact (see the module docstring)."""
    if truth == "unrelated":
        return decided != "unrelated"
    return truth in ("update", "contradiction") and decided == "duplicate"


def leaves_stale(truth: str, decided: str) -> bool:
    """Whether deciding ``decided`` for a pair labelled ``truth`` leaves the old fact live beside the new one that
    replaces or contradicts it."""
    return truth in ("update", "contradiction") and decided == "unrelated"


def mistake_cost(truth: str, decided: str, costs: tuple[float, float, float]) -> float:
    """What deciding ``decided`` costs when the pair is ``truth``, with ``costs`` = (hiding a true fact, leaving a
    stale fact live, a duplicate taken for an update); any other mistake costs 1, a right decision 0."""
    if truth == decided:
        return 0.0
    if hides(truth, decided):
        return costs[0]
    if leaves_stale(truth, decided):
        return costs[1]
    if truth == "duplicate" and decided == "update":
        return costs[2]
    return 1.0


@dataclass(frozen=True)
class DecisionModel:
    """Standardisation, weights and bias of the logistic regression, and the costs of its mistakes.

    Fields:
        name: what it was fitted for (the embedder family) and on how many pairs.
        mean, scale: per feature, subtracted and divided before the weights apply.
        weights: per class (:data:`CLASSES` order), one weight per feature.
        bias: per class.
        hide_cost: the cost of a decision that hides a true fact, a plain mistake costing 1.
        stale_cost: the cost of an update or contradiction taken for an unrelated fact (the stale fact stays live).
        swap_cost: the cost of a duplicate taken for an update (only the wording changes).
        margin: below this lead over the next label, a duplicate, update or contradiction is held back.
    """

    name: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]
    bias: tuple[float, ...]
    hide_cost: float
    stale_cost: float = 1.0
    swap_cost: float = 1.0
    margin: float | None = None
    """How far the probability of a duplicate, update or contradiction must clear the next label's to be decided
    (None: always decided; see :meth:`held_back`)."""

    def __post_init__(self) -> None:
        n = len(self.mean)
        if (
            len(self.scale) != n
            or len(self.weights) != len(CLASSES)
            or len(self.bias) != len(CLASSES)
            or any(len(ws) != n for ws in self.weights)
        ):
            raise ValueError(
                f"decision model {self.name!r} does not fit together: {n} means, {len(self.scale)} "
                f"scales, {[len(ws) for ws in self.weights]} weights per class, {len(self.bias)} biases "
                f"for {len(CLASSES)} classes; refit it with benchmarks/train_decision.py --write"
            )

    def probabilities(self, inputs: Sequence[float]) -> dict[str, float]:
        """The calibrated probability of each class for one feature vector (as many inputs as the model has
        features; a model fitted on another feature list is refused)."""
        if len(inputs) != len(self.mean):
            raise ValueError(
                f"decision model {self.name!r} has {len(self.mean)} features, given {len(inputs)}; "
                "refit it with benchmarks/train_decision.py --write"
            )
        x = [(v - m) / s for v, m, s in zip(inputs, self.mean, self.scale)]
        z = [b + sum(w * v for w, v in zip(ws, x)) for ws, b in zip(self.weights, self.bias)]
        top = max(z)
        e = [math.exp(v - top) for v in z]
        total = sum(e)
        return {c: v / total for c, v in zip(CLASSES, e)}

    def cost(self, truth: str, decided: str) -> float:
        """What deciding ``decided`` costs when the pair is ``truth`` (0 when right; see the module docstring)."""
        return mistake_cost(truth, decided, (self.hide_cost, self.stale_cost, self.swap_cost))

    def choose(self, probabilities: dict[str, float]) -> str:
        """The class of least expected cost (the first in :data:`CLASSES` order on a tie)."""
        return min(CLASSES, key=lambda decided: sum(p * self.cost(t, decided) for t, p in probabilities.items()))

    def held_back(self, probabilities: dict[str, float]) -> str | None:
        """The label of least expected cost (:meth:`choose`) when it is a duplicate, an update or a contradiction
        whose probability does not clear every other label's by :attr:`margin`: too unsure to drop or hide a
        fact, so the pair is decided unrelated (added) and queued. None when the choice stands."""
        chosen = self.choose(probabilities)
        if self.margin is None or chosen == "unrelated":
            return None
        lead = probabilities[chosen] - max(p for c, p in probabilities.items() if c != chosen)
        return chosen if lead < self.margin else None

    def pick(self, probabilities: dict[str, float]) -> str:
        """The label decided: :meth:`choose`, or unrelated when that is held back (:meth:`held_back`)."""
        return "unrelated" if self.held_back(probabilities) is not None else self.choose(probabilities)

    def decide(self, similarity: float, new_text: str, old_text: str) -> tuple[str, dict[str, float], PairFeatures]:
        """(the class decided, the probabilities, the features) for one pair (:meth:`pick`); a pair :func:`apart`
        is unrelated with probability 1, the model not asked."""
        features = pair_features(new_text, old_text)
        if apart(similarity, features.word_overlap, features.opposite):
            return "unrelated", {c: float(c == "unrelated") for c in CLASSES}, features
        probs = self.probabilities(feature_vector(similarity, features))
        return self.pick(probs), probs, features
