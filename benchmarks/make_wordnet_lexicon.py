"""Write the write-time decision's WordNet lexicon (``mem0_hygiene/memory/data/wordnet_lexicon.txt.gz``) from
Princeton WordNet 3.0's database files, as Debian's ``wordnet-base`` package installs them (``/usr/share/wordnet``).

The product reads only the file written here (:mod:`mem0_hygiene.memory.decision_wordnet`); WordNet itself is needed
only to rebuild it. Kept small: single words with at least :data:`MIN_TAGS` sense-tagged occurrences in WordNet's
frequency counts (``cntlist.rev``), and of each only its first :data:`SENSES` senses per part of speech (WordNet
lists senses most frequent first; later senses bring the polysemy that would join unrelated words). Lines:

* ``w WORD S1 S2 ...``: the synsets of a word's first senses (numbered here, 0..n), noun, verb, adjective, adverb;
* ``h S H1 H2 ...``: a synset's direct hypernyms (``@``, ``@i``), for the synsets of ``w`` lines;
* ``a S T``: synsets S and T hold antonyms (WordNet's ``!`` pointers between their words), an adjective
  satellite's antonyms being its head's (``&``: "huge" is similar to "large", whose antonym is "small"); verbs,
  adjectives and adverbs only unless ``--noun-antonyms``: noun antonyms are mostly another subject ("man" /
  "woman", "son" / "daughter"), not an opposite predicate, and cross-validation scored them worse;
* ``x FORM WORD``: an irregular form and its base word (WordNet's exception lists, ``*.exc``), for words above.

WordNet 3.0 Copyright 2006 by Princeton University; its licence is in ``mem0_hygiene/memory/data/WORDNET_LICENSE``.

    python benchmarks/make_wordnet_lexicon.py [--wordnet /usr/share/wordnet] [--out PATH]
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import defaultdict
from pathlib import Path

WORDNET = Path("/usr/share/wordnet")
OUT = Path(__file__).resolve().parent.parent / "mem0_hygiene" / "memory" / "data" / "wordnet_lexicon.txt.gz"
POS = (("noun", "n", "1"), ("verb", "v", "2"), ("adj", "a", "3"), ("adv", "r", "4"))
SENSES = 2
MIN_TAGS = 3
HEADER = (
    "# The write-time decision's WordNet lexicon, written by benchmarks/make_wordnet_lexicon.py from Princeton "
    "WordNet 3.0.\n# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Licence and "
    "disclaimer: WORDNET_LICENSE.\n"
)


def tag_counts(wordnet: Path) -> dict[tuple[str, str], int]:
    """(lemma, part-of-speech digit) -> its sense-tagged occurrences (adjective satellites counted as adjectives)."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for line in (wordnet / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, _, count = line.split()
        lemma, rest = key.split("%", 1)
        digit = "3" if rest[0] == "5" else rest[0]
        counts[(lemma, digit)] += int(count)
    return counts


def read_index(wordnet: Path, name: str) -> dict[str, list[str]]:
    """lemma -> its synset offsets, most frequent sense first."""
    out = {}
    for line in (wordnet / f"index.{name}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        f = line.split()
        p_cnt = int(f[3])
        out[f[0]] = f[6 + p_cnt :]
    return out


def read_data(wordnet: Path, name: str) -> dict[str, tuple[list[str], list[tuple[str, str, str]]]]:
    """offset -> (its words, its pointers as (symbol, target offset, source/target field))."""
    out = {}
    for line in (wordnet / f"data.{name}").read_text(encoding="latin-1").splitlines():
        if line.startswith(" "):
            continue
        f = line.split(" | ")[0].split()
        offset, n = f[0], int(f[3], 16)
        words = [f[4 + 2 * i].lower() for i in range(n)]
        k = 4 + 2 * n
        p_cnt = int(f[k])
        pointers = [(f[k + 1 + 4 * i], f[k + 2 + 4 * i], f[k + 4 + 4 * i]) for i in range(p_cnt)]
        out[offset] = (words, pointers)
    return out


def build(wordnet: Path, senses: int = SENSES, min_tags: int = MIN_TAGS, noun_antonyms: bool = False) -> str:
    counts = tag_counts(wordnet)
    ids: dict[str, int] = {}

    def sid(pos: str, offset: str) -> int:
        return ids.setdefault(pos + offset, len(ids))

    words: dict[str, list[int]] = defaultdict(list)
    data = {}
    chosen: set[str] = set()  # pos + offset of every synset a kept word's first senses name
    for name, pos, digit in POS:
        data[pos] = read_data(wordnet, name)
        for lemma, offsets in read_index(wordnet, name).items():
            if not lemma.isalpha() or counts.get((lemma, digit), 0) < min_tags:
                continue
            for offset in offsets[:senses]:
                chosen.add(pos + offset)
                words[lemma].append(sid(pos, offset))
    lines = [f"w {w} " + " ".join(map(str, s)) for w, s in sorted(words.items())]
    hypernyms, antonyms = [], set()
    for key in sorted(chosen, key=lambda k: ids[k]):
        pos, offset = key[0], key[1:]
        _, pointers = data[pos][offset]
        hyper = [sid(pos, t) for sym, t, _ in pointers if sym in ("@", "@i")]
        if hyper:
            hypernyms.append(f"h {ids[key]} " + " ".join(map(str, hyper)))
        if pos == "n" and not noun_antonyms:
            continue
        heads = [offset] + (
            [t for sym, t, _ in pointers if sym == "&"] if pos == "a" and _satellite(data[pos], offset) else []
        )
        for head in heads:
            for sym, target, _ in data[pos][head][1]:
                if sym != "!":
                    continue
                for other in _cluster(data[pos], target):
                    if pos + other in chosen:
                        antonyms.add(tuple(sorted((ids[key], ids[pos + other]))))
    lines += hypernyms
    lines += [f"a {a} {b}" for a, b in sorted(antonyms)]
    for name, _, _ in POS:
        for line in (wordnet / f"{name}.exc").read_text(encoding="latin-1").splitlines():
            form, *bases = line.split()
            base = next((b for b in bases if b in words), None)
            if base and form.isalpha() and form not in words:
                lines.append(f"x {form} {base}")
    return HEADER + "\n".join(lines) + "\n"


def _satellite(data: dict[str, tuple[list[str], list[tuple[str, str, str]]]], offset: str) -> bool:
    return any(sym == "&" for sym, _, _ in data[offset][1]) and not any(sym == "!" for sym, _, _ in data[offset][1])


def _cluster(data: dict[str, tuple[list[str], list[tuple[str, str, str]]]], head: str) -> list[str]:
    """A synset and, for an adjective head, its satellites (``&`` pointers)."""
    return [head] + [t for sym, t, _ in data[head][1] if sym == "&"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wordnet", type=Path, default=WORDNET, help="WordNet 3.0's dict folder")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--senses", type=int, default=SENSES, help="first senses per word and part of speech")
    parser.add_argument("--min-tags", type=int, default=MIN_TAGS, help="sense-tagged occurrences a word needs")
    parser.add_argument("--noun-antonyms", action="store_true", help="also the antonyms between nouns")
    args = parser.parse_args(argv)
    if not (args.wordnet / "data.noun").exists():
        raise SystemExit(
            f"no WordNet database in {args.wordnet}: install it (Debian: apt-get install wordnet-base) "
            "or pass --wordnet DIR"
        )
    text = build(args.wordnet, args.senses, args.min_tags, args.noun_antonyms)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(text.encode("utf-8"))
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB, {text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
