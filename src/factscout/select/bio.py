"""BIO tagging of evidence sentences, the numpy side of the Quin+ tagger (:mod:`factscout.select.tagger`).

Every passage token is tagged **B** (first token of an evidence span), **I** (inside one) or
**O** (outside); factscout's spans are whole sentences. This module turns sentences into tags
and windows and tag probabilities back into selected sentences; it runs no network.

- **Constrained decoding.** Viterbi over the token log-probabilities with the transitions
  O -> I and start -> I forbidden (the CRF-style constraint of BIO), so decoded tags are always
  well formed. Evidence against O is scored by the span probability P(B) + P(I) (B and I split
  the evidence mass, so comparing each with P(O) alone under-selects: the first shipped head
  did), plus a scalar ``bias`` (tuned on training-part claims, stored with the head) that
  trades precision for recall; B versus I follows the head where the constraint allows both.
- **Long passages.** Sentences are packed into windows of at most ``window`` (256) word pieces
  including the claim (at most 64 pieces) and special tokens; consecutive windows overlap by
  ``overlap`` sentences (default 1) and token probabilities of a sentence seen in two windows
  are averaged. A sentence longer than ``max_sentence_tokens`` (128 pieces) is read up to that
  cap; its remaining pieces continue the tag of the last read piece (I after B/I, else O).

**Selection rule.** A sentence is selected when the majority (more than half) of its read word
pieces are decoded B or I. Its ``score`` is the mean probability of B + I over those pieces.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.select.threshold import PRF

TAGS: tuple[str, str, str] = ("O", "B", "I")
"""The tag set, in the order of the head's logits."""
O_TAG, B_TAG, I_TAG = 0, 1, 2

COS_CENTER, COS_SCALE = 0.5, 10.0
"""The cosine feature is ``COS_SCALE * (cos - COS_CENTER)``: on the scale of a sharp threshold."""
N_EXTRA = 2  # cos(claim, sentence) and the first-token flag

WINDOW = 256
MAX_CLAIM_TOKENS = 64
MAX_SENTENCE_TOKENS = 128
OVERLAP = 1


# --- BIO tags, decoding and measures -------------------------------------------------------------


def bio_tags(lengths: Sequence[int], evidence: Iterable[int]) -> list[list[str]]:
    """Gold tags of a passage whose sentences have ``lengths`` tokens: each sentence in
    ``evidence`` is one span (B then I), all other tokens O."""
    chosen = set(evidence)
    return [(["B", *(["I"] * (n - 1))] if i in chosen and n else ["O"] * n) for i, n in enumerate(lengths)]


_NEG = -1e9
# allowed[prev, cur]: O -> I is the only forbidden transition
_TRANSITION = np.zeros((3, 3), dtype=np.float64)
_TRANSITION[O_TAG, I_TAG] = _NEG
_START = np.array([0.0, 0.0, _NEG])  # a passage cannot start inside a span


