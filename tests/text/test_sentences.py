"""The regex sentence splitter: hand-checked splits, only whitespace dropped, offsets that give
the sentences back."""

from __future__ import annotations

import itertools
import re

import pytest
from helpers import TEXTS
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.text.sentences import _last_word, sentence_spans, sentences_of


def test_sentences_of_splits_on_punctuation_and_line_breaks():
    text = 'Dr. Smith said "no." Then he left! Did he? Yes.\nHeading without stop\nU.S. officials met e.g. at 3 p.m. today.'
    assert sentences_of(text) == [
        'Dr. Smith said "no."',
        "Then he left!",
        "Did he?",
        "Yes.",
        "Heading without stop",
        "U.S. officials met e.g. at 3 p.m. today.",
    ]


def test_sentences_of_keeps_initials_and_numbers_together():
    assert sentences_of("J. K. Rowling wrote it in 1997. Sales rose 3.5 percent.") == [
        "J. K. Rowling wrote it in 1997.",
        "Sales rose 3.5 percent.",
    ]
    assert sentences_of("") == []
    assert sentences_of("  \n ") == []


@given(st.text())
def test_sentences_of_drops_only_whitespace(text):
    sentences = sentences_of(text)
    assert all(s and s == s.strip() for s in sentences)
    assert re.sub(r"\s+", "", "".join(sentences)) == re.sub(r"\s+", "", text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ.. 1é-", max_size=40), st.integers(min_value=0, max_value=40))
def test_last_word_is_what_the_regex_finds(text, end):  # blocks have no line break: the splitter cut there
    end = min(end, len(text))
    found = re.search(r"([A-Za-z][A-Za-z.]*)$", text[:end])
    assert _last_word(text, end) == (found.group(1) if found else "")


@pytest.mark.parametrize("text", TEXTS)
def test_offsets_round_trip_to_the_passage_text(text):
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == sentences_of(text)
    assert all(a < b for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(spans))


_OLD_BOUNDARY = re.compile(r"""([.!?]+["'”’)\]]*)\s+(?=["'“‘(\[]?[A-Z0-9])""")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='.!?"” )aA1\n', max_size=60))
def test_boundary_matches_as_before_the_lookbehind(text):
    """The lookbehind only stops matches from starting inside a punctuation run: same boundaries."""
    from factscout.text.sentences import _BOUNDARY

    assert [m.span(1) for m in _BOUNDARY.finditer(text)] == [m.span(1) for m in _OLD_BOUNDARY.finditer(text)]


def test_regression_a_long_run_of_punctuation_splits_in_linear_time():
    """100,000 '!' with no sentence start after them took minutes (each start inside the run retried it)."""
    import time

    started = time.perf_counter()
    assert sentences_of("!" * 100_000) == ["!" * 100_000]
    assert sentences_of("." * 50_000 + " A") == ["." * 50_000, "A"]
    assert time.perf_counter() - started < 2.0
