"""Guards over the write-time decision that hold for any wording, applied after the model or the threshold rules
(:func:`guard`): a fact is never dropped or hidden on a likeness alone.

- **A duplicate** drops the new memory, so it is only kept when nothing that carries meaning differs: no negation or
  opposite (then it is judged as a contradiction), the values
  (numbers, quantities with their units, times, days, dates, versions, ordinal and spelled numbers, names and
  places, each normalised first: :func:`values`) and the subject words (:func:`subject_contrast`: "daughter" /
  "son", "front" / "back", "staging" / "production"; :func:`other_subject`: a possessor or a person only one text
  names, "Their brother's bank is ING" / "Their bank is ING", "Their sister lives in Valencia" / "Is based in
  Valencia"). A changed value makes it an update; another subject, an add.
- **A contradiction** hides the old memory, so it needs explicit evidence (:func:`evidence`: a negation, a
  retraction, an event that ends a fact, an opposite predicate said of the same subject) about the same frame (no
  other subject, no value swapped for another, no opposite said beside a word each text has and the other lacks:
  "The shared calendar is required" / "The main repository is optional").
- **An update** is never made across subjects, nor from one value to another in another frame without a verb of
  change ("Grew up in Glasgow" does not update "Lives in Manchester").

A decision a guard takes back becomes an add, and the pair a *possible conflict* (:class:`Guarded.conflict`)
for a person or the agent to settle (see :mod:`mem0_hygiene.memory.conflicts`).

Plain string work and look-ups in the shipped word lists, as :mod:`.decision_features`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import decision_wordnet as wordnet
from .decision_features import (
    change_cue,
    content,
    negated,
    negates,
    opposite_words,
    pair_features,
    tokens,
)
from .decision_lexicon import synonym_key, word_key

DUPLICATE, UPDATE, CONTRADICTION, UNRELATED = "duplicate", "update", "contradiction", "unrelated"

# -- values -------------------------------------------------------------------------------------------------
_ONES = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * n for n, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"
}
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "twentieth": 20,
    "thirtieth": 30,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "k": 1000, "m": 1_000_000}
_SPECIAL = {"dozen": 12, "half": 0.5, "twice": 2, "once": 1, "double": 2, "couple": 2, "pair": 2}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_KEYS = (
    {d: d for d in _DAYS}
    | {d + "s": d for d in _DAYS}
    | {"tue": "tuesday", "tues": "tuesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday"}
)
_MONTHS = (
    {
        m: i + 1
        for i, m in enumerate(
            "january february march april may june july august september october november december".split()
        )
    }
    | {m: i + 1 for i, m in enumerate("jan feb mar apr _ jun jul aug sep oct nov dec".split()) if m != "_"}
    | {"sept": 9}
)
_UNITS = {
    "eur": "eur",
    "euro": "eur",
    "euros": "eur",
    "€": "eur",
    "usd": "usd",
    "dollar": "usd",
    "dollars": "usd",
    "$": "usd",
    "bucks": "usd",
    "gbp": "gbp",
    "£": "gbp",
    "quid": "gbp",
    "sterling": "gbp",
    "chf": "chf",
    "francs": "chf",
    "jpy": "jpy",
    "yen": "jpy",
    "¥": "jpy",
    "ils": "ils",
    "shekel": "ils",
    "shekels": "ils",
    "₪": "ils",
    "inr": "inr",
    "rupees": "inr",
    "₹": "inr",
    "km": "km",
    "kms": "km",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "m": "m",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "cm": "cm",
    "centimetres": "cm",
    "centimeters": "cm",
    "mm": "mm",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "kg": "kg",
    "kgs": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "lb": "lb",
    "lbs": "lb",
    "l": "l",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "ml": "ml",
    "gb": "gb",
    "gigabytes": "gb",
    "mb": "mb",
    "megabytes": "mb",
    "tb": "tb",
    "terabytes": "tb",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "day": "d",
    "days": "d",
    "week": "w",
    "weeks": "w",
    "month": "mo",
    "months": "mo",
    "year": "y",
    "years": "y",
    "yr": "y",
    "yrs": "y",
    "%": "%",
    "percent": "%",
    "pct": "%",
    "°c": "c",
    "celsius": "c",
    "°f": "f",
    "fahrenheit": "f",
}
_CURRENCY_SIGNS = "€$£¥₪₹"

_TIME_RE = re.compile(
    r"\b(?P<h>[01]?\d|2[0-3])(?:[:.](?P<m>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?![a-z])"
    r"|\b(?P<h2>[01]?\d|2[0-3]):(?P<m2>[0-5]\d)\b",
    re.IGNORECASE,
)
_ISO_DATE_RE = re.compile(r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b")
_VERSION_RE = re.compile(
    r"(?<![\w.])v(?:ersion)?\s?(?P<v>\d+(?:\.\d+)*)\b|\b(?P<v2>\d+(?:\.\d+){1,3})\b", re.IGNORECASE
)
_NUMBER_RE = re.compile(
    r"(?P<pre>[€$£¥₪₹])?\s?(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<suf>st|nd|rd|th)?\s?"
    r"(?P<scale>k\b|m\b|thousand\b|million\b)?\s?(?P<unit>[€$£¥₪₹%]|°[cf]\b|[a-z]+\b)?",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[a-z]+", re.IGNORECASE)


def _num(text: str) -> str:
    """A number's one spelling: "1,450" -> "1450", "1450.00" -> "1450", "2.5" -> "2.5"."""
    value = float(text.replace(",", ""))
    return str(int(value)) if value == int(value) else f"{value:g}"