def decode_bio(log_probs: np.ndarray) -> list[str]:
    """Viterbi decoding of ``(n, 3)`` per-token log-probabilities (columns O, B, I) under the BIO
    constraint: I never follows O and never starts the sequence."""
    lp = np.asarray(log_probs, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[1] != 3:
        raise InputError(f"BIO decoding needs an (n, 3) array of log-probabilities, got shape {lp.shape}")
    n = lp.shape[0]
    if n == 0:
        return []
    score = _START + lp[0]
    back = np.zeros((n, 3), dtype=np.int64)
    for t in range(1, n):
        cand = score[:, None] + _TRANSITION  # prev x cur
        back[t] = np.argmax(cand, axis=0)
        score = cand[back[t], np.arange(3)] + lp[t]
    path = [int(np.argmax(score))]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return [TAGS[k] for k in reversed(path)]


def token_prf(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> PRF:
    """Token-level precision, recall and F1 of evidence tokens (tag B or I), micro-averaged over
    paired tag sequences (one pair per passage, or per sentence). Same zero conventions as
    :func:`~factscout.select.threshold.sentence_prf`."""
    if len(predicted) != len(gold):
        raise InputError(f"token_prf needs paired sequences, got {len(predicted)} predicted and {len(gold)} gold")
    tp = n_pred = n_gold = 0
    for p_seq, g_seq in zip(predicted, gold, strict=True):
        if len(p_seq) != len(g_seq):
            raise InputError(f"tag sequences differ in length: {len(p_seq)} predicted, {len(g_seq)} gold")
        for p, g in zip(p_seq, g_seq, strict=True):
            pe, ge = p != "O", g != "O"
            tp += pe and ge
            n_pred += pe
            n_gold += ge
    prec = tp / n_pred if n_pred else 0.0
    rec = tp / n_gold if n_gold else 0.0
    return PRF(prec, rec, 2 * prec * rec / (prec + rec) if prec + rec else 0.0)


# --- windows ---------------------------------------------------------------------------------------


def sentence_windows(lengths: Sequence[int], budget: int, overlap: int = OVERLAP) -> list[tuple[int, int]]:
    """``[start, stop)`` sentence ranges covering every sentence, each holding as many whole
    sentences as fit in ``budget`` tokens (at least one), consecutive ranges sharing ``overlap``
    sentences (fewer when a window holds only that many)."""
    if budget < 1:
        raise InputError(f"a window needs a positive token budget, got {budget}")
    if overlap < 0:
        raise InputError(f"window overlap must be >= 0 sentences, got {overlap}")
    out: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        stop, used = start, 0
        while stop < n and (stop == start or used + lengths[stop] <= budget):
            used += lengths[stop]
            stop += 1
        out.append((start, stop))
        if stop >= n:
            break
        start = max(stop - overlap, start + 1)
    return out


@dataclass(frozen=True, slots=True)
class Window:
    """One backbone input: sentences ``[first, stop)`` of a passage after the claim.

    ``input_ids`` is ``[CLS] claim [SEP] sentences [SEP]``; the sentence pieces start at
    ``offset`` and sentence ``first + k`` has ``lengths[k]`` (capped) pieces."""

    first: int
    stop: int
    input_ids: tuple[int, ...]
    offset: int
    lengths: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PreparedPassage:
    """A claim and passage tokenised and cut into windows (no backbone run yet)."""

    full_lengths: tuple[int, ...]
    """Word pieces per sentence, uncapped (token-level measures count these)."""
    read_lengths: tuple[int, ...]
    """Pieces per sentence that the backbone reads (capped at ``max_sentence_tokens``)."""
    windows: tuple[Window, ...]


def prepare(
    tokenizer: Any,
    claim_text: str,
    sentences: Sequence[str],
    *,
    window: int = WINDOW,
    overlap: int = OVERLAP,
    max_claim_tokens: int = MAX_CLAIM_TOKENS,
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
) -> PreparedPassage:
    """Tokenise a claim and a passage's sentences and pack the sentences into windows."""
    cls_id, sep_id = int(tokenizer.cls_token_id), int(tokenizer.sep_token_id)
    claim_ids = list(tokenizer(claim_text, add_special_tokens=False)["input_ids"])[:max_claim_tokens]
    pieces = (
        [list(ids) for ids in tokenizer(list(sentences), add_special_tokens=False)["input_ids"]] if sentences else []
    )
    full = tuple(len(p) for p in pieces)
    read = tuple(min(n, max_sentence_tokens) for n in full)
    budget = window - 3 - len(claim_ids)
    if budget < max_sentence_tokens:
        raise InputError(
            f"window {window} leaves {budget} pieces after the claim, fewer than max_sentence_tokens {max_sentence_tokens}"
        )
    windows = []
    for a, b in sentence_windows(read, budget, overlap):
        body = [t for k in range(a, b) for t in pieces[k][: read[k]]]
        ids = (cls_id, *claim_ids, sep_id, *body, sep_id)
        windows.append(Window(a, b, ids, len(claim_ids) + 2, read[a:b]))
    return PreparedPassage(full, read, tuple(windows))


def window_features(states: np.ndarray, window: Window, cosines: Sequence[float] | np.ndarray) -> np.ndarray:
    """Head input of one window: the backbone states of its sentence pieces, each with the
    cosine of its sentence to the claim and a first-piece flag. ``states`` are the backbone's
    last-layer states of ``window.input_ids``; ``cosines`` cover the whole passage."""
    n = sum(window.lengths)
    body = np.asarray(states[window.offset : window.offset + n], dtype=np.float32)
    cos = np.concatenate(
        [
            np.full(k, COS_SCALE * (cosines[window.first + j] - COS_CENTER), dtype=np.float32)
            for j, k in enumerate(window.lengths)
        ]
    )
    first = np.concatenate([np.eye(1, k, dtype=np.float32)[0] for k in window.lengths])
    return np.concatenate([body, cos[:, None], first[:, None]], axis=1)


def window_tags(window: Window, gold: Iterable[int]) -> np.ndarray:
    """Gold tag ids (O=0, B=1, I=2) of a window's read pieces."""
    chosen = set(gold)
    out = [
        ([B_TAG, *([I_TAG] * (k - 1))] if window.first + j in chosen else [O_TAG] * k)
        for j, k in enumerate(window.lengths)
    ]
    return np.array([t for seq in out for t in seq], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class TaggedPassage:
    """The tagger's output for one passage: tags of every word piece of every sentence,
    the mean B + I probability of each sentence and the selected sentence indices."""

    tags: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    selected: tuple[int, ...]


def evidence_log_probs(probs: np.ndarray, bias: float = 0.0) -> np.ndarray:
    """Decoding scores of ``(n, 3)`` tag probabilities: evidence against O is decided on the span
    probability ``P(B) + P(I)`` (plus ``bias``), not on B and I separately (a piece with P(O) 0.4,
    P(B) 0.3, P(I) 0.3 is evidence); between B and I the head's own preference wins by a hair
    where the BIO constraint leaves the choice (after O only B is allowed)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-9, 1.0)
    out = np.empty_like(p)
    out[:, 0] = np.log(p[:, 0])
    span = np.log(p[:, 1] + p[:, 2]) + bias
    prefer_b = p[:, 1] > p[:, 2]
    out[:, 1] = span - np.where(prefer_b, 0.0, 1e-6)
    out[:, 2] = span - np.where(prefer_b, 1e-6, 0.0)
    return out


def combine(prepared: PreparedPassage, window_probs: Sequence[np.ndarray], bias: float = 0.0) -> TaggedPassage:
    """Average the per-piece probabilities of windows sharing a sentence, decode the whole
    passage with :func:`decode_bio` over :func:`evidence_log_probs` (``bias`` added to the log
    span probability) and apply the selection rule (majority of read pieces B or I)."""
    read = prepared.read_lengths
    starts = np.concatenate([[0], np.cumsum(read)]).astype(np.int64)
    total = np.zeros((int(starts[-1]), 3), dtype=np.float64)
    count = np.zeros(int(starts[-1]), dtype=np.float64)
    for w, probs in zip(prepared.windows, window_probs, strict=True):
        lo = int(starts[w.first])
        hi = lo + sum(w.lengths)
        if probs.shape != (hi - lo, 3):
            raise InputError(f"window probabilities have shape {probs.shape}, expected {(hi - lo, 3)}")
        total[lo:hi] += probs
        count[lo:hi] += 1
    probs_all = total / np.maximum(count, 1)[:, None]
    decoded = decode_bio(evidence_log_probs(probs_all, bias))
    tags: list[tuple[str, ...]] = []
    scores: list[float] = []
    selected: list[int] = []
    for i, (n_read, n_full) in enumerate(zip(read, prepared.full_lengths, strict=True)):
        lo, hi = int(starts[i]), int(starts[i + 1])
        seq = decoded[lo:hi]
        tail = "I" if seq and seq[-1] != "O" else "O"
        tags.append((*seq, *([tail] * (n_full - n_read))))
        evidence = sum(t != "O" for t in seq)
        scores.append(float(probs_all[lo:hi, 1:].sum(axis=1).mean()) if hi > lo else 0.0)
        if n_read and 2 * evidence > n_read:
            selected.append(i)
    return TaggedPassage(tuple(tags), tuple(scores), tuple(selected))
