"""A small calibrated model of the write-time decision: multinomial logistic regression over the similarity
and the text features of :mod:`mem0_hygiene.memory.decision_features`, shipped as a few numbers.

The numbers (:mod:`mem0_hygiene.memory.decision_weights`) are fitted by ``benchmarks/train_decision.py`` on
the labelled pairs in ``benchmarks/data`` (not on the held-out file), one model per measured embedder. The
label chosen is the one of least expected cost, where hiding a true fact costs ``hide_cost`` times a plain
mistake: an unrelated fact taken for a duplicate, an update or a contradiction (the old fact is hidden or the
new one dropped), or an update or contradiction taken for a duplicate (the new fact dropped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .decision_features import PairFeatures, pair_features

# The order of the model's classes (the same as decision.LABELS).
CLASSES = ("duplicate", "update", "contradiction", "unrelated")

FEATURE_NAMES = (
    "similarity", "similarity^2", "frame_overlap", "value_overlap", "values_differ", "new_words",
    "negation_cue", "plain_negation", "change_verb", "opposite", "similarity*frame_overlap",
    "values_differ*frame_overlap", "same_values", "edit", "edit*edit_position", "same_values*(1-frame_overlap)",
    "negation_cue*values_differ", "plain_negation*frame_overlap", "possessive", "opposite*frame_overlap",
    "negation_cue*frame_overlap", "swapped_values", "swapped_words", "dropped_negation",
)


def feature_vector(similarity: float, features: PairFeatures) -> list[float]:
    """The model's inputs for one pair, in :data:`FEATURE_NAMES` order."""
    s, f = similarity, features
    neg = float(f.negation is not None)
    return [s, s * s, f.frame_overlap, f.value_overlap, float(f.values_differ), min(f.new_words, 5) / 5,
            neg, float(f.plain_negation), float(f.change), float(f.opposite), s * f.frame_overlap,
            float(f.values_differ) * f.frame_overlap, float(f.same_values), float(f.edit),
            float(f.edit) * f.edit_position, float(f.same_values) * (1 - f.frame_overlap),
            neg * float(f.values_differ), float(f.plain_negation) * f.frame_overlap, float(f.possessive),
            float(f.opposite) * f.frame_overlap, neg * f.frame_overlap, float(f.swapped == "values"),
            float(f.swapped == "words"), float(f.dropped_negation)]


def hides(truth: str, decided: str) -> bool:
    """Whether deciding ``decided`` for a pair labelled ``truth`` hides a true fact (see the module docstring)."""
    if truth == "unrelated":
        return decided != "unrelated"
    return truth in ("update", "contradiction") and decided == "duplicate"


@dataclass(frozen=True)
class DecisionModel:
    """Standardisation, weights and bias of the logistic regression, and the cost of hiding a true fact.

    Fields:
        name: what it was fitted for (the embedder family) and on how many pairs.
        mean, scale: per feature, subtracted and divided before the weights apply.
        weights: per class (:data:`CLASSES` order), one weight per feature.
        bias: per class.
        hide_cost: the cost of a decision that hides a true fact, a plain mistake costing 1.
    """

    name: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]
    bias: tuple[float, ...]
    hide_cost: float

    def probabilities(self, inputs: Sequence[float]) -> dict[str, float]:
        """The calibrated probability of each class for one feature vector."""
        x = [(v - m) / s for v, m, s in zip(inputs, self.mean, self.scale)]
        z = [b + sum(w * v for w, v in zip(ws, x)) for ws, b in zip(self.weights, self.bias)]
        top = max(z)
        e = [math.exp(v - top) for v in z]
        total = sum(e)
        return {c: v / total for c, v in zip(CLASSES, e)}

    def choose(self, probabilities: dict[str, float]) -> str:
        """The class of least expected cost."""
        def cost(decided: str) -> float:
            return sum(p * (self.hide_cost if hides(t, decided) else float(t != decided))
                       for t, p in probabilities.items())
        return min(CLASSES, key=cost)

    def decide(self, similarity: float, new_text: str, old_text: str) -> tuple[str, dict[str, float], PairFeatures]:
        """(the class chosen, the probabilities, the features) for one pair."""
        features = pair_features(new_text, old_text)
        probs = self.probabilities(feature_vector(similarity, features))
        return self.choose(probs), probs, features