def _spelled(words: list[str], i: int) -> tuple[float | None, int]:
    """A spelled number starting at ``words[i]`` ("twenty five", "twenty-five", "a dozen", "third"), and how many
    words it takes; (None, 0) when there is none."""
    w = words[i]
    if w in _ORDINALS:
        return float(_ORDINALS[w]), 1
    if w in _SPECIAL:
        return float(_SPECIAL[w]), 1
    total, used = None, 0
    if w in _TENS:
        total, used = float(_TENS[w]), 1
        if i + 1 < len(words) and words[i + 1] in _ONES and _ONES[words[i + 1]] < 10:
            total, used = total + _ONES[words[i + 1]], 2
    elif w in _ONES:
        total, used = float(_ONES[w]), 1
    if total is not None and i + used < len(words) and words[i + used] in _SCALES and words[i + used] not in "km":
        total, used = total * _SCALES[words[i + used]], used + 1
    return total, used


@lru_cache(maxsize=8192)
def values(text: str) -> frozenset[str]:
    """What carries a value in a text, each normalised to one spelling, so a reformatted value compares equal and a
    changed one never does: times ("07:30", "7:30 am" -> "time:07:30"; "7 pm" -> "time:19:00"), days ("Mondays", "every
    Monday" -> "day:monday"), dates ("March 3", "3rd of March", "2026-03-03" -> "date:3-3", the year apart),
    quantities and currencies ("1,450 EUR", "€1450", "1450 euros" -> "1450 eur"; "5 kilometres" -> "5 km"),
    versions ("v3.2", "version 3.2" -> "3.2"), ordinal and spelled numbers ("third", "3rd", "three" -> "3";
    "twenty-five" -> "25"), and names and places (capitalised inside a sentence, lower-cased)."""
    out: set[str] = set()
    rest = re.sub(r"\bevery other\b", "every 2nd", text, flags=re.IGNORECASE)
    for m in _TIME_RE.finditer(rest):
        if m.group("h2") is not None:
            hour, minute = int(m.group("h2")), int(m.group("m2"))
        else:
            hour, minute = int(m.group("h")) % 12, int(m.group("m") or 0)
            if m.group("ap").lower().startswith("p"):
                hour += 12
        out.add(f"time:{hour:02d}:{minute:02d}")
    rest = _TIME_RE.sub(" ", rest)
    for word, at in (("noon", "time:12:00"), ("midday", "time:12:00"), ("midnight", "time:00:00")):
        if re.search(rf"\b{word}\b", rest, re.IGNORECASE):
            out.add(at)
            rest = re.sub(rf"\b{word}\b", " ", rest, flags=re.IGNORECASE)
    for m in _ISO_DATE_RE.finditer(rest):
        out.update({f"date:{int(m.group('mo'))}-{int(m.group('d'))}", m.group("y")})
    rest = _ISO_DATE_RE.sub(" ", rest)
    words = [w.lower() for w in _WORD_RE.findall(rest.replace("-", " "))]
    for w in words:  # month and day: "March 3", "3 March", "3rd of March"
        if w in _MONTHS and (w != "may" or _near_number(rest, w)):
            day = _day_beside(rest, w)
            out.add(f"date:{_MONTHS[w]}-{day}" if day else f"month:{_MONTHS[w]}")
        elif w in _DAY_KEYS:
            out.add(f"day:{_DAY_KEYS[w]}")
    for m in _VERSION_RE.finditer(rest):
        v = m.group("v") or m.group("v2")
        if m.group("v") or not re.search(r",\d{3}", m.group(0)):
            out.add(v)
    for m in _NUMBER_RE.finditer(rest):
        if len(m.group("n")) <= 2 and _is_date_day(rest, m):
            continue
        n = float(m.group("n").replace(",", ""))
        scale = (m.group("scale") or "").lower()
        if scale:
            n *= _SCALES[scale]
        unit = _UNITS.get((m.group("pre") or "").lower()) or _UNITS.get((m.group("unit") or "").lower())
        out.add(f"{_num(str(n))} {unit}" if unit else _num(str(n)))
    i = 0
    while i < len(words):  # spelled and ordinal numbers, with the unit after them
        number, used = _spelled(words, i)
        if number is None:
            i += 1
            continue
        unit = _UNITS.get(words[i + used]) if i + used < len(words) else None
        out.add(f"{_num(str(number))} {unit}" if unit else _num(str(number)))
        i += used
    out.update(names(text))
    return frozenset(out)


