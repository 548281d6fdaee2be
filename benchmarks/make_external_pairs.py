"""Labelled old/new pairs written by other hands: mapped from the SICK corpus onto the decision's four labels.

SICK (Marelli et al. 2014, "A SICK cure for the evaluation of compositional distributional semantic models",
LREC) is 9,840 English sentence pairs, each judged by crowd annotators in *both* directions (``entailment_AB``,
``entailment_BA``: entails / contradicts / neutral) and rated for relatedness (1 to 5). Its licence is Creative
Commons BY-NC-SA 3.0, so the pairs are not copied into this repository: this script builds them from the
corpus's ``SICK.txt`` (the full release, with both directions; also kept in the public GitHub repository
kkalouli/SICK-processing). Put it at ``benchmarks/data/external/SICK.txt`` (ignored by git) or pass ``--sick``.

The mapping uses SICK's own judgements only, never how a model scores a pair:

* **duplicate** / paraphrase: A entails B *and* B entails A (the same fact reworded); texts that are the same
  after lower-casing and dropping punctuation are left out (those are decided by the exact-text rule);
* **contradiction**: A contradicts B *and* B contradicts A; kind *negation* when exactly one of the two has a
  negation word (no, not, nobody, none, nothing, never, n't), *antonym* otherwise;
* **unrelated**: neutral both ways (both can be true: both facts are kept); kind *near miss* when the
  relatedness is 3.0 or more, *other topic* below;
* pairs with one-way entailment (B is more or less specific than A) or mixed judgements map onto none of the
  labels and are left out. SICK has no **update** (its sentences describe pictures, not facts that change), so
  this set has none: its update figures come from the other files only.

Selection (fixed before any model saw the pairs): both sentences at most 15 words; pairs ordered by
``sha256("sick-<pair_ID>")``; the first 100 duplicates, the first 100 contradictions, and the first 50 near
misses and 50 other-topic unrelated pairs in that order: 300 pairs. The old fact is sentence A, the new one B
(the corpus's order). Ids are 20000 + SICK's pair_ID.

    python benchmarks/make_external_pairs.py [--sick PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

SICK = Path(__file__).resolve().parent / "data" / "external" / "SICK.txt"
SOURCE = "SICK (Marelli et al. 2014), CC BY-NC-SA 3.0"
MAX_WORDS = 15
PER_LABEL = {
    ("duplicate", None): 100,
    ("contradiction", None): 100,
    ("unrelated", "near miss"): 50,
    ("unrelated", "other topic"): 50,
}
NEAR_MISS_RELATEDNESS = 3.0
ID_BASE = 20000

_NEGATION_RE = re.compile(r"\b(?:no|not|nobody|none|nothing|never|nowhere)\b|n't\b", re.IGNORECASE)
_PUNCT_RE = re.compile(r"[^\w\s]+")


class SourceMissing(Exception):
    """The corpus file is not where it was looked for."""


def _norm(text: str) -> str:
    return " ".join(_PUNCT_RE.sub(" ", text.lower()).split())


def _label_and_kind(row: dict[str, str]) -> tuple[str, str] | None:
    ab, ba = row["entailment_AB"], row["entailment_BA"]
    a, b = row["sentence_A"], row["sentence_B"]
    if ab == "A_entails_B" and ba == "B_entails_A":
        return ("duplicate", "paraphrase") if _norm(a) != _norm(b) else None
    if ab == "A_contradicts_B" and ba == "B_contradicts_A":
        one_negated = bool(_NEGATION_RE.search(a)) != bool(_NEGATION_RE.search(b))
        return "contradiction", "negation" if one_negated else "antonym"
    if ab == "A_neutral_B" and ba == "B_neutral_A":
        near = float(row["relatedness_score"]) >= NEAR_MISS_RELATEDNESS
        return "unrelated", "near miss" if near else "other topic"
    return None


def read_sick(path: Path = SICK) -> list[dict[str, str]]:
    """The rows of SICK.txt (tab-separated, with a header line)."""
    if not path.is_file():
        raise SourceMissing(
            f"{path} not found: the external pairs are built from the SICK corpus's SICK.txt (CC BY-NC-SA 3.0, "
            f"not redistributed here); put it there or give its path"
        )
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows or "entailment_AB" not in rows[0]:
        raise SourceMissing(f"{path} has no entailment_AB column: it needs the full SICK.txt, with both directions")
    return rows


def pairs(path: Path = SICK) -> list[dict[str, Any]]:
    """The selected pairs (see the module docstring), in the order they were selected."""
    rows = sorted(read_sick(path), key=lambda r: hashlib.sha256(f"sick-{r['pair_ID']}".encode()).hexdigest())
    taken = dict.fromkeys(PER_LABEL, 0)
    out = []
    for row in rows:
        if max(len(row["sentence_A"].split()), len(row["sentence_B"].split())) > MAX_WORDS:
            continue
        mapped = _label_and_kind(row)
        if mapped is None:
            continue
        label, kind = mapped
        bucket = (label, kind) if (label, kind) in PER_LABEL else (label, None)
        if bucket not in PER_LABEL or taken[bucket] >= PER_LABEL[bucket]:
            continue
        taken[bucket] += 1
        out.append(
            {
                "id": ID_BASE + int(row["pair_ID"]),
                "category": "sick",
                "label": label,
                "kind": kind,
                "old": row["sentence_A"],
                "new": row["sentence_B"],
                "source": SOURCE,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sick", type=Path, default=SICK, help="the corpus's SICK.txt")
    parser.add_argument("--out", type=Path, help="write the pairs here as JSON lines (default: only count them)")
    args = parser.parse_args(argv)
    try:
        rows = pairs(args.sick)
    except SourceMissing as exc:
        print(f"{exc} (--sick PATH)", file=sys.stderr)
        return 2
    counts: dict[str, int] = {}
    for p in rows:
        counts[f"{p['label']}/{p['kind']}"] = counts.get(f"{p['label']}/{p['kind']}", 0) + 1
    print(f"{len(rows)} pairs from {args.sick.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.out:
        args.out.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in rows), encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
