"""Fit the write-time decision model (:mod:`mem0_hygiene.memory.decision_model`) per embedder, cross-validate
it, and with ``--write`` rewrite ``mem0_hygiene/memory/decision_weights.py`` with the fitted numbers.

Only all-MiniLM-L6-v2's model is shipped (:data:`SHIPPED`); the offline embedder keeps its threshold rules
(its model is fitted and cross-validated here for comparison only).

Training data: :data:`TRAIN_FILES` (the hand-written ``staleness_pairs.jsonl`` and ``staleness_more.jsonl``,
``staleness_templates.jsonl`` built by ``make_template_pairs.py`` and ``staleness_opposites.jsonl`` built by
``make_opposite_pairs.py``). ``staleness_heldout.jsonl`` is never read here: ``eval_staleness.py`` measures the
shipped numbers on it. Besides 5-fold cross-validation it reports each training file decided by a model fitted on
the other files (pairs written by another procedure: the nearer guess of how the model does on new wording);
``--errors`` lists the pairs cross-validation gets wrong.

Every duplicate, contradiction and unrelated pair is also trained on the other way round (:func:`reversals`):
those labels do not depend on which fact came first ("Owns a car" after "Doesn't own a car" contradicts it as
much as the other order), while the files mostly put the negation in the new text. Cross-validation keeps a
pair and its reversal in the same fold, and reports the reversed pairs apart.

    python benchmarks/train_decision.py [--embedder offline|minilm|all] [--errors] [--write]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import eval_staleness as ev
import numpy as np

from mem0_hygiene.memory.decision import MINILM_FAMILY, OFFLINE_FAMILY
from mem0_hygiene.memory.decision_features import pair_features
from mem0_hygiene.memory.decision_model import (
    CLASSES,
    FEATURE_NAMES,
    DecisionModel,
    apart,
    feature_vector,
    mistake_cost,
)

DATA = Path(__file__).resolve().parent / "data"
TRAIN_FILES = (
    "staleness_pairs.jsonl",
    "staleness_more.jsonl",
    "staleness_templates.jsonl",
    "staleness_opposites.jsonl",
)
WEIGHTS = Path(__file__).resolve().parent.parent / "mem0_hygiene" / "memory" / "decision_weights.py"
# Ridge penalty on the standardised weights, chosen by 5-fold cross-validation over the training pairs and the
# SICK pairs together (0.003, 0.01, 0.03, 0.1, 0.3; 0.1 before the costs were fitted).
L2 = 0.01
# The costs of the decision's mistakes, a plain one costing 1 (decision_model): a paraphrase taken for an update
# only swaps the wording, fixed here; hiding a true fact and leaving a stale one live are picked from the grids,
# with the margin below which a duplicate, update or contradiction is held back (added and queued instead), by an
# inner cross-validation over the pairs being fitted on (:func:`choose_costs`): the most accurate setting that
# hides at most HIDDEN_LIMIT of the true facts, so a cross-validated figure never saw its own fold's costs or
# margin. Stale costs below 1 are left out on purpose: keeping an update's old fact live is never cheaper than a
# plain mistake, and costs more than a reworded duplicate. MARGINS' None holds nothing back; 0.0 holds back a
# label the costs chose over a more probable one.
# HIDDEN_LIMIT is the one number chosen on the headline (each training file decided by a model of the others,
# guards on; never on the held-out file): the inner folds share the wording of the pairs they are fitted on, so
# they see fewer true facts lost than a new file does. Measured (lost of 594, accuracy): 0.5% -> 2, 83.8%; 1% ->
# 4, 84.8%; 1.5% -> 5, 87.2%; 2% -> 7, 87.5%. 1.5% is the loosest that keeps issue #33's target there (at most 1%
# lost, at least 85% accurate).
SWAP_COST = 0.75
HIDE_COSTS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)
STALE_COSTS = (1.0, 1.5, 2.0)
MARGINS: tuple[float | None, ...] = (None, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
HIDDEN_LIMIT = 0.015
FOLDS = 5
SEED = 0
SHIPPED = (MINILM_FAMILY,)


def training_pairs() -> list[dict[str, Any]]:
    return [p for name in TRAIN_FILES for p in ev.load_pairs(DATA / name)]


def inputs(pairs: Sequence[dict[str, Any]], sims: np.ndarray) -> np.ndarray:
    return np.array([feature_vector(float(s), pair_features(p["new"], p["old"])) for p, s in zip(pairs, sims)])


# The labels that stay the same when the two facts are read in the other order (an update's does not: which
# value is the newer one is the point of it).
REVERSIBLE = ("duplicate", "contradiction", "unrelated")


def reversals(pairs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The pairs of a :data:`REVERSIBLE` label with old and new swapped, and the index of each one's original."""
    idx = [i for i, p in enumerate(pairs) if p["label"] in REVERSIBLE]
    return [dict(pairs[i], old=pairs[i]["new"], new=pairs[i]["old"], reversed=True) for i in idx], idx


