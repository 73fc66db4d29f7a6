"""Elasticsearch's ``standard`` analyzer: UAX #29 word segmentation, lower-casing, nothing else.

This is the analysis a default Elasticsearch (and OpenSearch, Solr's ``text_general`` minus its
stop filter) index applies to a text field: Lucene's ``StandardTokenizer`` followed by
``LowerCaseFilter``. There is no stop-word removal and no stemming, so "the runners" is
``["the", "runners"]``.

``StandardTokenizer`` implements the word boundaries of Unicode Standard Annex #29 (Unicode Text
Segmentation) and keeps the segments that are words: letters and digits (``don't``, ``U.S.A``,
``3.14``, ``1,000``, ``foo_bar`` stay whole; ``covid-19`` is ``covid`` + ``19``), each Han or
Hiragana character alone, Katakana and Hangul runs, emoji. Segments of punctuation, symbols and
space are dropped. Thai, Lao, Khmer and Myanmar text (line-break class Complex_Context, written
without spaces, where UAX #29 breaks after every character) is one token per run, as Lucene's
grammar emits it. Here the boundaries come from the ``regex`` package's default Unicode word
boundaries (its ``WORD`` flag implements UAX #29). Words longer than ``max_token_length`` (255)
are cut into pieces of that length, as the tokenizer does. The short examples of Lucene's own
``TestStandardAnalyzer`` are unit tests (tests/retrieve/test_standard_analyzer.py).

``LowerCaseFilter`` lower-cases each code point on its own (Java's ``Character.toLowerCase``):
unlike Python's ``str.lower`` it never applies the final-sigma rule and maps ``İ`` to ``i``;
:func:`standard_analyze` follows Lucene there.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from factscout.errors import InputError, MissingDependency

MAX_TOKEN_LENGTH = 255  # StandardTokenizer's and Elasticsearch's default max_token_length

# Lucene lower-cases code point by code point (simple case mapping): "Σ" is always "σ" (Python's
# str.lower writes "ς" at a word end) and "İ" is "i" (Python: "i" + combining dot)
_JAVA_LOWER = str.maketrans({"\u03a3": "\u03c3", "\u0130": "i"})


@lru_cache(maxsize=1)
def _patterns() -> tuple[Any, Any, Any]:
    try:
        import regex
    except ImportError:
        raise MissingDependency("the standard analyzer needs the 'regex' package: pip install regex") from None
    # (?w): \b is the default Unicode (UAX #29) word boundary; V1: zero-width splits are allowed
    boundary = regex.compile(r"(?wV1)\b")
    word = regex.compile(r"[\p{L}\p{N}\p{Extended_Pictographic}]")
    # a run of Southeast Asian letters (with their combining marks) is one token; split() keeps it
    southeast_asian = regex.compile(
        r"(\p{Line_Break=Complex_Context}"
        r"[\p{Line_Break=Complex_Context}\p{Word_Break=Extend}\p{Word_Break=Format}\p{Word_Break=ZWJ}]*)"
    )
    return boundary, word, southeast_asian


def standard_tokens(text: str, max_token_length: int = MAX_TOKEN_LENGTH) -> list[str]:
    """The tokens of one text under Elasticsearch's ``standard`` analyzer."""
    if not isinstance(text, str):
        raise InputError(f"the standard analyzer takes text (str), got {type(text).__name__}")
    if max_token_length < 1:
        raise InputError(f"max_token_length must be >= 1, got {max_token_length}")
    boundary, word, southeast_asian = _patterns()
    tokens: list[str] = []
    # split() with a group alternates: text outside Southeast Asian runs, a run, outside, ...
    for i, part in enumerate(southeast_asian.split(text.translate(_JAVA_LOWER).lower())):
        for segment in [part] if i % 2 else boundary.split(part):
            if segment and word.search(segment) is not None:
                if len(segment) <= max_token_length:
                    tokens.append(segment)
                else:
                    tokens += [segment[j : j + max_token_length] for j in range(0, len(segment), max_token_length)]
    return tokens


def standard_analyze(texts: Sequence[str], max_token_length: int = MAX_TOKEN_LENGTH) -> list[list[str]]:
    """:func:`standard_tokens` of each text, in order."""
    return [standard_tokens(t, max_token_length) for t in texts]