def _near_number(text: str, month: str) -> bool:
    return re.search(rf"\b{month}\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?{month}\b", text, re.IGNORECASE) is not None


def _day_beside(text: str, month: str) -> int | None:
    m = re.search(
        rf"\b{month}\w*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b|\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
        rf"{month}",
        text,
        re.IGNORECASE,
    )
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


def _is_date_day(text: str, m: re.Match[str]) -> bool:
    """Whether a number is the day of a month name beside it (already read as a date)."""
    end = m.end("suf") if m.group("suf") else m.end("n")
    after = text[end : end + 14].lower().split()
    before = text[max(0, m.start() - 12) : m.start()].lower().split()
    month = set(_MONTHS)
    return bool(
        (after and after[0].strip(".,") in month)
        or (after[:1] == ["of"] and after[1:2] and after[1].strip(".,") in month)
        or (before and before[-1].strip(".,") in month)
    )


def names(text: str) -> frozenset[str]:
    """Names and places: the words capitalised inside a sentence, lower-cased (a name that opens a sentence is
    found by :func:`swapped_values` when the other text has it inside one)."""
    out = set()
    words = {_base(w) for w, _ in content(text)}
    for token, capital in tokens(text):
        word = _base(token)
        if (
            capital
            and word in words
            and "'" not in word
            and word not in _COMMON
            and word not in _UNITS
            and not any(c.isdigit() for c in word)
            and word_key(word) not in _DAY_KEYS
            and word not in _MONTHS
        ):
            out.add(word)
    return frozenset(out)


_COMMON = frozenset(
    """i we you they he she it my our your their his her its the a an this that these those there
here no not never now just also still always usually often every each our dana's""".split()
)

# -- subjects -----------------------------------------------------------------------------------------------
_CONTRASTS = (
    """
daughter | son | child kid | baby | twin | mother mom mum mommy mummy | father dad daddy | parent | sister | \
brother | sibling | wife | husband | partner spouse | girlfriend | boyfriend | fiance fiancee | grandmother grandma \
granny | grandfather grandpa | grandson | granddaughter | grandchild | aunt | uncle | niece | nephew | cousin | \
stepson | stepdaughter | stepmother | stepfather | friend | neighbour neighbor | roommate flatmate | colleague \
coworker | teammate
front | back rear | side
left | right
top upper | bottom lower
inner inside indoor | outer outside outdoor
upstairs | downstairs
north northern | south southern | east eastern | west western
staging stage | production prod live | development dev | test testing qa | sandbox | preview | local | canary
primary main | secondary backup
home personal private | work office business
laptop | desktop | phone mobile | tablet
cat | dog | bird | fish | rabbit | hamster
breakfast | lunch | dinner | supper | brunch
""".replace("\\\n", "")
    .strip()
    .splitlines()
)


def _groups() -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for line_no, line in enumerate(_CONTRASTS):
        for member_no, member in enumerate(line.split("|")):
            for word in member.split():
                out[word_key(word)] = (line_no, member_no)
    return out


