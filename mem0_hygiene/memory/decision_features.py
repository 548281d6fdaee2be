"""Text features of an old/new fact pair for the write-time decision (:mod:`mem0_hygiene.memory.decision`).

A fact is read as a *frame* with *values* in it: "The daily standup is at 09:30" is the frame "daily standup
___" with the value "09:30". Values are numbers, versions, times and dates, number words, and capitalised
words inside the sentence (names, places, products; "Dr. Rossi" too: a title's period ends no sentence).
Comparing the frames and the values separately tells "same frame, another value" (an update) from "another
frame" (unrelated) where one similarity score cannot.
Values have one spelling ("three" and "3"), frame words one per synonym group ("kids" and "children"), and a frame
word of the new text that shares a first WordNet sense with a word of the old one, or is directly under or above
it, counts as that word ("slicing" / "cutting": :mod:`.decision_wordnet`). Besides: negation and retraction cues
(in the new text; or in the old one only: a negation taken back), verbs of change ("moved to", "switched to",
"now"), opposite predicates without a negation word ("allowed" / "forbidden", from :mod:`.decision_lexicon`;
"sitting" / "standing", WordNet's antonyms), what a one-word edit swapped (a value, or a frame word), and whether
the same words come in another order (word overlap against bigram overlap: who does what to whom).

Everything here is plain string work and look-ups in shipped word lists: no embedder, no network, the same for
every embedder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import decision_wordnet as wordnet
from .decision_lexicon import entry_words, prefixed_pair, sides_in, synonym_key, word_key

_TOKEN_RE = re.compile(r"\d+(?:[.:/-]\d+)*%?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_STOP = frozenset(
    """a an the is are was were be been being am to of in on at for and or it its this that with as by from
    we i you they them their theirs he she his her my me our us your has have had do does did will would
    can could should shall may might there here so than then also too very just still only all any each
    every some into onto over under about after before up down out off s currently really actually entirely
    honest honestly i'm i've i'd i'll we're we've we'd
    we'll they're they've they'd you're you've it's he's she's that's there's st nd rd th percent""".split()
)
# "off"/"up"/"down" are kept apart from the stop words below when they carry meaning (antonyms).
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty "
    "hundred thousand first second third fourth fifth half double twice once".split()
)
_MONTHS_DAYS = frozenset(
    """january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mondays tuesdays
    wednesdays thursdays fridays saturdays sundays noon midnight morning mornings evening evenings night
    nights weekend weekends am pm utc""".split()
)

# Cues that a text negates or retracts a fact ("no longer", "stopped", ...); named, so a verdict can say which.
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
        ("got rid of", r"\b(?:got|get|gets|getting) rid of\b"),
        ("stepped down", r"\bstepp(?:ed|ing) down\b|\bresigned\b|\bleft the\b"),
        ("dropped", r"\bdropped (?:out|it|the)\b"),
        ("turned off", r"\bturned off\b|\bswitched off\b|\bunsubscribed\b|\buninstalled\b"),
        ("sold", r"\bsold\b|\blapsed?\b|\bpassed away\b|\bdied\b"),
    )
)
# A plain negation word ("not", "doesn't", "never", "no"), weaker than the cues above.
_PLAIN_NEGATION_RE = re.compile(r"\b(?:not|never|no|none|nobody|nothing|without|cannot)\b|n['’]t\b", re.IGNORECASE)
# Verbs and adverbs of change: the new fact says the old value was replaced.
_CHANGE_RE = re.compile(
    r"\b(?:now|nowadays|these days|moved|moving|switched|switching|changed|changing|upgraded|downgraded|"
    r"replaced|migrated|took over|taken over|instead|since|rescheduled|pushed|postponed|promoted|grew|"
    r"went up|went down|dropped to|rose|increased|decreased|raised|lowered|renamed|traded|became|become|"
    r"new|newly|anew|latest|just turned|turned|transferred|relocated|re-?assigned|handed over|joined)\b",
    re.IGNORECASE,
)


def tokens(text: str) -> list[tuple[str, bool]]:
    """The words of a text, lower-cased, each with whether it was capitalised mid-sentence."""
    return list(_tokens(text))


