"""Cut documents into retrievable passages: overlapping windows of sentences.

Long documents are indexed as windows of ``window`` consecutive sentences, a new window
starting every ``stride`` sentences, the way passage-level retrieval splits documents before
taking the best passage per document (MaxP; Dai & Callan 2019, "Deeper Text Understanding for
IR with Contextual Neural Language Modeling"). A document of at most ``window`` sentences stays
one passage whose ``passage_id`` is the ``doc_id``; longer documents give passages
``"<doc_id>#0"``, ``"<doc_id>#1"``... that together cover every sentence.

Documents that come as plain text are split with :func:`~factscout.text.sentences.sentences_of`
(:func:`split_passages`); datasets that ship sentence lists (SciFact abstracts) should pass those
lists to :func:`split_document`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from factscout.errors import InputError
from factscout.records import Passage
from factscout.text.sentences import sentences_of


def _check_window(window: object, stride: object) -> tuple[int, int]:
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise InputError(f"window must be an integer >= 1, got {window!r}")
    if not isinstance(stride, int) or isinstance(stride, bool) or not 1 <= stride <= window:
        raise InputError(f"stride must be an integer with 1 <= stride <= window ({window}), got {stride!r}")
    return window, stride


def sentence_windows(n_sentences: int, window: int = 5, stride: int = 3) -> list[tuple[int, int]]:
    """Half-open sentence ranges ``[(start, end), ...]`` of the passages of an ``n_sentences`` document.

    Windows start at ``0, stride, 2*stride...`` and stop once one reaches the last sentence, so
    the last window may be shorter. ``n_sentences <= window`` (including 0) gives ``[(0, n)]``.
    """
    window, stride = _check_window(window, stride)
    if not isinstance(n_sentences, int) or n_sentences < 0:
        raise InputError(f"n_sentences must be an integer >= 0, got {n_sentences!r}")
    spans = []
    start = 0
    while True:
        spans.append((start, min(start + window, n_sentences)))
        if start + window >= n_sentences:
            return spans
        start += stride


def _windows(
    prefix: str,
    doc_id: str,
    title: str,
    sentences: Sequence[str],
    window: int,
    stride: int,
    published: dt.date | None,
    url: str | None,
) -> list[Passage]:
    spans = sentence_windows(len(sentences), window, stride)
    texts = [" ".join(s.strip() for s in sentences[a:b] if s.strip()) for a, b in spans]
    if len(spans) == 1:
        return [Passage(prefix, doc_id, title, texts[0], published, url)]
    return [Passage(f"{prefix}#{i}", doc_id, title, text, published, url) for i, text in enumerate(texts)]


def split_document(
    doc_id: str,
    title: str,
    sentences: Sequence[str],
    *,
    window: int = 5,
    stride: int = 3,
    published: dt.date | None = None,
    url: str | None = None,
) -> list[Passage]:
    """Cut one document, given as its sentences, into passages of ``window`` sentences every
    ``stride`` sentences (see :func:`sentence_windows`).

    A document of at most ``window`` sentences gives exactly one passage with
    ``passage_id == doc_id``; a longer one gives ``"<doc_id>#0"``, ``"<doc_id>#1"``... Every
    passage keeps the document's ``doc_id``, ``title``, ``published`` and ``url``.
    """
    if isinstance(sentences, str):
        raise InputError(f"document {doc_id!r}: sentences must be a sequence of strings, not one string")
    return _windows(doc_id, doc_id, title, sentences, window, stride, published, url)


def split_passages(passages: Iterable[Passage], window: int = 5, stride: int = 3) -> list[Passage]:
    """Split each passage's text with :func:`~factscout.text.sentences.sentences_of` and cut it into sentence windows.

    A passage short enough to be one window is kept unchanged; a longer one becomes
    ``"<passage_id>#0"``, ``"<passage_id>#1"``... with the same ``doc_id``, title, date and url.
    """
    window, stride = _check_window(window, stride)
    out: list[Passage] = []
    for p in passages:
        sentences = sentences_of(p.text)
        if len(sentences) <= window:
            out.append(p)
        else:
            out.extend(_windows(p.passage_id, p.doc_id, p.title, sentences, window, stride, p.published, p.url))
    return out