_GROUP = _groups()
"""word key -> (contrast set, member): two words of one set and different members name different subjects."""


_VALUE_WORDS = (
    frozenset(_MONTHS)
    | frozenset(_DAY_KEYS)
    | frozenset(_UNITS)
    | frozenset(_ORDINALS)
    | frozenset(_ONES)
    | frozenset(_TENS)
    | frozenset(_SCALES)
    | frozenset(_SPECIAL)
    | {"every", "noon", "midday", "midnight"}
)


def _keys(text: str) -> frozenset[str]:
    """The subject words of a text: content words that are not values (:func:`values` compares those)."""
    return frozenset(
        word_key(w)
        for w, _ in content(text)
        if not any(c.isdigit() for c in w) and w not in _VALUE_WORDS and _base(w) not in _VALUE_WORDS
    )


def subject_contrast(
    new_text: str, old_text: str, *, wide: bool = False, leave: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    """A word of each text, the other text lacking it, that name different subjects of one kind: two members of a
    shipped contrast set ("daughter" / "son", "front" / "back", "staging" / "production"); with ``wide``, also the
    one word each text has in place of the other's, when WordNet puts the two side by side under one broader word
    (within two levels) and they are not synonyms ("tea" / "coffee"). Words in ``leave`` (their keys) are not
    compared. None when there is no such pair."""
    new, old = _keys(new_text) - leave, _keys(old_text) - leave
    new_only, old_only = sorted(new - old), sorted(old - new)
    for a in new_only:
        ga = _GROUP.get(a)
        for b in old_only:
            gb = _GROUP.get(b)
            if ga is not None and gb is not None and ga[0] == gb[0] and ga[1] != gb[1]:
                return a, b
    if not wide or len(new_only) != 1 or len(old_only) != 1:
        return None
    a, b = new_only[0], old_only[0]
    if synonym_key(a) == synonym_key(b) or a[:4] == b[:4] or (len(min(a, b, key=len)) <= 3 and a[0] == b[0]):
        return None  # one word in two forms: "physio" / "physiotherapist", "allergy" / "allergic", "db" / "database"
    if not wordnet.senses(a) and not wordnet.senses(b):
        return a, b  # two words WordNet's frequent words lack, one in place of the other: names ("Dana" / "Omar")
    if not wordnet.senses(a) or not wordnet.senses(b) or wordnet.synonyms(a, b, hypernyms=1):
        return None
    return (a, b) if wordnet.broader(a, 2) & wordnet.broader(b, 2) else None


_PEOPLE = 0
"""The contrast set of people (:data:`_CONTRASTS`' first line: kin, partners, friends, colleagues)."""


def other_subject(new_text: str, old_text: str) -> str | None:
    """Why one text is about another subject than the other, however alike the rest: a possessor one text puts
    before a word both texts have, and names more often than the other ("Their brother's bank" / "Their bank",
    "Their manager's manager" / "Their manager"), or a person one text names and the other names none of
    (:data:`_PEOPLE`: "Their sister lives in Valencia" / "Is based in Valencia", "My colleague speaks Portuguese" /
    "I speak Portuguese"; a synonym, or a word of the other text in another form, "partner" / "partnered", is the
    same person). None when both are about the same subject."""
    for one, other in ((new_text, old_text), (old_text, new_text)):
        mine, theirs = _key_counts(one), _key_counts(other)
        for owner in sorted(_possessors(one, frozenset(theirs))):
            if mine.get(owner, 0) > theirs.get(owner, 0):
                return f"{owner}'s"
        if any(_person(k) for k in theirs):
            continue
        for word in sorted(mine):
            if _person(word) and not any(k[:4] == word[:4] or synonym_key(k) == synonym_key(word) for k in theirs):
                return word
    return None


def _person(key: str) -> bool:
    return _GROUP.get(key, _GROUP.get(synonym_key(key), (-1, -1)))[0] == _PEOPLE


def _key_counts(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for w, _ in content(text):
        key = word_key(_base(w))
        out[key] = out.get(key, 0) + 1
    return out


def _possessors(text: str, owned: frozenset[str]) -> frozenset[str]:
    """The keys of a text's possessive words ("brother's", "neighbours'") put before a word whose key is in
    ``owned`` ("brother's bank"; not "a master's in statistics")."""
    words = [w for w, _ in tokens(text)]
    out = set()
    for i, w in enumerate(words[:-1]):
        if w.endswith("'s") and w not in _COMMON and word_key(words[i + 1]) in owned:
            out.add(word_key(w[:-2]))
    for m in re.finditer(r"\b(\w+s)['’]\s+(\w+)", text):
        if word_key(m.group(2)) in owned:
            out.add(word_key(m.group(1)))
    return frozenset(out)


# -- evidence -----------------------------------------------------------------------------------------------
_ENDED_RE = re.compile(
    r"\b(?:decommissioned|shut down|closed down|closed|shuttered|discontinued|retired|passed away|died|divorced|"
    r"broke up|split up|separated|moved out|left|resigned|was fired|got fired|laid off|ended|expired|cancell?ed|"
    r"sold|gave away|deleted|removed|uninstalled|deprecated|sunset|archived)\b",
    re.IGNORECASE,
)


def evidence(new_text: str, old_text: str) -> str | None:
    """Explicit evidence that the new text says the old one no longer holds, or None: a negation or retraction cue
        the old text lacks, a plain negation added or taken back, an event that ends a fact ("decommissioned", "passed
        away", "sold"), or opposite predicates ("enabled" / "disabled"; whether they are said of the same subject is
    for the caller to check, see :func:`subject_contrast`)."""
    cue = negates(new_text, old_text)
    if cue is not None:
        return f"cue {cue!r}"
    if negated(new_text) != negated(old_text):
        return "negation taken back" if negated(old_text) else "negation"
    ended = _ENDED_RE.search(new_text)
    if ended and not _ENDED_RE.search(old_text):
        return f"ended {ended.group(0).lower()!r}"
    opposed = opposite_words(new_text, old_text)
    if opposed:  # said of the same subject: the caller checks the rest (subject_contrast leaving these words)
        return "opposite " + "/".join(sorted(opposed))
    return None


def swapped_values(new_text: str, old_text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(values only the new text has, values only the old text has); a bare number on one side is the same value
    as that number with a unit on the other ("is 7" / "is seven years old")."""
    new, old = values(new_text), values(old_text)
    new_words, old_words = _words(new_text), _words(old_text)
    new |= {n for n in names(old_text) if n in new_words}  # a name opening one text, inside the other
    old |= {n for n in names(new_text) if n in old_words}
    added, dropped = new - old, old - new
    both = new | old
    # one value written more or less exactly: "is 7" / "7 years old", "before 12" / "before noon", "this December" /
    # "on 1 December"
    loose = {"month:" + v[5:].split("-")[0] for v in both if v.startswith("date:")}
    for v in both:
        hour = re.fullmatch(r"time:(\d\d):00", v)
        if hour is not None and {str(int(hour.group(1))), str(int(hour.group(1)) - 12)} & both:
            loose |= {v, str(int(hour.group(1))), str(int(hour.group(1)) - 12)}
        elif " " in v:
            loose.add(v.split(" ")[0])
            if v.split(" ")[0] in both:
                loose.add(v)
    return (frozenset(v for v in added if v not in loose), frozenset(v for v in dropped if v not in loose))


def _words(text: str) -> frozenset[str]:
    return frozenset(_base(w) for w, _ in tokens(text))


def _base(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


# -- the guard ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Guarded:
    """A decision after the guards.

    Fields:
        label: the label to apply.
        changed: why a guard changed the label (None: the decision stands).
        conflict: why the pair is a possible conflict to review (None: not one).
    """

    label: str
    changed: str | None = None
    conflict: str | None = None


def guard(label: str, new_text: str, old_text: str) -> Guarded:
    """Apply the guards (see the module docstring) to a decision ``label`` about a new text against an old one."""
    if label == DUPLICATE:
        return _duplicate(new_text, old_text)
    if label == CONTRADICTION:
        return _contradiction(new_text, old_text)
    if label == UPDATE:
        contrast = _contrast(new_text, old_text)
        if contrast is not None:
            why = f"another subject ({contrast})"
            return Guarded(UNRELATED, f"update not applied: {why}", f"update across subjects: {why}")
        added, dropped = swapped_values(new_text, old_text)
        if added and dropped and not _shared_frame(new_text, old_text) and not _changes(new_text, old_text):
            why = "other values in another frame, no verb of change"
            return Guarded(UNRELATED, f"update not applied: {why}", f"may update, {why}")
    return Guarded(label)


def _contrast(new_text: str, old_text: str) -> str | None:
    """Another subject by a contrast set (:func:`subject_contrast`, "daughter / son") or by a possessor or a person
    only one text names (:func:`other_subject`), said as "daughter / son" or "brother's"; None when neither."""
    pair = subject_contrast(new_text, old_text)
    return f"{pair[0]} / {pair[1]}" if pair is not None else other_subject(new_text, old_text)


def _shared_frame(new_text: str, old_text: str) -> bool:
    """Whether the two texts share a subject word, synonyms joined."""
    new = {synonym_key(w) for w in _keys(new_text)}
    old = {synonym_key(w) for w in _keys(old_text)}
    return bool(new & old) or any(wordnet.synonyms(a, b, hypernyms=1) for a in new for b in old)


_GREW_UP_RE = re.compile(r"\bgr[eo]w(?:n|s|ing)?\s+up\b", re.IGNORECASE)


def _changes(new_text: str, old_text: str) -> bool:
    """A verb of change in the new text and not in the old one ("moved to", "switched", "now"); "grew up" is a
    childhood, not a change."""
    return change_cue(_GREW_UP_RE.sub(" ", new_text)) and not change_cue(old_text)


def _duplicate(new_text: str, old_text: str) -> Guarded:
    if _same_text(new_text, old_text):
        return Guarded(DUPLICATE)
    contrast = _contrast(new_text, old_text)  # "front" / "back": other subjects, even when opposites
    if contrast is not None:
        why = f"another subject ({contrast})"
        return Guarded(UNRELATED, f"duplicate not applied: {why}", f"alike, about another subject: {why}")
    said = evidence(new_text, old_text)
    if said is not None:  # a negation or an opposite carries meaning: judged as a contradiction would be
        decided = _contradiction(new_text, old_text)
        return Guarded(
            decided.label,
            f"duplicate not applied: {said}" + (f"; {decided.changed}" if decided.changed else ""),
            decided.conflict,
        )
    wide = subject_contrast(new_text, old_text, wide=True)
    if wide is not None:
        why = f"another subject ({wide[0]} / {wide[1]})"
        return Guarded(UNRELATED, f"duplicate not applied: {why}", f"alike, about another subject: {why}")
    added, dropped = swapped_values(new_text, old_text)
    if added or dropped:
        why = (
            "values differ ("
            + ", ".join(sorted(added))
            + (" / " if added and dropped else "")
            + ", ".join(sorted(dropped))
            + ")"
        )
        return Guarded(UPDATE, f"duplicate not applied: {why}")
    return Guarded(DUPLICATE)


def _contradiction(new_text: str, old_text: str) -> Guarded:
    why = evidence(new_text, old_text)
    if why is None:
        return Guarded(
            UNRELATED,
            "contradiction not applied: no explicit negation, retraction or opposite",
            "may contradict, without explicit evidence",
        )
    opposed = frozenset(word_key(w) for w in opposite_words(new_text, old_text))
    if why.startswith("opposite ") and pair_features(new_text, old_text).opposite_beside:
        said = "said of another subject or object (a word beside it differs in each text)"
        return Guarded(UNRELATED, f"contradiction not applied: {why} {said}", f"{why}, {said}")
    contrast = _contrast(new_text, old_text)
    wide = None if contrast is not None else subject_contrast(new_text, old_text, wide=True, leave=opposed)
    if contrast is not None or wide is not None:
        said = f"another subject ({contrast or ' / '.join(wide or ())})"
        return Guarded(UNRELATED, f"contradiction not applied: {said}", f"{why}, of {said}")
    added, dropped = swapped_values(new_text, old_text)
    if added and dropped:
        said = "other values (" + ", ".join(sorted(added)) + " / " + ", ".join(sorted(dropped)) + ")"
        return Guarded(UNRELATED, f"contradiction not applied: {said}", f"{why}, about {said}")
    return Guarded(CONTRADICTION)


_PUNCT_RE = re.compile(r"[^\w\s]+", re.UNICODE)


def _same_text(a: str, b: str) -> bool:
    return " ".join(_PUNCT_RE.sub(" ", a.lower()).split()) == " ".join(_PUNCT_RE.sub(" ", b.lower()).split())