_TITLES = frozenset("dr mr mrs ms mx prof st mt jr sr capt col gen lt sgt gov sen rep rev fr".split())
"""Abbreviations whose period does not end the sentence: the capitalised word after "Dr." is a name."""


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[tuple[str, bool], ...]:
    out: list[tuple[str, bool]] = []
    for i, match in enumerate(_TOKEN_RE.finditer(text)):
        word = match.group(0)
        before = text[max(0, match.start() - 2) : match.start()].strip()
        capital = (
            i > 0
            and word[:1].isupper()
            and (before not in (".", ":", ";", "!", "?") or (before == "." and out[-1][0] in _TITLES))
        )
        out.append((word.lower().replace("’", "'"), capital))
    return tuple(out)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_AS_DIGITS = {
    w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
} | {
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
}


def value_key(word: str) -> str:
    """One spelling per value: number words as digits ("three" -> "3"), "15%" -> "15", "Thursdays" ->
    "thursday", so "three times a week" and "3 times per week" carry the same value."""
    if word in _AS_DIGITS:
        return _AS_DIGITS[word]
    if word.endswith("%"):
        return word[:-1]
    if word in _MONTHS_DAYS and word.endswith("s") and word[:-1] in _MONTHS_DAYS:
        return word[:-1]
    return word


def is_value(word: str, capital: bool) -> bool:
    """A number, version, time or date, a number word, a month or weekday, or a capitalised name."""
    return capital or any(c.isdigit() for c in word) or word in _NUMBER_WORDS or word in _MONTHS_DAYS


