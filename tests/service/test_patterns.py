"""The schema's text and day patterns say what the server accepts: a text matches
``text_pattern`` exactly when :func:`clean_text` accepts it, read by Python's ``re`` and by the
Rust engine that schemathesis validates with."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factscout.inputs import clean_text
from factscout.serve.patterns import DAY_PATTERN, text_pattern

jsonschema_rs = pytest.importorskip("jsonschema_rs")

MAX = 2_000


def _accepted(text: str, max_chars: int = MAX) -> bool:
    try:
        clean_text(text, max_chars)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def matchers():
    pattern = text_pattern(MAX)
    python = re.compile(pattern.removesuffix("$") + r"\Z")  # `$` is the end of the string in JSON Schema
    rust = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    return lambda text: (bool(python.match(text)), rust.is_valid(text))


EXAMPLES = [
    ("Vitamin D prevents falls.", True),
    ("  tab\tand\nnew line \u200b", True),
    ("emoji 👩\u200d🔬", True),
    ("e\u0301", True),
    ("x" * MAX, True),
    ("\u200b" * 30 + "x" * MAX + " \ufeff", True),  # trimmed to 2,000
    ("a" + " " * (MAX - 2) + "b", True),
    ("a" + " " * (MAX - 1) + "b", False),  # 2,001 between the first and the last visible character
    ("x" * (MAX + 1), False),
    ("", False),
    ("\u200b\u200c\u200d\ufeff\u2060", False),  # invisible only
    (" \u3164\u00a0\u2800 ", False),
    ("\u0301", False),
    ("fol\x00ate", False),
    ("folate\x1b[31m", False),
    ("folate\x85", False),
    ("\U000e0001tag", True),  # a format character before a visible one is trimmed
]


@pytest.mark.parametrize(("text", "accepted"), EXAMPLES)
def test_pattern_agrees_with_clean_text_on_examples(matchers, text, accepted):
    assert _accepted(text) is accepted
    assert matchers(text) == (accepted, accepted)


_PIECES = st.sampled_from(["a", "Z", " ", "\t", "\n", "\u200b", "\u0301", "\x00", "\x85", "\u3164", "é", "😀"])
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12) | st.lists(_PIECES, max_size=10).map("".join)


@settings(max_examples=300, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXT)
def test_pattern_agrees_with_clean_text(matchers, text):
    accepted = _accepted(text)
    assert matchers(text) == (accepted, accepted), text


def test_a_short_limit():
    pattern = re.compile(text_pattern(3).removesuffix("$") + r"\Z")
    assert [bool(pattern.match(t)) for t in ["abc", " abc\u200b", "abcd", "a"]] == [True, True, False, True]
    with pytest.raises(ValueError, match="max_chars must be >= 2"):
        text_pattern(1)


@pytest.mark.parametrize(
    ("day", "valid"),
    [("2019-06-01", True), ("0001-01-01", True), ("0000-01-01", False), ("2019-W01-1", False), ("20190601", False)],
)
def test_day_pattern_leaves_out_what_python_cannot_read(day, valid):
    assert bool(re.fullmatch(DAY_PATTERN.strip("^$"), day)) is valid
    if valid:
        assert dt.date.fromisoformat(day)
