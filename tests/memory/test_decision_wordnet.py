"""WordNet's synonyms, hypernyms and antonyms in the write-time decision's features: read from the shipped lexicon
(lazily, once), first senses only, and the lexicon is what benchmarks/make_wordnet_lexicon.py writes."""

from __future__ import annotations

import gzip
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from mem0_hygiene.memory import decision_wordnet as wordnet
from mem0_hygiene.memory.decision_features import opposite, pair_features
from mem0_hygiene.memory.decision_lexicon import word_key

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "mem0_hygiene" / "memory" / "data"
WORDNET = Path("/usr/share/wordnet")


def k(word: str) -> str:
    return word_key(word)


def test_words_sharing_a_first_sense_are_synonyms_and_a_direct_hypernym_counts_when_asked():
    assert wordnet.synonyms(k("preparing"), k("cooking"))
    assert wordnet.synonyms(k("kids"), k("children"))
    assert not wordnet.synonyms(k("slicing"), k("cutting"))  # "slice" is a kind of "cut", not the same sense
    assert wordnet.synonyms(k("slicing"), k("cutting"), hypernyms=1)
    assert wordnet.synonyms(k("lady"), k("woman"), hypernyms=1)
    assert not wordnet.synonyms(k("walking"), k("running"), hypernyms=1)
    assert not wordnet.synonyms(k("dog"), k("animal"), hypernyms=1)  # two levels up: not joined
    assert not wordnet.synonyms(k("zzyzx"), k("zzyzx"))  # a word the lexicon lacks matches nothing


def test_antonyms_of_verbs_and_adjectives_with_similar_adjectives_but_not_of_nouns():
    assert wordnet.antonyms(k("sitting"), k("standing"))
    assert wordnet.antonyms(k("near"), k("far"))
    assert wordnet.antonyms(k("huge"), k("tiny"))  # satellites of "large" and "small"
    assert not wordnet.antonyms(k("man"), k("woman"))  # another subject, not an opposite predicate
    assert not wordnet.antonyms(k("sitting"), k("walking"))


def test_a_one_word_paraphrase_keeps_the_frame_and_swaps_no_word():
    f = pair_features("A woman is slicing potatoes", "A woman is cutting potatoes")
    assert f.frame_overlap == 1.0 and f.word_overlap == 1.0 and f.bigram_overlap == 1.0
    assert f.swapped is None
    # a word WordNet does not join stays a swapped word
    g = pair_features("A woman is peeling potatoes", "A woman is cutting potatoes")
    assert g.frame_overlap < 1.0 and g.swapped == "words"


def test_wordnet_antonyms_outside_the_hand_lexicon_are_opposite_predicates():
    assert opposite("A boy is standing on a swing", "A boy is sitting on a swing")
    assert opposite("A crowd is far from the water", "A crowd is near the water")
    assert not opposite("A woman is standing", "A man is standing")


def test_the_lexicon_is_read_on_first_use_not_on_import():
    code = (
        "from mem0_hygiene.memory import decision, decision_wordnet as w; "
        "assert w.lexicon.cache_info().currsize == 0; "
        "decision.classify(0.9, 'A man sits', 'A man stands', decision.EMBEDDER_DEFAULTS['all-MiniLM-L6-v2']); "
        "decision.classify(0.9, 'A man runs', 'A man walks', decision.EMBEDDER_DEFAULTS['all-MiniLM-L6-v2']); "
        "info = w.lexicon.cache_info(); assert (info.misses, info.currsize) == (1, 1), info"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_package_ships_the_lexicon_with_wordnets_licence():
    licence = (DATA / "WORDNET_LICENSE").read_text(encoding="utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in licence
    assert 'PROVIDED "AS IS"' in licence
    text = gzip.decompress((DATA / wordnet.LEXICON).read_bytes()).decode("utf-8")
    assert text.startswith("# The write-time decision's WordNet lexicon") and "WORDNET_LICENSE" in text
    assert (DATA / wordnet.LEXICON).stat().st_size < 300_000
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"mem0_hygiene.memory" = ["data/wordnet_lexicon.txt.gz", "data/WORDNET_LICENSE"]' in pyproject


@pytest.mark.skipif(
    not (WORDNET / "data.noun").exists(),
    reason="WordNet 3.0 not installed (Debian: apt-get install wordnet-base); the shipped lexicon "
    "cannot be rebuilt here",
)
def test_the_shipped_lexicon_is_what_the_script_writes_from_wordnet():
    spec = importlib.util.spec_from_file_location(
        "make_wordnet_lexicon", ROOT / "benchmarks" / "make_wordnet_lexicon.py"
    )
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shipped = gzip.decompress((DATA / wordnet.LEXICON).read_bytes()).decode("utf-8")
    assert script.build(WORDNET) == shipped
