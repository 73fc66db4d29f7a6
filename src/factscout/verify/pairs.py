"""Stance of claim–sentence pairs given in a file: the core of ``factscout stance``.

A pair file is JSON Lines (``.gz`` read too), one object per pair::

    {"id": "p1", "claim": "Vitamin D reduces fractures.", "sentence": "Vitamin D did not reduce fractures."}

``id`` is optional; other fields are carried through untouched. :func:`read_pairs` checks every
row before anything is scored and names the file, line and problem of the first bad one;
:func:`score_pairs` scores the rows with any :class:`~factscout.verify.base.StanceModel` and
returns each row with ``label`` (``supports``, ``refutes`` or ``not enough info``) and
``probabilities`` (in the order of :data:`~factscout.records.STANCE_LABELS`) added. A row that
already has a ``label`` or ``probabilities`` (a gold label, say) keeps it as ``input_label`` /
``input_probabilities``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl
from factscout.records import STANCE_LABELS, Claim, Sentence
from factscout.text.encoder import embed_fn
from factscout.verify.base import EmbeddingStanceModel, PairStanceModel, StanceModel

PAIR_FIELDS = ("claim", "sentence")
"""The fields every pair must have, each a non-empty string."""
ADDED_FIELDS = ("label", "probabilities")
"""The fields :func:`score_pairs` adds; an input row's own are kept under ``input_<name>``."""


def check_pair(row: object, where: str) -> dict[str, Any]:
    """``row`` if it is a pair (``claim`` and ``sentence`` non-empty strings, ``id`` a string if
    present); else an :class:`~factscout.errors.InputError` that starts with ``where``."""
    if not isinstance(row, Mapping):
        raise InputError(f"{where}: expected a JSON object with claim and sentence, got {type(row).__name__}")
    for name in PAIR_FIELDS:
        if name not in row:
            raise InputError(f"{where}: no {name!r} field (a pair needs claim and sentence)")
        value = row[name]
        if not isinstance(value, str):
            raise InputError(f"{where}: {name!r} must be a string, got {type(value).__name__} {value!r}")
        if not value.strip():
            raise InputError(f"{where}: {name!r} is empty")
    if "id" in row and not isinstance(row["id"], str):
        raise InputError(f"{where}: 'id' must be a string, got {type(row['id']).__name__} {row['id']!r}")
    return dict(row)


def read_pairs(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The pairs of a JSON Lines file, every row checked (:func:`check_pair`); blank lines skipped.

    The first bad row stops the read with an InputError naming ``path:line`` and the problem; a
    file without pairs is an error too.
    """
    rows = [check_pair(row, f"{path}:{lineno}") for lineno, row in read_jsonl(path)]
    if not rows:
        raise InputError(f"{path}: no pairs (expected JSON lines with 'claim' and 'sentence')")
    return rows


def pair_probabilities(model: StanceModel, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
    """``(n, 3)`` stance probabilities of paired texts with any stance model.

    A model that reads pairs (:class:`~factscout.verify.base.PairStanceModel`, as the cross-encoders
    do) gets them at once; one that classifies embedding pairs
    (:class:`~factscout.verify.base.EmbeddingStanceModel`, as the SBERT-style head does) gets one encoder batch of the distinct texts; any other gets one
    :meth:`~factscout.verify.base.StanceModel.predict` call per distinct claim.
    """
    if len(claims) != len(sentences):
        raise InputError(f"{len(claims)} claims but {len(sentences)} sentences")
    if not claims:
        return np.zeros((0, len(STANCE_LABELS)), dtype=np.float32)
    if isinstance(model, PairStanceModel):
        return np.asarray(model.predict_pairs(list(claims), list(sentences)), dtype=np.float32)
    if isinstance(model, EmbeddingStanceModel) and model.encoder is not None:
        texts = list(dict.fromkeys([*claims, *sentences]))
        vectors = np.asarray(embed_fn(model.encoder)(texts), dtype=np.float32)
        row = {text: i for i, text in enumerate(texts)}
        u = vectors[[row[c] for c in claims]]
        v = vectors[[row[s] for s in sentences]]
        return np.asarray(model.predict_proba(u, v), dtype=np.float32)
    out = np.zeros((len(claims), len(STANCE_LABELS)), dtype=np.float32)
    by_claim: dict[str, list[int]] = {}
    for i, claim in enumerate(claims):
        by_claim.setdefault(claim, []).append(i)
    for n, (claim, rows) in enumerate(by_claim.items()):
        stances = model.predict(
            Claim(f"pair-claim-{n}", claim), [Sentence("", j, sentences[i]) for j, i in enumerate(rows)]
        )
        out[rows] = [s.probabilities for s in stances]
    return out


def score_pairs(
    model: StanceModel,
    rows: Sequence[Mapping[str, Any]],
    *,
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Each pair row with its predicted ``label`` and ``probabilities`` added, in input order.

    Rows are checked as :func:`read_pairs` does (``where`` is the row's position) and scored
    ``batch_size`` at a time; ``progress(n)`` is called after each batch with the rows it scored.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
    pairs = [check_pair(row, f"pair {i}") for i, row in enumerate(rows)]
    scored: list[dict[str, Any]] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        probs = pair_probabilities(model, [r["claim"] for r in batch], [r["sentence"] for r in batch])
        for row, p in zip(batch, probs, strict=True):
            scored.append(_with_stance(row, p))
        if progress is not None:
            progress(len(batch))
    return scored


def _with_stance(row: Mapping[str, Any], probabilities: np.ndarray) -> dict[str, Any]:
    out = {(f"input_{k}" if k in ADDED_FIELDS else k): v for k, v in row.items()}
    p = [round(float(x), 6) for x in probabilities]
    out["label"] = STANCE_LABELS[int(np.argmax(probabilities))]
    out["probabilities"] = p
    return out


__all__ = ["ADDED_FIELDS", "PAIR_FIELDS", "check_pair", "pair_probabilities", "read_pairs", "score_pairs"]