def split_frame(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(frame words, values) of a text: stemmed content words outside the values, and the values."""
    frame, values = set(), set()
    for word, capital in tokens(text):
        if is_value(word, capital):
            values.add(value_key(word))
        elif word not in _STOP and not word.endswith("n't"):
            frame.add(synonym_key(word))
    return frozenset(frame), frozenset(values)


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


def plain_negation(text: str) -> bool:
    return _PLAIN_NEGATION_RE.search(text) is not None


def negated(text: str) -> bool:
    """Whether a text has a negation or retraction cue or a plain negation word."""
    return plain_negation(text) or bool(negation_cues(text))


def change_cue(text: str) -> bool:
    return _CHANGE_RE.search(text) is not None


def opposite(new_text: str, old_text: str) -> bool:
    """Whether one text has a word of a predicate and the other a word of its opposite ("on" / "off",
    "introvert" / "extrovert": :data:`~.decision_lexicon.OPPOSITES`; "sit" / "stand": WordNet's antonyms between
    first senses, :func:`.decision_wordnet.antonyms`), or a word and its negating prefix ("available" /
    "unavailable")."""
    return bool(opposite_words(new_text, old_text))


def opposite_words(new_text: str, old_text: str) -> frozenset[str]:
    """The words of both texts (lower case) that make the opposite :func:`opposite` finds; empty when none."""
    new_words = [w for w, _ in tokens(new_text)]
    old_words = [w for w, _ in tokens(old_text)]
    new = sides_in([word_key(w) for w in new_words])
    old = sides_in([word_key(w) for w in old_words])
    for i in sorted({i for i, _ in new | old}):
        if ((i, 0) in old and (i, 1) in new and (i, 1) not in old) or (
            (i, 1) in old and (i, 0) in new and (i, 0) not in old
        ):
            keys = entry_words(i)
            return frozenset(w for w in new_words + old_words if word_key(w) in keys)
    new_keys = {word_key(w) for w in new_words if w not in _STOP}
    old_keys = {word_key(w) for w in old_words if w not in _STOP}
    for a in sorted(new_keys - old_keys):
        for b in sorted(old_keys - new_keys):
            if wordnet.antonyms(a, b):
                return frozenset(w for w in new_words + old_words if word_key(w) in (a, b))
    pair = prefixed_pair(set(new_words) - set(old_words), set(old_words) - set(new_words))
    return frozenset(pair or ())


def opposite_beside(new_text: str, old_text: str, words: frozenset[str], rename: dict[str, str]) -> bool:
    """Whether, beside the opposite ``words`` (:func:`opposite_words`), each text has a content word the other
    lacks: the opposite is said of another subject or object ("The front door lock is broken" / "The back door
    lock works fine"), not of the same one ("Autoscaling is enabled" / "disabled")."""
    if not words:
        return False

    def rest(text: str) -> frozenset[str]:
        keys = (content_key(w, c) for w, c in content(text) if w not in words)
        return frozenset(rename.get(k, k) for k in keys)

    new, old = rest(new_text), rest(old_text)
    return bool(new - old) and bool(old - new)


def _jaccard(a: frozenset[object], b: frozenset[object]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


@dataclass(frozen=True)
class PairFeatures:
    """What the text of a pair says, beside the similarity (see the module docstring)."""

    frame_overlap: float
    """Jaccard overlap of the frame words (1.0: the same frame)."""
    value_overlap: float
    """Jaccard overlap of the values (1.0 when neither has a value)."""
    values_differ: bool
    """Both have values and they differ."""
    new_words: int
    """Frame words of the new text that the old one lacks."""
    negation: str | None
    """A negation/retraction cue the new text has and the old one lacks."""
    plain_negation: bool
    """A plain negation word ("not", "doesn't", "never") in the new text and not in the old one."""
    change: bool
    """A verb of change in the new text and not in the old one ("moved to", "now", "switched")."""
    opposite: bool
    """Opposite predicates, one in each text ("enabled" / "disabled")."""
    same_values: bool
    """Both have values and they are the same ("My manager is Priyanka" / "My mentor is Priyanka")."""
    possessive: bool
    """One text has a possessive the other lacks ("Their brother's bank" / "Their bank"): another subject."""
    edit: bool
    """The texts differ in one span of at most two words each, the rest word for word the same."""
    edit_position: float
    """Where that span is, from 0 (the start, usually the subject) to 1 (the end, usually the value);
    0.5 when the texts are not an edit of each other."""
    swapped: str | None = None
    """What a one-span edit swapped: "values", "words" or "mixed" (:func:`swapped`), None if no such edit or if it
    swapped words for WordNet synonyms (:func:`synonym_renames`: "slicing" / "cutting" is no swap)."""
    dropped_negation: bool = False
    """The old text has a negation (a cue or a plain negation word) and the new one none: the new fact takes the
    old one's negation back ("Doesn't own a car" / "Owns a car"), the other direction of :attr:`negation`."""
    missing_words: int = 0
    """Frame words of the old text that the new one lacks (the other direction of :attr:`new_words`)."""
    word_overlap: float = 1.0
    """Jaccard overlap of the content words, frame and values together, one key per synonym and per value."""
    bigram_overlap: float = 1.0
    """Jaccard overlap of the pairs of neighbouring content words: the same words in another order ("A monkey is
    kicking a person" / "A person is kicking a monkey") overlap in words and not in bigrams."""
    opposite_beside: bool = False
    """Opposite predicates and, beside them, a content word in each text that the other lacks: the opposite is
    said of another subject or object (:func:`opposite_beside`)."""


def possessives(text: str) -> frozenset[str]:
    """The possessive words of a text ("brother's", "neighbours'")."""
    return frozenset(_stem(w[:-2]) for w, _ in tokens(text) if w.endswith("'s") and w not in _STOP) | frozenset(
        _stem(m.lower()) for m in re.findall(r"(\w+)s['’](?:\s|$)", text)
    )


def content(text: str) -> list[tuple[str, bool]]:
    """The tokens of a text without the stop words (pronouns, articles, "is", "currently"): what :func:`swapped`
    compares, so "I'm introverted" and "Is introverted" swap nothing."""
    return [(w, c) for w, c in tokens(text) if w not in _STOP]


def _differing(a: list[tuple[str, bool]], b: list[tuple[str, bool]]) -> tuple[int, int]:
    """(length of the common prefix, length of the common suffix after it) of two token lists."""
    p = 0
    while p < min(len(a), len(b)) and a[p][0] == b[p][0]:
        p += 1
    q = 0
    while q < min(len(a), len(b)) - p and a[-1 - q][0] == b[-1 - q][0]:
        q += 1
    return p, q


def edit_span(new_text: str, old_text: str) -> tuple[bool, float]:
    """(whether the texts differ in one short span only, where that span is: 0 start .. 1 end)."""
    a, b = tokens(new_text), tokens(old_text)
    p, q = _differing(a, b)
    if [w for w, _ in a] == [w for w, _ in b] or len(a) - p - q > 2 or len(b) - p - q > 2 or p + q == 0:
        return False, 0.5
    return True, p / (p + q)


def swapped(new_text: str, old_text: str) -> str | None:
    """What one short span that differs holds, when the texts are an edit of each other (:func:`edit_span`) and
    both sides of the span are non-empty: ``"values"`` when every word of it is a value ("Kofi" -> "Sven",
    "15" -> "16"), ``"words"`` when none is ("aisle" -> "window"), ``"mixed"`` otherwise ("dentist" -> "GP");
    None when they are not such an edit. A name as the first word is not told from any other first word."""
    a, b = content(new_text), content(old_text)
    p, q = _differing(a, b)
    span = a[p : len(a) - q] + b[p : len(b) - q]
    if len(a) - p - q not in (1, 2) or len(b) - p - q not in (1, 2) or p + q == 0:
        return None
    kinds = {is_value(word, capital) for word, capital in span}
    return "values" if kinds == {True} else "words" if kinds == {False} else "mixed"


def content_key(word: str, capital: bool) -> str:
    """A content word's value key (a value) or its synonym key (a frame word)."""
    return value_key(word) if is_value(word, capital) else synonym_key(word)


def content_keys(text: str) -> list[str]:
    """The content words of a text in order (:func:`content`), each as its :func:`content_key`."""
    return [content_key(w, c) for w, c in content(text)]


def _bigrams(keys: list[str]) -> frozenset[tuple[str, str]]:
    return frozenset(zip(keys, keys[1:]))


def synonym_renames(new_frame: frozenset[str], old_frame: frozenset[str]) -> dict[str, str]:
    """Each frame word of the new text that the old one lacks, to a word of the old text's frame (that the new one
    lacks) it shares a first WordNet sense with or is directly under or above (:func:`.decision_wordnet.synonyms`
    with one level of hypernyms): "slicing" / "cutting", "lady" / "woman" are one frame word."""
    old_only = sorted(old_frame - new_frame)
    out: dict[str, str] = {}
    for w in sorted(new_frame - old_frame):
        for v in old_only:
            if v not in out.values() and wordnet.synonyms(w, v, hypernyms=1):
                out[w] = v
                break
    return out


def pair_features(new_text: str, old_text: str) -> PairFeatures:
    new_frame, new_values = split_frame(new_text)
    old_frame, old_values = split_frame(old_text)
    edit, position = edit_span(new_text, old_text)
    swap = swapped(new_text, old_text)
    new_keys, old_keys = content_keys(new_text), content_keys(old_text)
    rename = synonym_renames(new_frame, old_frame)
    opposed = opposite_words(new_text, old_text)
    if rename:
        new_frame = frozenset(rename.get(w, w) for w in new_frame)
        new_keys = [rename.get(w, w) for w in new_keys]
    return PairFeatures(
        frame_overlap=_jaccard(new_frame, old_frame),
        value_overlap=_jaccard(new_values, old_values),
        values_differ=bool(new_values and old_values and new_values != old_values),
        new_words=len(new_frame - old_frame),
        negation=negates(new_text, old_text),
        plain_negation=plain_negation(new_text) and not plain_negation(old_text),
        change=change_cue(new_text) and not change_cue(old_text),
        opposite=bool(opposed),
        same_values=bool(new_values and new_values == old_values),
        possessive=possessives(new_text) != possessives(old_text),
        edit=edit,
        edit_position=position,
        swapped=None if swap == "words" and rename else swap,
        dropped_negation=negated(old_text) and not negated(new_text),
        missing_words=len(old_frame - new_frame),
        word_overlap=_jaccard(frozenset(new_keys), frozenset(old_keys)),
        bigram_overlap=_jaccard(_bigrams(new_keys), _bigrams(old_keys)),
        opposite_beside=opposite_beside(new_text, old_text, opposed, rename),
    )
