"""Score sentences for check-worthiness and rank them: a document's (:func:`rank_document`), or
sentences split already, one ``{"id", "text"}`` a line (:func:`read_sentences`, :func:`score_sentences`).

One tie rule: sentences are ranked by their check-worthiness probability, highest first, ties in
document order. ``checkworthy`` is the probability at or above the model's shipped threshold.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factscout.claims.checkworthy import CheckworthyModel, CheckworthyScore
from factscout.claims.document import Document, DocumentSentence
from factscout.errors import InputError

_SURROGATE = re.compile("[\ud800-\udfff]")
BATCH_SIZE = 64
"""Sentences scored per call (a progress step)."""


@dataclass(frozen=True, slots=True)
class RankedSentence:
    """A document sentence with its check-worthiness and its 1-based rank in the document."""

    sentence: DocumentSentence
    score: CheckworthyScore
    rank: int
    checkworthy: bool


def score_texts(
    model: CheckworthyModel,
    texts: Sequence[str],
    *,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], Any] | None = None,
) -> list[CheckworthyScore]:
    """Each text's score, in order, ``batch_size`` at a time (``progress(n)`` after each batch)."""
    if batch_size < 1:
        raise InputError(f"batch size must be positive, got {batch_size}")
    scores: list[CheckworthyScore] = []
    for i in range(0, len(texts), batch_size):
        batch = texts[i : i + batch_size]
        scores.extend(model.score(list(batch)))
        if progress is not None:
            progress(len(batch))
    return scores


def rank_document(
    document: Document,
    model: CheckworthyModel,
    *,
    top: int | None = None,
    min_score: float | None = None,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], Any] | None = None,
) -> list[RankedSentence]:
    """The document's sentences, each scored alone, ranked (highest probability first, ties in
    document order); those under ``min_score`` dropped, then the first ``top`` kept."""
    if top is not None and top < 1:
        raise InputError(f"top must be a positive number of sentences, got {top}")
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        raise InputError(f"min score must be a probability between 0 and 1, got {min_score}")
    scores = score_texts(model, [s.text for s in document.sentences], batch_size=batch_size, progress=progress)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i].probability, i))
    ranked = [
        RankedSentence(document.sentences[i], scores[i], rank, scores[i].probability >= model.threshold)
        for rank, i in enumerate(order, start=1)
    ]
    if min_score is not None:
        ranked = [r for r in ranked if r.score.probability >= min_score]
    return ranked[:top] if top is not None else ranked


def ranked_row(document: Document, ranked: RankedSentence) -> dict[str, Any]:
    """One ranked sentence as a JSON object (what ``factscout claims FILE`` writes a line)."""
    s = ranked.sentence
    return {
        "id": s.sentence_id,
        "rank": ranked.rank,
        "score": ranked.score.probability,
        "checkworthy": ranked.checkworthy,
        "label": ranked.score.label,
        "probabilities": dict(ranked.score.probabilities),
        "text": s.text,
        "start": s.start,
        "end": s.end,
        "line": s.line,
        "speaker": s.speaker,
        "context": list(s.context),
        "cue": s.cue,
        "claim": document.claim_text(s),
    }


@dataclass(frozen=True, slots=True)
class SplitSentence:
    """A sentence given already split: its id as the file gave it (a string or an integer)."""

    id: str | int
    text: str
    line: int


def read_sentences(path: str | os.PathLike[str]) -> list[SplitSentence]:
    """The sentences of a JSONL file, one ``{"id": ..., "text": ...}`` a line, read whole and
    checked before any model loads: a bad line is an error naming the file and line (malformed JSON,
    no id, an id that is not a string or an integer, an id given twice, no text or an empty one).
    Texts are kept as they are, never split again; other keys are ignored; blank lines skipped."""
    from factscout.formats.jsonl import read_jsonl

    out: list[SplitSentence] = []
    seen: dict[str | int, int] = {}
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        if "id" not in row:
            raise InputError(f'{where}: no "id" (each line is {{"id": ..., "text": ...}})')
        sid = row["id"]
        if isinstance(sid, bool) or not isinstance(sid, str | int) or sid == "":
            raise InputError(f'{where}: "id" must be a non-empty string or an integer, got {sid!r}')
        if sid in seen:
            raise InputError(f"{where}: id {sid!r} is given twice (first on line {seen[sid]})")
        text = row.get("text")
        if not isinstance(text, str):
            raise InputError(f'{where}: "text" must be a string, got {"nothing" if text is None else repr(text)}')
        if not text.strip():
            raise InputError(f'{where}: "text" is empty')
        if _SURROGATE.search(text):
            raise InputError(f'{where}: "text" holds a lone surrogate: send valid Unicode text')
        seen[sid] = lineno
        out.append(SplitSentence(sid, text, lineno))
    if not out:
        raise InputError(f'{path} holds no sentence (one {{"id": ..., "text": ...}} a line)')
    return out


def score_sentences(
    model: CheckworthyModel,
    sentences: Sequence[SplitSentence],
    *,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int], Any] | None = None,
) -> list[dict[str, Any]]:
    """``{"id", "score", "checkworthy"}`` for each sentence, in input order."""
    scores = score_texts(model, [s.text for s in sentences], batch_size=batch_size, progress=progress)
    return [
        {"id": s.id, "score": score.probability, "checkworthy": score.probability >= model.threshold}
        for s, score in zip(sentences, scores, strict=True)
    ]


__all__ = [
    "BATCH_SIZE",
    "RankedSentence",
    "SplitSentence",
    "rank_document",
    "ranked_row",
    "read_sentences",
    "score_sentences",
    "score_texts",
]
