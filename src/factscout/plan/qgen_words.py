"""qgen's view of words: Lucene's English stop words plus question words (what the BM25 index
drops), Snowball stems, and the normal form used to match claim texts."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Token

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w\w+")
# Lucene's English stop words (what the BM25 index drops) and question words
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "has",
        "have",
        "had",
        "been",
        "were",
        "can",
        "could",
        "would",
        "should",
        "may",
        "might",
    ]
)


_STEMMER: Any = None


def _stem(word: str) -> str:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Lower-cased, stemmed words of ``text`` without stop and question words (BM25's view)."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def token_stem(t: Token) -> str | None:
    """The stem of the token's first content word, as :func:`stems` makes it (``None``: none)."""
    words = [w for w in _WORD.findall(t.lower_) if w not in _STOP]
    return _stem(words[0]) if words else None


def normal_text(text: str) -> str:
    """The lower-cased words of ``text`` joined by spaces: one key for claims that differ only in
    case and punctuation."""
    return " ".join(_WORD.findall(text.lower()))
