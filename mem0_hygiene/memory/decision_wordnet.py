"""Synonyms, hypernyms and antonyms from Princeton WordNet 3.0 for the write-time decision's text features
(:mod:`mem0_hygiene.memory.decision_features`).

Read from ``data/wordnet_lexicon.txt.gz`` (written by ``benchmarks/make_wordnet_lexicon.py`` from WordNet's database
files; WordNet itself is not needed at run time), lazily, once per process. Words are looked up by
:func:`~.decision_lexicon.word_key`, so "slicing" finds "slice"; each word brings only its first senses (the most
frequent ones), so polysemy joins few unrelated words. WordNet 3.0 Copyright 2006 by Princeton University; its
licence and disclaimer are in ``data/WORDNET_LICENSE``.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .decision_lexicon import word_key

LEXICON = "wordnet_lexicon.txt.gz"


@dataclass(frozen=True)
class WordNetLexicon:
    """word key -> synsets of its first senses; synset -> direct hypernyms; synset -> synsets with antonyms."""

    synsets: dict[str, frozenset[int]]
    hypernyms: dict[int, frozenset[int]]
    antonyms: dict[int, frozenset[int]]


@lru_cache(maxsize=1)
def lexicon() -> WordNetLexicon:
    """The shipped lexicon, read on first use."""
    raw = resources.files(__package__).joinpath("data").joinpath(LEXICON).read_bytes()  # one part a call: Python 3.10
    words: dict[str, set[int]] = {}
    hypernyms: dict[int, frozenset[int]] = {}
    antonyms: dict[int, set[int]] = {}
    forms: list[tuple[str, str]] = []
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        kind, _, rest = line.partition(" ")
        fields = rest.split()
        if kind == "w":
            words.setdefault(word_key(fields[0]), set()).update(int(s) for s in fields[1:])
        elif kind == "h":
            hypernyms[int(fields[0])] = frozenset(int(s) for s in fields[1:])
        elif kind == "a":
            a, b = int(fields[0]), int(fields[1])
            antonyms.setdefault(a, set()).add(b)
            antonyms.setdefault(b, set()).add(a)
        elif kind == "x":
            forms.append((fields[0], fields[1]))
    for form, base in forms:
        words.setdefault(word_key(form), set()).update(words.get(word_key(base), ()))
    return WordNetLexicon(
        {k: frozenset(v) for k, v in words.items()}, hypernyms, {k: frozenset(v) for k, v in antonyms.items()}
    )


def senses(key: str) -> frozenset[int]:
    """The synsets of a word key's first senses (empty for a word WordNet's frequent words lack)."""
    return lexicon().synsets.get(key, frozenset())


@lru_cache(maxsize=16384)
def broader(key: str, levels: int = 1) -> frozenset[int]:
    """The hypernyms of a word key's first senses, up to ``levels`` up ("dog" -> "canine", "domestic animal")."""
    h = lexicon().hypernyms
    out: set[int] = set()
    layer = senses(key)
    for _ in range(levels):
        layer = frozenset(x for s in layer for x in h.get(s, ()))
        out |= layer
    return frozenset(out)


@lru_cache(maxsize=65536)
def synonyms(a: str, b: str, hypernyms: int = 0) -> bool:
    """Whether two word keys share a first sense ("cut" / "slice" do not, "shoot" / "fire" do), or with
    ``hypernyms`` one's first sense is directly under the other's ("slice" / "cut")."""
    sa, sb = senses(a), senses(b)
    if not sa or not sb:
        return False
    if sa & sb:
        return True
    return hypernyms > 0 and bool(broader(a, hypernyms) & sb or broader(b, hypernyms) & sa)


@lru_cache(maxsize=65536)
def antonyms(a: str, b: str) -> bool:
    """Whether WordNet has an antonym between the first senses of two word keys ("sit" / "stand"), an
    adjective's similar words counting as its head's ("huge" / "tiny")."""
    sb = senses(b)
    ant = lexicon().antonyms
    return bool(sb) and any(ant.get(s, frozenset()) & sb for s in senses(a))
