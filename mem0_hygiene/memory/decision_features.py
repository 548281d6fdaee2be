"""Text features of an old/new fact pair for the write-time decision (:mod:`mem0_hygiene.memory.decision`).

A fact is read as a *frame* with *values* in it: "The daily standup is at 09:30" is the frame "daily standup
___" with the value "09:30". Values are numbers, versions, times and dates, number words, and capitalised
words inside the sentence (names, places, products). Comparing the frames and the values separately tells
"same frame, another value" (an update) from "another frame" (unrelated) where one similarity score cannot.
Besides: negation and retraction cues, verbs of change ("moved to", "switched to", "now"), and opposite
predicates without a negation word ("allowed" / "forbidden").

Everything here is plain string work: no embedder, no network, the same for every embedder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN_RE = re.compile(r"\d+(?:[.:/-]\d+)*%?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_STOP = frozenset(
    """a an the is are was were be been being am to of in on at for and or it its this that with as by from
    we i you they them their theirs he she his her my me our us your has have had do does did will would
    can could should shall may might there here so than then also too very just still only all any each
    every some into onto over under about after before up down out off s""".split()
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
# Opposite predicates that contradict without a negation word; each side is a set of word stems.
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("like likes liked love loves loved enjoy enjoys enjoyed prefer prefers fond",
         "dislike dislikes disliked hate hates hated dread dreads detest detests avoid avoids loathe loathes stand"),
        ("allowed permitted enabled on open opened active available allow allows permit permits",
         "forbidden prohibited banned blocked disabled off closed shut inactive unavailable lifted revoked "
         "forbid forbids ban bans block blocks"),
        ("working fine healthy up", "broken down failing dead"),
        ("friendly kind calm", "aggressive hostile nervous"),
        ("married engaged together", "divorced separated single"),
        ("well good", "badly poorly insomnia"),
        ("early", "late"),
        ("along", "estranged"),
        ("physical offline", "online"),
        ("required mandatory", "optional"),
        ("public", "private"),
        ("increase increased more", "decrease decreased fewer less"),
    )
)


def tokens(text: str) -> list[tuple[str, bool]]:
    """The words of a text, lower-cased, each with whether it was capitalised mid-sentence."""
    out = []
    for i, match in enumerate(_TOKEN_RE.finditer(text)):
        word = match.group(0)
        capital = i > 0 and word[:1].isupper() and text[max(0, match.start() - 2):match.start()].strip() not in (
            ".", ":", ";", "!", "?")
        out.append((word.lower().replace("’", "'"), capital))
    return out


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def is_value(word: str, capital: bool) -> bool:
    """A number, version, time or date, a number word, a month or weekday, or a capitalised name."""
    return capital or any(c.isdigit() for c in word) or word in _NUMBER_WORDS or word in _MONTHS_DAYS


def split_frame(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(frame words, values) of a text: stemmed content words outside the values, and the values."""
    frame, values = set(), set()
    for word, capital in tokens(text):
        if is_value(word, capital):
            values.add(word)
        elif word not in _STOP and not word.endswith("n't"):
            frame.add(_stem(word))
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


def change_cue(text: str) -> bool:
    return _CHANGE_RE.search(text) is not None


def opposite(new_text: str, old_text: str) -> bool:
    """Whether one text has a word of a predicate and the other a word of its opposite ("on" / "off")."""
    new = {w for w, _ in tokens(new_text)}
    old = {w for w, _ in tokens(old_text)}
    return any((a & old and b & new and not b & old) or (b & old and a & new and not a & old)
               for a, b in _OPPOSITES)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
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


def possessives(text: str) -> frozenset[str]:
    """The possessive words of a text ("brother's", "neighbours'")."""
    return frozenset(_stem(w[:-2]) for w, _ in tokens(text) if w.endswith("'s")) | frozenset(
        _stem(m.lower()) for m in re.findall(r"(\w+)s['’](?:\s|$)", text))


def edit_span(new_text: str, old_text: str) -> tuple[bool, float]:
    """(whether the texts differ in one short span only, where that span is: 0 start .. 1 end)."""
    a = [w for w, _ in tokens(new_text)]
    b = [w for w, _ in tokens(old_text)]
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    q = 0
    while q < min(len(a), len(b)) - p and a[-1 - q] == b[-1 - q]:
        q += 1
    if a == b or len(a) - p - q > 2 or len(b) - p - q > 2 or p + q == 0:
        return False, 0.5
    return True, p / (p + q)


def pair_features(new_text: str, old_text: str) -> PairFeatures:
    new_frame, new_values = split_frame(new_text)
    old_frame, old_values = split_frame(old_text)
    edit, position = edit_span(new_text, old_text)
    return PairFeatures(
        frame_overlap=_jaccard(new_frame, old_frame),
        value_overlap=_jaccard(new_values, old_values),
        values_differ=bool(new_values and old_values and new_values != old_values),
        new_words=len(new_frame - old_frame),
        negation=negates(new_text, old_text),
        plain_negation=plain_negation(new_text) and not plain_negation(old_text),
        change=change_cue(new_text) and not change_cue(old_text),
        opposite=opposite(new_text, old_text),
        same_values=bool(new_values and new_values == old_values),
        possessive=possessives(new_text) != possessives(old_text),
        edit=edit,
        edit_position=position,
    )