def training_rows(
    pairs: Sequence[dict[str, Any]], sims: np.ndarray
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """(the pairs and their reversals, their inputs, the index of each row's original pair). The similarity is
    symmetric, so a reversal reuses its original's."""
    rev, source = reversals(pairs)
    rows = list(pairs) + rev
    src = np.concatenate([np.arange(len(pairs)), np.array(source, dtype=int)])
    return rows, inputs(rows, np.asarray(sims)[src]), src


def fit_shipped(pairs: Sequence[dict[str, Any]], sims: np.ndarray, family: str) -> DecisionModel:
    """The model :data:`SHIPPED` holds: fitted on the pairs and their reversals, its costs chosen on them."""
    rows, x, src = training_rows(pairs, sims)
    turned = len(rows) - len(pairs)
    name = f"{family}, {len(pairs)} pairs" + (f" (+{turned} reversed)" if turned else "")
    return fit_with_costs(x, [p["label"] for p in rows], src, name)


def fit_with_costs(x: np.ndarray, labels: Sequence[str], src: np.ndarray, name: str, **kw: Any) -> DecisionModel:
    """The model fitted on all the rows, with the costs :func:`choose_costs` picks by an inner cross-validation
    over them (``src``: each row's original pair; a pair and its reversal stay in one inner fold)."""
    costs, margin = choose_costs(x, labels, src, **kw)
    return fit(x, labels, name, costs=costs, margin=margin, **kw)


def choose_costs(
    x: np.ndarray, labels: Sequence[str], src: np.ndarray, **kw: Any
) -> tuple[tuple[float, float, float], float | None]:
    """((hide, stale, swap cost), margin): each original pair (not its reversal) decided by a model fitted on the
    other inner folds, then of :data:`HIDE_COSTS` x :data:`STALE_COSTS` (with :data:`SWAP_COST`) x :data:`MARGINS`
    the most accurate setting that hides at most :data:`HIDDEN_LIMIT` of the true facts; when none does, the one
    hiding least. Ties go to the lower costs, then to the smaller margin (fewer pairs held back)."""
    originals = np.unique(src)
    inner = np.empty(int(src.max()) + 1, dtype=int)
    inner[originals] = folds_of(len(originals), seed=SEED + 1)
    fold = inner[src]
    first = np.zeros(len(src), dtype=bool)
    first[np.unique(src, return_index=True)[1]] = True  # each pair's own row (rows list originals first)
    probs = np.zeros((len(src), len(CLASSES)))
    for k in range(FOLDS):
        held = fold == k
        model = fit(x[~held], [labels[i] for i in np.flatnonzero(~held)], "inner fold", **kw)
        probs[held] = probabilities(model, x[held])
    truth = [labels[i] for i in np.flatnonzero(first)]
    by_rule = apart_rows(x[first])
    best: tuple[tuple[bool, float, float, float, float], tuple[tuple[float, float, float], float | None]] | None
    best = None
    for hide in HIDE_COSTS:
        for stale in STALE_COSTS:
            costs = (hide, stale, SWAP_COST)
            chosen = decide(costs, probs[first])
            for margin in MARGINS:
                held = hold_back(probs[first], chosen, margin)
                decided = ["unrelated" if r else d for r, d in zip(by_rule, held)]
                acc, hidden = ev.accuracy(truth, decided), ev.hidden_rate(truth, decided)
                ok = hidden <= HIDDEN_LIMIT + 1e-12
                key = (ok, acc if ok else -hidden, -hide, -stale, -(-1.0 if margin is None else margin))
                if best is None or key > best[0]:
                    best = (key, (costs, margin))
    assert best is not None
    return best[1]


def cost_matrix(costs: tuple[float, float, float]) -> np.ndarray:
    """[truth, decided] -> cost, as :meth:`DecisionModel.cost` with these (hide, stale, swap) costs."""
    return np.array([[mistake_cost(t, d, costs) for d in CLASSES] for t in CLASSES])


def decide(costs: tuple[float, float, float], probs: np.ndarray) -> list[str]:
    """The class of least expected cost for each row of probabilities (what :meth:`DecisionModel.choose` does)."""
    return [CLASSES[k] for k in np.argmin(probs @ cost_matrix(costs), axis=1)]


def hold_back(probs: np.ndarray, chosen: Sequence[str], margin: float | None) -> list[str]:
    """Each chosen label, or unrelated where it is held back (:meth:`DecisionModel.held_back` with ``margin``)."""
    if margin is None:
        return list(chosen)
    out = []
    for row, label in zip(probs, chosen):
        k = CLASSES.index(label)
        lead = row[k] - max(row[j] for j in range(len(CLASSES)) if j != k)
        out.append("unrelated" if label != "unrelated" and lead < margin else label)
    return out


def probabilities(model: DecisionModel, x: np.ndarray) -> np.ndarray:
    """:meth:`DecisionModel.probabilities` for many rows at once."""
    z = ((x - np.array(model.mean)) / np.array(model.scale)) @ np.array(model.weights).T + np.array(model.bias)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit(
    x: np.ndarray,
    labels: Sequence[str],
    name: str,
    l2: float = L2,
    costs: tuple[float, float, float] = (HIDE_COSTS[0], STALE_COSTS[0], SWAP_COST),
    margin: float | None = None,
    iters: int = 4000,
    rate: float = 0.5,
) -> DecisionModel:
    """Multinomial logistic regression by gradient descent on standardised inputs (deterministic), deciding with
    the given (hide, stale, swap) costs and holding back below ``margin``."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    y = np.eye(len(CLASSES))[[CLASSES.index(t) for t in labels]]
    w = np.zeros((x.shape[1], len(CLASSES)))
    b = np.zeros(len(CLASSES))
    for _ in range(iters):
        logits = z @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - y) / len(y)
        w -= rate * (z.T @ g + l2 * w)
        b -= rate * g.sum(axis=0)

    def r(v: Any) -> float:
        return round(float(v), 4)

    return DecisionModel(
        name=name,
        mean=tuple(r(v) for v in mean),
        scale=tuple(r(v) for v in scale),
        weights=tuple(tuple(r(w[i, k]) for i in range(x.shape[1])) for k in range(len(CLASSES))),
        bias=tuple(r(v) for v in b),
        hide_cost=costs[0],
        stale_cost=costs[1],
        swap_cost=costs[2],
        margin=margin,
    )


_SIM, _OPPOSITE, _WORD_OVERLAP = (FEATURE_NAMES.index(n) for n in ("similarity", "opposite", "word_overlap"))


def apart_rows(x: np.ndarray) -> list[bool]:
    """For each row of inputs, whether the rule before the model (:func:`decision_model.apart`) decides it."""
    return [apart(float(row[_SIM]), float(row[_WORD_OVERLAP]), bool(row[_OPPOSITE])) for row in x]


def predict(model: DecisionModel, x: np.ndarray) -> list[str]:
    """What :meth:`DecisionModel.decide` decides for each row of inputs (held back: unrelated)."""
    return ["unrelated" if r else model.pick(model.probabilities(row)) for r, row in zip(apart_rows(x), x)]


def folds_of(n: int, seed: int = SEED) -> np.ndarray:
    perm = np.random.RandomState(seed).permutation(n)
    folds = np.empty(n, dtype=int)
    folds[perm] = np.arange(n) % FOLDS
    return folds


def by_groups(
    pairs: Sequence[dict[str, Any]], sims: np.ndarray, groups: Sequence[Any], **kw: Any
) -> tuple[list[dict[str, Any]], list[str]]:
    """(the pairs and their reversals, each decided by a model fitted on the rows of the other groups, its costs
    chosen on those rows too: :func:`fit_with_costs`); a reversal is in its original's group."""
    rows, x, src = training_rows(pairs, sims)
    labels = [p["label"] for p in rows]
    group = np.array(list(groups), dtype=object)[src]
    out = [""] * len(rows)
    for name in dict.fromkeys(list(groups)):
        held = group == name
        model = fit_with_costs(x[~held], [labels[i] for i in np.flatnonzero(~held)], src[~held], "fold", **kw)
        for i, label in zip(np.flatnonzero(held), predict(model, x[held])):
            out[i] = label
    return rows, out


def cross_validated(pairs: Sequence[dict[str, Any]], sims: np.ndarray, **kw: Any) -> list[str]:
    """Each pair decided by a model fitted on the other folds (:func:`by_groups` over :func:`folds_of`)."""
    return by_groups(pairs, sims, folds_of(len(pairs)).tolist(), **kw)[1][: len(pairs)]


def file_of_each(pairs: Sequence[dict[str, Any]]) -> list[str]:
    """The training file each pair comes from (:data:`TRAIN_FILES` order)."""
    return [name for name in TRAIN_FILES for _ in ev.load_pairs(DATA / name)][: len(pairs)]


def leave_file_out(
    pairs: Sequence[dict[str, Any]], sims: np.ndarray, groups: Sequence[str] | None = None, **kw: Any
) -> list[str]:
    """Each pair decided by a model fitted on the pairs of the other training files (or of the other
    ``groups``: one name per pair, e.g. the training files and an external set)."""
    return by_groups(pairs, sims, file_of_each(pairs) if groups is None else groups, **kw)[1][: len(pairs)]


def wrapped(values: Sequence[float], indent: str) -> list[str]:
    """A tuple literal over several lines of at most 120 characters."""
    lines, line = [], ""
    for v in values:
        item = f"{v!r}, "
        if len(indent) + len(line) + len(item) > 116:
            lines.append(indent + line.rstrip())
            line = ""
        line += item
    lines.append(indent + line.rstrip())
    return lines


def render(models: dict[str, DecisionModel]) -> str:
    lines = [
        '"""The fitted numbers of the write-time decision model, one per measured embedder.',
        "",
        "Written by ``python benchmarks/train_decision.py --write``; do not edit by hand.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from .decision_model import DecisionModel",
        "",
        "# features: see decision_model.FEATURE_NAMES; classes: " + ", ".join(CLASSES),
        "MODELS: dict[str, DecisionModel] = {",
    ]
    for family, m in models.items():
        lines.append(f"    {family!r}: DecisionModel(")
        lines.append(f"        name={m.name!r},")
        for field_name in ("mean", "scale"):
            lines.append(f"        {field_name}=(")
            lines.extend(wrapped(getattr(m, field_name), " " * 12))
            lines.append("        ),")
        lines.append("        weights=(")
        for row in m.weights:
            lines.append("            (")
            lines.extend(wrapped(row, " " * 16))
            lines.append("            ),")
        lines.append("        ),")
        lines.append(f"        bias={m.bias!r},")
        lines.append(f"        hide_cost={m.hide_cost!r},")
        lines.append(f"        stale_cost={m.stale_cost!r},")
        lines.append(f"        swap_cost={m.swap_cost!r},")
        lines.append(f"        margin={m.margin!r},")
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--embedder", choices=("offline", "minilm", "all"), default="all")
    parser.add_argument("--write", action="store_true", help=f"rewrite {WEIGHTS.name} with the fitted numbers")
    parser.add_argument("--errors", action="store_true", help="list the pairs cross-validation gets wrong")
    args = parser.parse_args(argv)
    pairs = training_pairs()
    labels = [p["label"] for p in pairs]
    embedders = []
    if args.embedder in ("offline", "all"):
        embedders.append((OFFLINE_FAMILY, ev.offline_embed))
    if args.embedder in ("minilm", "all"):
        embed = ev.minilm_embed_fn()
        if embed is None:
            return 2
        embedders.append((MINILM_FAMILY, embed))
    if args.write and not set(SHIPPED) <= {family for family, _ in embedders}:
        raise SystemExit("--write needs every shipped embedder's model: run it with --embedder minilm or all")
    models = {}
    for family, embed in embedders:
        sims = ev.similarities(pairs, embed)
        rows, decided = by_groups(pairs, sims, folds_of(len(pairs)).tolist())
        cv = decided[: len(pairs)]
        acc = ev.accuracy(labels, cv)
        hidden = ev.hidden_rate(labels, cv)
        print(
            f"{family}: {len(pairs)} training pairs, 5-fold cross-validated accuracy {acc:.1%}, "
            f"true facts hidden {hidden:.1%}"
        )
        rev_labels = [p["label"] for p in rows[len(pairs) :]]
        if rev_labels:
            print(
                f"  their {len(rev_labels)} reversals (old and new swapped), the same folds: "
                f"{ev.accuracy(rev_labels, decided[len(pairs) :]):.1%}, "
                f"hidden {ev.hidden_rate(rev_labels, decided[len(pairs) :]):.1%}"
            )
        by_file = leave_file_out(pairs, sims)
        files = file_of_each(pairs)
        for name in TRAIN_FILES:
            idx = [i for i, f in enumerate(files) if f == name]
            print(
                f"  {name} decided by a model of the other files: "
                f"{ev.accuracy([labels[i] for i in idx], [by_file[i] for i in idx]):.1%}, "
                f"hidden {ev.hidden_rate([labels[i] for i in idx], [by_file[i] for i in idx]):.1%}"
            )
        print(
            f"  every file by the others: {ev.accuracy(labels, by_file):.1%}, "
            f"hidden {ev.hidden_rate(labels, by_file):.1%}"
        )
        if args.errors:
            for p, got in zip(rows, decided):
                if got != p["label"]:
                    turned = " (reversed)" if p.get("reversed") else ""
                    print(
                        f"    {p['id']:>5} {p['kind']:<13} {p['label']} -> {got}{turned}: {p['old']!r} / {p['new']!r}"
                    )
        if family in SHIPPED:
            models[family] = fit_shipped(pairs, sims, family)
    if args.write:
        WEIGHTS.write_text(render(models), encoding="utf-8")
        print(f"wrote {WEIGHTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
