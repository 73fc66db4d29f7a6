"""Elasticsearch's standard analyzer: UAX #29 words, lower-cased, no stop words, no stemming."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.errors import InputError
from factscout.retrieve.standard_analyzer import MAX_TOKEN_LENGTH, standard_analyze, standard_tokens


def test_keeps_stop_words_and_does_not_stem():
    assert standard_tokens("the runners") == ["the", "runners"]
    assert standard_tokens("Is it running?") == ["is", "it", "running"]


def test_elasticsearch_reference_example():
    # the example of Elasticsearch's "Standard analyzer" reference page, with its documented output
    text = "The 2 QUICK Brown-Foxes jumped over the lazy dog's bone."
    assert standard_tokens(text) == [
        "the",
        "2",
        "quick",
        "brown",
        "foxes",
        "jumped",
        "over",
        "the",
        "lazy",
        "dog's",
        "bone",
    ]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("U.S.A. e.g.", ["u.s.a", "e.g"]),  # letters joined by "." stay one word (UAX #29 WB6/WB7)
        ("3.14 and 1,000", ["3.14", "and", "1,000"]),  # numbers keep their separators (WB11/WB12)
        ("covid-19 x/y", ["covid", "19", "x", "y"]),  # hyphen and slash split
        ("foo_bar I a", ["foo_bar", "i", "a"]),  # underscore joins; one-letter words are kept
        ("5.6x10^3 mg/kg", ["5.6x10", "3", "mg", "kg"]),
        ("日本語 カタカナ", ["日", "本", "語", "カタカナ"]),  # one Han character per token; Katakana runs
        ("-- !! ...", []),  # punctuation alone is no token
        ("", []),
    ],
)
def test_unicode_word_segmentation(text, tokens):
    assert standard_tokens(text) == tokens


def test_lowercases_code_point_by_code_point_like_lucene():
    # Java's Character.toLowerCase: no final sigma, and the dotted capital I is a plain i
    assert standard_tokens("ΟΔΟΣ İstanbul") == ["οδοσ", "istanbul"]


def test_long_words_are_cut_at_max_token_length():
    word = "a" * (MAX_TOKEN_LENGTH + 10)
    assert standard_tokens(word) == ["a" * MAX_TOKEN_LENGTH, "a" * 10]
    assert standard_tokens("abcdef", max_token_length=4) == ["abcd", "ef"]


def test_bad_input_is_rejected():
    with pytest.raises(InputError, match="takes text"):
        standard_tokens(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="max_token_length"):
        standard_tokens("x", max_token_length=0)


def test_analyze_keeps_order():
    assert standard_analyze(["B a", "", "c"]) == [["b", "a"], [], ["c"]]


@given(st.text(max_size=200))
def test_tokens_are_lowercase_nonempty_words_of_the_text(text):
    tokens = standard_tokens(text)
    lowered = text.replace("Σ", "σ").replace("İ", "i").lower()
    for token in tokens:
        assert token and token in lowered
        assert token == token.lower()
        assert not any(ch.isspace() for ch in token)
