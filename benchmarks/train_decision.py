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

    python benchmarks/train_decision.py [--embedder offline|minilm|all] [--errors] [--write]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_staleness as ev  # noqa: E402

from mem0_hygiene.memory.decision import MINILM_FAMILY, OFFLINE_FAMILY  # noqa: E402
from mem0_hygiene.memory.decision_features import pair_features  # noqa: E402
from mem0_hygiene.memory.decision_model import CLASSES, DecisionModel, feature_vector  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
TRAIN_FILES = (
    "staleness_pairs.jsonl", "staleness_more.jsonl", "staleness_templates.jsonl", "staleness_opposites.jsonl")
WEIGHTS = Path(__file__).resolve().parent.parent / "mem0_hygiene" / "memory" / "decision_weights.py"
# Ridge penalty on the standardised weights and the cost of hiding a true fact (in plain mistakes), chosen on
# the training pairs only: of the settings that meet the goal (>= 85%, <= 2% hidden) under 5-fold
# cross-validation, the one most accurate leaving one training file out (trained on the others).
L2 = 0.05
HIDE_COST = 2.0
FOLDS = 5
SEED = 0
SHIPPED = (MINILM_FAMILY,)


def training_pairs() -> list[dict[str, Any]]:
    return [p for name in TRAIN_FILES for p in ev.load_pairs(DATA / name)]


def inputs(pairs: Sequence[dict[str, Any]], sims: np.ndarray) -> np.ndarray:
    return np.array([feature_vector(float(s), pair_features(p["new"], p["old"])) for p, s in zip(pairs, sims)])


def fit(x: np.ndarray, labels: Sequence[str], name: str, l2: float = L2, hide_cost: float = HIDE_COST,
        iters: int = 4000, rate: float = 0.5) -> DecisionModel:
    """Multinomial logistic regression by gradient descent on standardised inputs (deterministic)."""
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

    return DecisionModel(name=name, mean=tuple(r(v) for v in mean), scale=tuple(r(v) for v in scale),
                         weights=tuple(tuple(r(w[i, k]) for i in range(x.shape[1])) for k in range(len(CLASSES))),
                         bias=tuple(r(v) for v in b), hide_cost=hide_cost)


def predict(model: DecisionModel, x: np.ndarray) -> list[str]:
    return [model.choose(model.probabilities(row)) for row in x]


def folds_of(n: int) -> np.ndarray:
    perm = np.random.RandomState(SEED).permutation(n)
    folds = np.empty(n, dtype=int)
    folds[perm] = np.arange(n) % FOLDS
    return folds


def cross_validated(pairs: Sequence[dict[str, Any]], x: np.ndarray, **kw: Any) -> list[str]:
    """Each pair decided by a model fitted on the other folds."""
    labels = [p["label"] for p in pairs]
    folds = folds_of(len(pairs))
    out = [""] * len(pairs)
    for k in range(FOLDS):
        train = np.flatnonzero(folds != k)
        model = fit(x[train], [labels[i] for i in train], "fold", **kw)
        for i, label in zip(np.flatnonzero(folds == k), predict(model, x[folds == k])):
            out[i] = label
    return out


def file_of_each(pairs: Sequence[dict[str, Any]]) -> list[str]:
    """The training file each pair comes from (:data:`TRAIN_FILES` order)."""
    return [name for name in TRAIN_FILES for _ in ev.load_pairs(DATA / name)][: len(pairs)]


def leave_file_out(pairs: Sequence[dict[str, Any]], x: np.ndarray, **kw: Any) -> list[str]:
    """Each pair decided by a model fitted on the pairs of the other training files."""
    labels = [p["label"] for p in pairs]
    files = np.array(file_of_each(pairs))
    out = [""] * len(pairs)
    for name in TRAIN_FILES:
        train = np.flatnonzero(files != name)
        model = fit(x[train], [labels[i] for i in train], "file", **kw)
        for i, label in zip(np.flatnonzero(files == name), predict(model, x[files == name])):
            out[i] = label
    return out


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
    lines = ['"""The fitted numbers of the write-time decision model, one per measured embedder.',
             "",
             "Written by ``python benchmarks/train_decision.py --write``; do not edit by hand.",
             '"""', "", "from __future__ import annotations", "",
             "from .decision_model import DecisionModel", "",
             "# features: see decision_model.FEATURE_NAMES; classes: " + ", ".join(CLASSES),
             "MODELS: dict[str, DecisionModel] = {"]
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
        x = inputs(pairs, ev.similarities(pairs, embed))
        cv = cross_validated(pairs, x)
        acc = ev.accuracy(labels, cv)
        hidden = ev.hidden_rate(labels, cv)
        print(f"{family}: {len(pairs)} training pairs, 5-fold cross-validated accuracy {acc:.1%}, "
              f"true facts hidden {hidden:.1%}")
        by_file = leave_file_out(pairs, x)
        files = file_of_each(pairs)
        for name in TRAIN_FILES:
            idx = [i for i, f in enumerate(files) if f == name]
            print(f"  {name} decided by a model of the other files: "
                  f"{ev.accuracy([labels[i] for i in idx], [by_file[i] for i in idx]):.1%}, "
                  f"hidden {ev.hidden_rate([labels[i] for i in idx], [by_file[i] for i in idx]):.1%}")
        print(f"  every file by the others: {ev.accuracy(labels, by_file):.1%}, "
              f"hidden {ev.hidden_rate(labels, by_file):.1%}")
        if args.errors:
            for p, decided in zip(pairs, cv):
                if decided != p["label"]:
                    print(f"    {p['id']:>5} {p['kind']:<13} {p['label']} -> {decided}: {p['old']!r} / {p['new']!r}")
        if family in SHIPPED:
            models[family] = fit(x, labels, f"{family}, {len(pairs)} pairs")
    if args.write:
        WEIGHTS.write_text(render(models), encoding="utf-8")
        print(f"wrote {WEIGHTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
