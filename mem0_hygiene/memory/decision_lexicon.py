"""A lexicon of opposite predicates, written from general knowledge, for the write-time decision's text features
(:func:`mem0_hygiene.memory.decision_features.opposite`).

Two facts contradict without a negation word when one says a word of one side and the other a word of the other
side ("Autoscaling is enabled" / "disabled", "I'm an introvert" / "extrovert"). Each entry is two sides, each a
comma-separated list of words or short phrases; words are compared by :func:`word_key` (a crude stem: "likes",
"liked", "liking" and "like" are one key), so list the base form. Besides the list, a word and the same word with
a negating prefix or suffix are opposites ("available" / "unavailable", "careful" / "careless"):
:func:`prefixed_pair`.
"""

from __future__ import annotations

import re
from functools import lru_cache

# side | other side: the words a fact uses to state a predicate, and the ones that state its opposite; an indented
# line goes on with the line above.
_ENTRIES = """
like, love, enjoy, adore, prefer, fond of, keen on, into, comfortable with, at ease with | dislike, hate, loathe,
    detest, dread, avoid, can't stand, terrified of, afraid of, scared of, not a fan
allow, permit, allowed, permitted, enabled, enable, on, open, active, available, authorised, approved, accepted |
    forbid, forbidden, prohibit, prohibited, ban, banned, block, blocked, disabled, disable, off, closed, shut,
    inactive, unavailable, lifted, revoked, rejected, denied, declined, refused
working, work fine, healthy, up and running, operational, functional, fixed, repaired, stable | broken, down,
    failing, dead, faulty, out of order, crashed, crashing, flaky, unstable
friendly, kind, calm, relaxed, patient, gentle, polite | aggressive, hostile, nervous, anxious, stressed, impatient,
    rude, mean
married, engaged, in a relationship, together | divorced, separated, single, broke up, widowed
well, good, great, fine, excellent | badly, bad, poorly, terrible, awful, insomnia
early, early riser, morning person, early bird | late, night owl, evening person, late riser
physical, offline, in person, on site, onsite, in the office | online, remote, remotely, virtual, from home
required, mandatory, compulsory, obligatory | optional, voluntary
public, open source | private, proprietary, closed source, confidential, secret
increase, more | decrease, fewer, less
introvert, introverted, shy, reserved, quiet | extrovert, extroverted, extravert, outgoing, sociable, loud,
    talkative
encrypted | plain text, plaintext, unencrypted
hot, warm, spicy | cold, cool, mild, bland
wet, humid | dry
fast, quick, rapid, speedy | slow, sluggish
cheap, inexpensive, affordable | expensive, pricey, costly, overpriced
easy, simple, straightforward | hard, difficult, complicated, tricky, complex
big, large, huge, tall | small, little, tiny, short
heavy | light
strong | weak
rich, wealthy | poor, broke
young | old, aging, ageing, elderly
full | empty
full time, full-time | part time, part-time
busy, booked, occupied, taken | free, idle, available
happy, glad, pleased, content, satisfied | sad, unhappy, upset, disappointed, dissatisfied, miserable
win, won, winning | lose, lost, losing
pass, passed | fail, failed
accept, agree, support, approve, in favour of, in favor of | reject, disagree, oppose, against
include, included | exclude, excluded
buy, bought, purchase, rent in | sell, sold
borrow, borrowed | lend, lent
remember, remembered | forget, forgot, forgotten
trust, trusted | distrust, mistrust, suspicious of
safe, secure | dangerous, unsafe, insecure, risky, vulnerable
legal, lawful | illegal, unlawful
true, correct, right, accurate, valid | false, wrong, incorrect, inaccurate, invalid
present, in town | absent, away, out of town, abroad
awake | asleep
alive | dead
clean, tidy | dirty, messy
quiet, silent, peaceful | noisy, loud
sober, teetotal | drunk, drinks heavily
vegetarian, vegan | eats meat, carnivore
employed, hired | unemployed, fired, laid off, redundant, jobless
healthy, fit | sick, ill, unwell, injured
ahead, ahead of schedule, on track, on time | behind, behind schedule, delayed, late, overdue
profitable, profit | unprofitable, loss, losing money
success, successful, succeeded | failure, unsuccessful, failed
left handed, left-handed | right handed, right-handed
optimist, optimistic | pessimist, pessimistic
inside, indoors, indoor | outside, outdoors, outdoor
maximum, max, most | minimum, min, least
visible, shown | hidden, invisible
wireless | wired
automatic, automated, auto | manual, by hand
synchronous, sync | asynchronous, async
mutable | immutable
stateful | stateless
centralised, centralized | decentralised, decentralized, distributed
deprecated, legacy, sunset | recommended, supported
approved, signed off | pending, under review
indoor cat | outdoor cat
""".strip().splitlines()


