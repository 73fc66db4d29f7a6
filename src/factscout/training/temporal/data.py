"""The time-aware model's data: claims as :class:`Example` records, the label space, the
vocabulary and token ids, and the :class:`Featurizer` that turns examples into tensors
(BiLSTM token ids or frozen MiniLM vectors, evidence-date deltas, temporal ranking targets,
Δt features and the four rankings' normalised scores), the validation split carved from MultiFC
train by claim id, and the published-before-claim evidence filter.
:mod:`factscout.training.temporal.trainer` trains on them."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from factscout.datasets.base import Dataset
from factscout.errors import InputError
from factscout.temporal.mixture import DELTA_FEATURES, delta_features, normalized_scores
from factscout.temporal.rankings import METHODS, temporal_scores
from factscout.temporal.timestamps import delta_days

BASELINES = ("base", "search rank", "random")
# "delta-t": Δt features, no ranking loss; "time-aware": Δt features + the learned mixture of the
# four temporal rankings (prior on the evidence weights and π-weighted ListMLE targets)
EXTENSIONS = ("delta-t", "time-aware")
ALL_METHODS = (*BASELINES, *METHODS, *EXTENSIONS)
TIME_METHODS = frozenset(EXTENSIONS)
VALIDATION_SHARE = 0.15
MAX_EVIDENCE = 10
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Example:
    """One claim as the joint model sees it."""

    claim_id: str
    domain: str
    label: str | None
    claim: str
    evidence: tuple[str, ...]
    deltas: tuple[int | None, ...]
    ranks: tuple[int | None, ...]
    meta: tuple[str, ...]


def examples_from(dataset: Dataset, *, max_evidence: int = MAX_EVIDENCE) -> list[Example]:
    """The claims of a MultiFC-layout dataset with their snippets (``meta['snippet_ids']``, search
    rank order), Δt against the claim date, and speaker / tag / category tokens. A claim without
    snippets gets one empty evidence text (undated, unranked) so it can still be classified.
    Sorted by ``claim_id``: the training order never depends on how a file was written."""
    passages = {p.passage_id: p for p in dataset.corpus}
    out = []
    for claim in dataset.claims:
        meta = claim.meta
        ids = list(meta.get("snippet_ids", ()))[:max_evidence]
        texts = tuple(passages[i].contents for i in ids) or ("",)
        deltas = tuple(delta_days(passages[i].published, claim.date) for i in ids) or (None,)
        ranks = tuple(_rank(i) for i in ids) or (None,)
        tokens = []
        if meta.get("speaker"):
            tokens.append(f"speaker:{str(meta['speaker']).lower()}")
        tokens += [f"tag:{t.lower()}" for t in meta.get("tags", ())]
        tokens += [f"category:{t.lower()}" for t in meta.get("categories", ())]
        out.append(
            Example(
                claim.claim_id,
                str(meta.get("domain") or claim.claim_id.split("-")[0]),
                meta.get("label") or "none",  # the loader reads MultiFC's literal label "none" as missing
                claim.text,
                texts,
                deltas,
                ranks,
                tuple(tokens),
            )
        )
    return sorted(out, key=lambda e: e.claim_id)


def in_validation(claim_id: str, share: float = VALIDATION_SHARE) -> bool:
    """Whether a training claim belongs to the validation split: the first 8 bytes of the sha256
    of its id, as a fraction of 2**64, below ``share`` (stable across runs, machines and files)."""
    if not 0.0 < share < 1.0:
        raise InputError(f"the validation share must be in (0, 1), got {share!r}")
    return int.from_bytes(hashlib.sha256(claim_id.encode()).digest()[:8], "big") < share * 2**64


def validation_split(
    examples: Sequence[Example], share: float = VALIDATION_SHARE
) -> tuple[list[Example], list[Example]]:
    """(fit, validation): MultiFC train split by :func:`in_validation` on the claim id."""
    fit = [e for e in examples if not in_validation(e.claim_id, share)]
    held = [e for e in examples if in_validation(e.claim_id, share)]
    return fit, held


def published_before_claim(example: Example) -> Example:
    """``example`` without the evidence dated on or after its claim date (Δt >= 0), the setting
    ``check`` uses (``published_before`` = the claim date; undated evidence is kept, as the
    retrievers' default ``undated="keep"`` does)."""
    keep = [i for i, d in enumerate(example.deltas) if d is None or d < 0]
    if len(keep) == len(example.deltas):
        return example
    if not keep:
        return dataclasses.replace(example, evidence=("",), deltas=(None,), ranks=(None,))
    return dataclasses.replace(
        example,
        evidence=tuple(example.evidence[i] for i in keep),
        deltas=tuple(example.deltas[i] for i in keep),
        ranks=tuple(example.ranks[i] for i in keep),
    )


def _rank(passage_id: str) -> int | None:
    try:
        return int(passage_id.split(":")[-1].split(".")[0])
    except ValueError:
        return None


@dataclass
class LabelSpace:
    """Every domain's label set (from the training claims) in one global index."""

    labels: list[tuple[str, str]]
    index: dict[tuple[str, str], int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = {dl: i for i, dl in enumerate(self.labels)}

    @classmethod
    def from_examples(cls, examples: Sequence[Example]) -> LabelSpace:
        return cls(sorted({(e.domain, e.label) for e in examples if e.label is not None}))

    def mask(self, domain: str) -> np.ndarray:
        return np.array([d == domain for d, _ in self.labels], dtype=bool)

    def domain_labels(self, domain: str) -> list[str]:
        return [lab for d, lab in self.labels if d == domain]


def build_vocab(texts: Sequence[str], *, min_count: int = 2, max_size: int = 30000) -> dict[str, int]:
    """Word ids from 2 (0 = padding, 1 = unknown) for words seen at least ``min_count`` times, most
    frequent first, ties in alphabetical order (never in the order the texts came)."""
    counts = Counter(w for t in texts for w in _WORD.findall(t.lower()))
    ranked = sorted(counts.items(), key=lambda wn: (-wn[1], wn[0]))[:max_size]
    words = [w for w, n in ranked if n >= min_count]
    return {w: i for i, w in enumerate(words, 2)}


def token_ids(texts: Sequence[str], vocab: Mapping[str, int], length: int) -> np.ndarray:
    out = np.zeros((len(texts), length), dtype=np.int64)
    for row, t in enumerate(texts):
        ids = [vocab.get(w, 1) for w in _WORD.findall(t.lower())[:length]]
        out[row, : len(ids)] = ids
    return out


@dataclass
class Tensors:
    """Everything the training loop needs for a list of examples, as arrays."""

    examples: list[Example]
    claim: torch.Tensor
    evidence: torch.Tensor
    present: torch.Tensor
    meta: torch.Tensor
    label_mask: torch.Tensor
    labels: torch.Tensor  # -1 where the gold label is outside the label space
    targets: dict[str, tuple[torch.Tensor, torch.Tensor]]
    time: torch.Tensor  # (n, K, len(DELTA_FEATURES)) Δt features; zeros for padding
    temporal: torch.Tensor  # (n, K, 4) the four rankings' normalised scores (METHODS order)

    def batch(self, rows: Sequence[int] | np.ndarray) -> dict[str, Any]:
        idx = torch.as_tensor(np.asarray(rows), dtype=torch.long)
        return {
            "claim": self.claim[idx],
            "evidence": self.evidence[idx],
            "present": self.present[idx],
            "meta": self.meta[idx],
            "label_mask": self.label_mask[idx],
            "labels": self.labels[idx],
            "time": self.time[idx],
            "temporal": self.temporal[idx],
            "rows": idx,
        }


@dataclass
class Featurizer:
    """Turns examples into :class:`Tensors` for one encoder kind (``bilstm`` or ``minilm``)."""

    kind: str
    labels: LabelSpace
    meta_vocab: dict[str, int]
    vocab: dict[str, int] | None = None
    embed: Callable[[Sequence[str]], np.ndarray] | None = None
    claim_length: int = 32
    evidence_length: int = 32

    @classmethod
    def fit(
        cls,
        kind: str,
        train: Sequence[Example],
        *,
        embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    ) -> Featurizer:
        if kind not in ("bilstm", "minilm"):
            raise InputError(f"encoder kind must be 'bilstm' or 'minilm', got {kind!r}")
        meta_counts = Counter(t for e in train for t in e.meta)
        meta_vocab = {t: i for i, t in enumerate(sorted(t for t, n in meta_counts.items() if n >= 2), 1)}
        vocab = None
        if kind == "bilstm":
            vocab = build_vocab([e.claim for e in train] + [t for e in train for t in e.evidence])
        elif embed is None:
            raise InputError("the minilm featurizer needs an embed function")
        return cls(kind, LabelSpace.from_examples(train), meta_vocab, vocab, embed)

    def transform(self, examples: Sequence[Example]) -> Tensors:
        n, k = len(examples), MAX_EVIDENCE
        present = np.zeros((n, k), dtype=bool)
        for i, e in enumerate(examples):
            present[i, : len(e.evidence)] = True
        padded = [list(e.evidence) + [""] * (k - len(e.evidence)) for e in examples]
        if self.kind == "bilstm":
            assert self.vocab is not None  # set by fit for this kind
            claim = torch.from_numpy(token_ids([e.claim for e in examples], self.vocab, self.claim_length))
            flat = token_ids([t for row in padded for t in row], self.vocab, self.evidence_length)
            evidence = torch.from_numpy(flat.reshape(n, k, self.evidence_length))
        else:
            assert self.embed is not None
            claim = torch.from_numpy(self.embed([e.claim for e in examples]))
            flat_texts = [t for row in padded for t in row]
            wanted = sorted({t for t in flat_texts if t})
            vectors = dict(zip(wanted, self.embed(wanted), strict=True)) if wanted else {}
            dim = claim.shape[1]
            zero = np.zeros(dim, dtype=np.float32)
            evidence = torch.from_numpy(np.stack([vectors.get(t, zero) for t in flat_texts]).reshape(n, k, dim))
        meta_len = max((len(e.meta) for e in examples), default=0)
        meta = np.zeros((n, max(meta_len, 1)), dtype=np.int64)
        for i, e in enumerate(examples):
            ids = [self.meta_vocab[t] for t in e.meta if t in self.meta_vocab]
            meta[i, : len(ids)] = ids
        masks = {d: self.labels.mask(d) for d in {e.domain for e in examples}}
        label_mask = np.stack([masks[e.domain] for e in examples]) if examples else np.zeros((0, 0), bool)
        labels = np.array([self.labels.index.get((e.domain, e.label or ""), -1) for e in examples], dtype=np.int64)
        targets = {}
        for method in (*METHODS, "search rank"):
            t = np.zeros((n, k), dtype=np.float32)
            m = np.zeros((n, k), dtype=bool)
            for i, e in enumerate(examples):
                if method == "search rank":
                    for j, r in enumerate(e.ranks):
                        if r is not None:
                            t[i, j], m[i, j] = -r, True
                else:
                    s = temporal_scores(method, e.deltas)
                    t[i, : len(s.scores)] = s.scores
                    m[i, : len(s.mask)] = s.mask
            targets[method] = (torch.from_numpy(t), torch.from_numpy(m & present))
        time = np.zeros((n, k, len(DELTA_FEATURES)), dtype=np.float32)
        temporal = np.zeros((n, k, len(METHODS)), dtype=np.float32)
        for i, e in enumerate(examples):
            dated = [d for d in e.deltas[:k]]
            if e.evidence != ("",):
                time[i, : len(dated)] = delta_features(dated)
                temporal[i, : len(dated)] = normalized_scores(dated)
        return Tensors(
            list(examples),
            claim,
            evidence,
            torch.from_numpy(present),
            torch.from_numpy(meta),
            torch.from_numpy(label_mask),
            torch.from_numpy(labels),
            targets,
            torch.from_numpy(time),
            torch.from_numpy(temporal),
        )
