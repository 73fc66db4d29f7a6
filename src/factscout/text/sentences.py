"""The project's one sentence splitter: a light regex splitter for plain text, and the
character offsets of the sentences it finds.

``sentences_of`` needs no model: line breaks always split, and sentence-final punctuation
followed by whitespace and a plausible sentence start splits unless the full stop closes a known
abbreviation or an initial. It only ever drops whitespace, which is what lets
``sentence_spans`` give every sentence as ``[start, end)`` offsets into the text. Datasets that
ship sentence lists (SciFact abstracts) keep those lists; everything that splits plain text
(passage windows, sentence selection, the index's stored sentences, the page) splits here.
"""

from __future__ import annotations

import re

from factscout.errors import InputError

# Words that end with a full stop without ending the sentence (compared lower-cased, no final dot).
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "al", "approx", "ca", "cf"}
    | {"inc", "ltd", "co", "corp", "gov", "sen", "rep", "gen", "col", "lt", "sgt", "capt", "est", "dept", "univ"}
    | {"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
    | {"u.s", "u.k", "u.n", "ph.d"}
)
# Abbreviations only when a number follows ("No. 5", "Fig. 2"); "he said no. Then" still splits.
_NUMBER_ABBREVIATIONS = frozenset({"no", "nos", "fig", "figs", "vol", "eq", "sec", "art", "ch", "pp"})
# Sentence-final punctuation (and closing quotes/brackets), whitespace, then a plausible sentence start.
# A match starts only where a run of punctuation starts (the lookbehind): tried from inside the run as
# well, a long run with no sentence start after it ("!!!...") cost time quadratic in its length.
_BOUNDARY = re.compile(r"""(?<![.!?])([.!?]+["'”’)\]]*)\s+(?=["'“‘(\[]?[A-Z0-9])""")
_LINE_BREAK = re.compile(r"[\r\n]+")


def _last_word(text: str, end: int) -> str:
    """The last word of ``text[:end]``: what ``re.search(r"[A-Za-z][A-Za-z.]*$", text[:end])``
    finds (ASCII letters and full stops, from a letter on; "" when there is none), by walking back
    from ``end``: the regex search cost O(len(text)) per sentence boundary, most of the time of
    splitting a corpus."""
    start = end
    while start and (text[start - 1] == "." or (text[start - 1].isascii() and text[start - 1].isalpha())):
        start -= 1
    return text[start:end].lstrip(".")


def _is_abbreviation(block: str, boundary: re.Match[str]) -> bool:
    """Whether the full stop opening ``boundary`` closes an abbreviation or an initial, not a sentence."""
    end = boundary.start(1)
    if block[end] != "." or boundary.end(1) != end + 1:
        return False
    word = _last_word(block, end)
    if not word:
        return False
    token = word.lower().rstrip(".")
    if len(token) == 1 or token in _ABBREVIATIONS:
        return True
    return token in _NUMBER_ABBREVIATIONS and block[boundary.end() : boundary.end() + 1].isdigit()


def sentences_of(text: str) -> list[str]:
    """Split plain text into sentences with a regex (no model): line breaks always split, and
    ``.``/``!``/``?`` followed by whitespace and an upper-case letter, digit or opening quote split
    unless the full stop ends a known abbreviation (``Dr.``, ``U.S.``, ``e.g.``) or an initial.

    Only whitespace is ever dropped: the sentences, concatenated, give back the text's
    non-whitespace characters in order.
    """
    if not isinstance(text, str):
        raise InputError(f"sentences_of expects a string, got {type(text).__name__}")
    out: list[str] = []
    for block in _LINE_BREAK.split(text):
        start = 0
        for m in _BOUNDARY.finditer(block):
            if _is_abbreviation(block, m):
                continue
            piece = block[start : m.end(1)].strip()
            if piece:
                out.append(piece)
            start = m.end()
        tail = block[start:].strip()
        if tail:
            out.append(tail)
    return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` character offsets in ``text`` of each sentence of :func:`sentences_of`
    (which only drops whitespace, so every sentence is found in order): ``text[start:end]`` gives
    the sentence back."""
    spans, pos = [], 0
    for sentence in sentences_of(text):
        start = text.find(sentence, pos)
        if start < 0:  # cannot happen while sentences_of only strips whitespace; never silent
            raise InputError(f"sentence {sentence[:40]!r} is not a substring of its passage")
        pos = start + len(sentence)
        spans.append((start, pos))
    return spans


__all__ = ["sentence_spans", "sentences_of"]