@lru_cache(maxsize=65536)
def word_key(word: str) -> str:
    """A crude stem that joins a word's inflections: likes/liked/liking/like -> lik, stopped/stop -> stop."""
    w = word.lower().replace("’", "'")
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "'s")):
        w = w[:-1]
    stripped = False
    if len(w) > 5 and w.endswith("ing"):
        w, stripped = w[:-3], True
    elif len(w) > 4 and w.endswith("ed"):
        w, stripped = w[:-2], True
    if stripped and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiousl":
        w = w[:-1]
    if not stripped and len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def phrase_key(phrase: str) -> str:
    """The keys of a phrase's words, space-separated ("Fond of" -> "fond of")."""
    return " ".join(word_key(w) for w in re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", phrase))


def _side(text: str) -> frozenset[str]:
    return frozenset(phrase_key(item) for item in text.split(",") if item.strip())


def _joined(lines: list[str]) -> list[str]:
    entries: list[str] = []
    for line in lines:
        if line.startswith(" ") and entries:
            entries[-1] += " " + line.strip()
        elif line.strip():
            entries.append(line.strip())
    return entries


OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (_side(a), _side(b)) for a, b in (entry.split("|") for entry in _joined(_ENTRIES))
)
"""Pairs of sides: (the keys of one side's words and phrases, the other side's)."""

_WORD_SIDES: dict[str, list[tuple[int, int]]] = {}
_PHRASE_SIDES: list[tuple[str, tuple[int, int]]] = []
for _i, _pair in enumerate(OPPOSITES):
    for _j, _items in enumerate(_pair):
        for _item in _items:
            if " " in _item:
                _PHRASE_SIDES.append((f" {_item} ", (_i, _j)))
            else:
                _WORD_SIDES.setdefault(_item, []).append((_i, _j))


def entry_words(index: int) -> frozenset[str]:
    """Every word key of entry ``index`` of :data:`OPPOSITES`, both sides, the words of its phrases included."""
    return frozenset(word for side in OPPOSITES[index] for item in side for word in item.split())


def sides_in(keys: list[str]) -> set[tuple[int, int]]:
    """The sides of :data:`OPPOSITES` a text's word keys say: (entry index, 0 or 1)."""
    found = {side for key in keys for side in _WORD_SIDES.get(key, ())}
    joined = " " + " ".join(keys) + " "
    found.update(side for phrase, side in _PHRASE_SIDES if phrase in joined)
    return found


# A prefix or suffix that makes a word its own opposite ("unavailable", "dislike", "careless").
_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-", "mis")
_SUFFIX_PAIRS = (("ful", "less"),)


# The endings of the words a negating prefix goes with (adjectives and participles): "in" + "stall" is no opposite.
_PREFIXABLE = (
    "able",
    "ible",
    "al",
    "ful",
    "ive",
    "ent",
    "ant",
    "ous",
    "ic",
    "ed",
    "ure",
    "ct",
    "y",
    "ar",
    "ite",
    "ate",
    "ine",
    "ior",
)


def prefixed_pair(a_words: set[str], b_words: set[str]) -> tuple[str, str] | None:
    """A word of one set and the same word in the other with a negating prefix ("available" / "unavailable"), or
    the two differing by -ful / -less ("careful" / "careless"): (the prefixed or -less one, the other), else None.
    Words of at least four letters after the prefix, ending like an adjective or a participle."""
    for x, y in ((a_words, b_words), (b_words, a_words)):
        for word in x:
            for prefix in _PREFIXES:
                rest = word[len(prefix) :]
                if (
                    word.startswith(prefix)
                    and len(rest) >= 4
                    and rest.endswith(_PREFIXABLE)
                    and rest in y
                    and word not in y
                ):
                    return word, rest
            for full, less in _SUFFIX_PAIRS:
                if word.endswith(full) and word[: -len(full)] + less in y:
                    return word[: -len(full)] + less, word
    return None


# Words that say the same thing in a fact, one group a line; the first word stands for the group when frames
# are compared (:func:`synonym_key`), so "Is a parent of two kids" and "Has two children" share "child".
_SYNONYMS = """
like, prefer, enjoy, love, fancy, fond
use, utilise, utilize, employ, rely
live, reside, stay, based
home, house, flat, apartment, place
child, children, kid, son, daughter
partner, spouse, husband, wife, boyfriend, girlfriend
job, work, role, position, employment
office, workplace
car, vehicle, auto
phone, smartphone, mobile
doctor, physician, gp
physiotherapist, physio
manager, boss, supervisor, lead, head
colleague, coworker, teammate
meeting, call, sync
begin, start, kick off
finish, end, complete
ship, release, deploy, launch
host, run, serve
store, keep, save, hold
buy, purchase, get
talk, speak, chat
big, large, huge
small, little, tiny
quick, fast, rapid
every, each, per
under, beneath, below
near, close, next
often, frequently, regularly, usually
want, wish, need, require
pick, choose, select
show, display
fix, repair, patch
error, bug, fault, defect
food, dish, meal, cuisine
drink, beverage
hot, spicy
trip, journey, travel, holiday, vacation
week, weekly
month, monthly
day, daily
year, yearly, annual, annually
""".strip().splitlines()

SYNONYMS: dict[str, str] = {
    word_key(word.strip()): word_key(line.split(",")[0].strip()) for line in _SYNONYMS for word in line.split(",")
}
"""Word key -> the key of its group's first word."""


def synonym_key(word: str) -> str:
    """The key a frame word is compared by: its :func:`word_key`, or its synonym group's ("kids" -> "child")."""
    key = word_key(word)
    return SYNONYMS.get(key, key)
