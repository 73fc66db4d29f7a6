"""Sentence windows and passage splitting."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.datasets import sentence_windows, split_document, split_passages
from factscout.errors import InputError
from factscout.records import Passage

SEVEN = [f"S{i}." for i in range(7)]


def test_seven_sentences_window_3_stride_2():
    passages = split_document("d1", "Title", SEVEN, window=3, stride=2, published=dt.date(2020, 1, 2), url="u")
    assert [p.passage_id for p in passages] == ["d1#0", "d1#1", "d1#2"]
    assert [p.text for p in passages] == ["S0. S1. S2.", "S2. S3. S4.", "S4. S5. S6."]
    assert {(p.doc_id, p.title, p.published, p.url) for p in passages} == {("d1", "Title", dt.date(2020, 1, 2), "u")}


def test_last_window_may_be_shorter():
    assert sentence_windows(8, 3, 2) == [(0, 3), (2, 5), (4, 7), (6, 8)]
    assert sentence_windows(10, 5, 5) == [(0, 5), (5, 10)]
    assert sentence_windows(11, 5, 5) == [(0, 5), (5, 10), (10, 11)]


def test_short_document_is_one_passage_named_after_the_document():
    for n in (0, 1, 5):
        (passage,) = split_document("doc", "T", SEVEN[:n], window=5, stride=3)
        assert passage.passage_id == "doc" and passage.doc_id == "doc"
        assert passage.text == " ".join(SEVEN[:n])


def test_defaults_are_window_5_stride_3():
    assert [p.text for p in split_document("d", "", SEVEN)] == ["S0. S1. S2. S3. S4.", "S3. S4. S5. S6."]


@pytest.mark.parametrize(
    ("window", "stride", "message"),
    [
        (0, 1, "window"),
        (3, 0, "stride"),
        (3, 4, "stride"),
        (2.5, 1, "window"),
        (True, 1, "window"),
        (3, None, "stride"),
    ],
)
def test_bad_window_or_stride_is_an_input_error(window, stride, message):
    with pytest.raises(InputError, match=message):
        split_document("d", "", SEVEN, window=window, stride=stride)


def test_a_string_is_not_a_sentence_list():
    with pytest.raises(InputError, match="sequence of strings"):
        split_document("d", "", "One. Two.")


@given(
    n=st.integers(min_value=0, max_value=40),
    window=st.integers(min_value=1, max_value=12),
    data=st.data(),
)
def test_split_document_covers_every_sentence(n, window, data):
    stride = data.draw(st.integers(min_value=1, max_value=window))
    sentences = [f"s{i}x" for i in range(n)]
    passages = split_document("doc", "t", sentences, window=window, stride=stride)
    spans = sentence_windows(n, window, stride)
    assert len(passages) == len(spans)
    assert len({p.passage_id for p in passages}) == len(passages)
    covered = {w for p in passages for w in p.text.split()}
    assert covered == set(sentences)
    assert {i for a, b in spans for i in range(a, b)} == set(range(n))
    assert all(b - a <= window for a, b in spans)
    if n <= window:
        assert [p.passage_id for p in passages] == ["doc"]
    else:
        assert [p.passage_id for p in passages] == [f"doc#{i}" for i in range(len(passages))]


def test_split_passages_windows_long_passages_and_keeps_short_ones():
    short = Passage("p1", "d1", "T", "One sentence only.")
    long = Passage("p2", "d2", "T2", " ".join(SEVEN), dt.date(2021, 5, 1), "https://x")
    out = split_passages([short, long], window=3, stride=2)
    assert out[0] is short
    assert [p.passage_id for p in out[1:]] == ["p2#0", "p2#1", "p2#2"]
    assert all(p.doc_id == "d2" and p.published == dt.date(2021, 5, 1) and p.url == "https://x" for p in out[1:])
    with pytest.raises(InputError):
        split_passages([short], window=2, stride=3)
