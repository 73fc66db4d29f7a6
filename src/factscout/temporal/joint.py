"""Joint veracity prediction and evidence ranking (MultiFC; time-aware as in Allein et al. 2021).

Augenstein et al. 2019, "MultiFC: A Real-World Multi-Domain Dataset for Evidence-Based Fact
Checking of Claims" (EMNLP), and Allein, Augenstein, Moens 2021, "Time-aware evidence ranking
for fact-checking" (Journal of Web Semantics). For a claim ``c`` with metadata ``m`` and its
search snippets ``e_1..e_K``:

* a claim encoder and an evidence encoder map texts to vectors (:class:`BiLstmEncoder`, a BiLSTM
  over word embeddings trained from scratch with max pooling; or :class:`FrozenEncoder`, a
  projection of precomputed MiniLM sentence embeddings);
* a metadata encoder averages embeddings of the speaker, tags and categories;
* each evidence gets a joint representation ``f_i = [c; e_i; c*e_i; |c-e_i|; m]``, label scores
  ``o_i = W_label MLP(f_i)`` and a ranking score ``r_i = MLP_rank(f_i)``;
* the claim's label scores are the evidence label scores weighted by the normalised ranking
  scores, ``o = Σ_i softmax(r)_i o_i``, and then masked to the claim's domain's labels (every
  MultiFC site has its own label set), so a claim is only ever scored on its domain's labels.

Veracity is trained with cross-entropy; the ranking scores can in addition be trained with
ListMLE (:mod:`factscout.temporal.listmle`) against a target ranking of the evidence: one of the
four temporal rankings (:mod:`factscout.temporal.rankings`) or the search engine's rank.
``weighting="random"`` replaces the ranking scores by random weights (the random-evidence
baseline).

Two extensions give the model the evidence dates directly (``factscout.temporal.mixture``):
``time_dim > 0`` concatenates Δt features (batch ``time``, (B, K, time_dim)) to every ``f_i``, and
``mixture=True`` adds a learned temporal prior to the ranking scores before the softmax,
``r_i + γ Σ_k π_k t_ik`` (the returned ranking scores stay ``r_i``, which ListMLE trains) with ``π = softmax(mixture_logits)`` over the four rankings and ``t_ik``
ranking k's normalised score of evidence i (batch ``temporal``, (B, K, 4)); ``γ`` starts at 0, so
the model starts as the base model and learns from the veracity loss alone how much, and which
mix of, temporal order helps. :meth:`JointModel.mixture_weights` gives ``π``.

Randomness: a batch may carry a ``generator`` (``torch.Generator``); the dropout masks and the
random evidence weights are then drawn from it alone, so a seeded generator reproduces a training
run exactly (:mod:`factscout.training.temporal.trainer`). Without one they come from torch's global
generator. Parameter initialisation uses torch's global generator, as every ``nn.Module`` does:
build the model after seeding it (``factscout.training.loop.deterministic_training``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from factscout.errors import InputError

MASKED = -1e4


class BiLstmEncoder(nn.Module):
    """Word embeddings -> one-layer BiLSTM -> max pooling over the non-padding tokens."""

    def __init__(self, vocab_size: int, embedding_dim: int = 64, hidden: int = 48) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.lstm = nn.LSTM(embedding_dim, hidden, batch_first=True, bidirectional=True)
        self.dim = 2 * hidden

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` (..., L) int64, 0 = padding -> (..., 2*hidden)."""
        shape = tokens.shape[:-1]
        flat = tokens.reshape(-1, tokens.shape[-1])
        states, _ = self.lstm(self.embedding(flat))
        pad = (flat == 0).unsqueeze(-1)
        pooled = states.masked_fill(pad, MASKED).max(dim=1).values
        empty = pad.all(dim=1)
        pooled = torch.where(empty, torch.zeros_like(pooled), pooled)
        return pooled.reshape(*shape, self.dim)


class FrozenEncoder(nn.Module):
    """A trained projection of fixed sentence embeddings (MiniLM): ``tanh(W x + b)``."""

    def __init__(self, input_dim: int = 384, dim: int = 128) -> None:
        super().__init__()
        self.proj = nn.Linear(input_dim, dim)
        self.dim = dim

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.proj(vectors))


class JointModel(nn.Module):
    """Claim + evidence + metadata encoders, per-evidence label scores, a ranking module.

    ``forward(batch)`` returns ``(label_logits (B, n_labels), ranking_scores (B, K))``; the batch
    holds ``claim`` and ``evidence`` inputs for the encoders, ``present`` (B, K) bool,
    ``meta`` (B, M) metadata token ids (0 = padding) and ``label_mask`` (B, n_labels) bool."""

    def __init__(
        self,
        claim_encoder: nn.Module,
        evidence_encoder: nn.Module,
        *,
        n_labels: int,
        meta_vocab: int,
        meta_dim: int = 16,
        hidden: int = 128,
        dropout: float = 0.2,
        weighting: str = "learned",
        time_dim: int = 0,
        mixture: bool = False,
        n_rankings: int = 4,
    ) -> None:
        super().__init__()
        if weighting not in ("learned", "random"):
            raise InputError(f"weighting must be 'learned' or 'random', got {weighting!r}")
        self.claim_encoder, self.evidence_encoder = claim_encoder, evidence_encoder
        d = int(getattr(claim_encoder, "dim"))  # noqa: B009 - set by both encoder classes
        if int(getattr(evidence_encoder, "dim")) != d:  # noqa: B009
            raise InputError("claim and evidence encoders must have the same output size")
        self.meta = nn.EmbeddingBag(max(meta_vocab, 1), meta_dim, mode="mean", padding_idx=0)
        if time_dim < 0:
            raise InputError(f"time_dim must be >= 0, got {time_dim}")
        self.time_dim = time_dim
        joint = 4 * d + meta_dim + time_dim
        self.mixture_logits = nn.Parameter(torch.zeros(n_rankings)) if mixture else None
        self.prior_scale = nn.Parameter(torch.zeros(())) if mixture else None
        self.dropout = nn.Dropout(dropout)
        self.label_mlp = nn.Sequential(nn.Linear(joint, hidden), nn.ReLU(), nn.Linear(hidden, n_labels))
        self.rank_mlp = nn.Sequential(nn.Linear(joint, hidden // 2), nn.ReLU(), nn.Linear(hidden // 2, 1))
        self.weighting = weighting

    def _dropout(self, x: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """Inverted dropout drawing its mask from ``generator`` (the batch's) when there is one, so
        training is reproducible from that generator's seed alone; else torch's global one."""
        p = float(self.dropout.p)
        if not self.training or p == 0.0:
            return x
        if generator is None:
            return self.dropout(x)
        keep = torch.rand(x.shape, generator=generator) >= p
        return x * keep / (1.0 - p)

    def forward(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.claim_encoder(batch["claim"])  # (B, d)
        e = self.evidence_encoder(batch["evidence"])  # (B, K, d)
        meta = batch["meta"]
        m = self.meta(meta) if meta.shape[1] else torch.zeros(c.shape[0], self.meta.embedding_dim)
        has_meta = (meta != 0).any(dim=1, keepdim=True)
        m = torch.where(has_meta, m, torch.zeros_like(m))
        k = e.shape[1]
        cc = c.unsqueeze(1).expand(-1, k, -1)
        parts = [cc, e, cc * e, (cc - e).abs(), m.unsqueeze(1).expand(-1, k, -1)]
        if self.time_dim:
            parts.append(batch["time"])
        f = torch.cat(parts, dim=-1)
        f = self._dropout(f, batch.get("generator"))
        per_evidence = self.label_mlp(f)  # (B, K, L)
        ranking = self.rank_mlp(f).squeeze(-1)  # (B, K): what ListMLE trains
        scores = ranking
        if self.mixture_logits is not None and self.prior_scale is not None:
            prior = (batch["temporal"] * torch.softmax(self.mixture_logits, dim=0)).sum(dim=-1)
            scores = ranking + self.prior_scale * prior  # the prior shapes the weights, not ListMLE's scores
        present = batch["present"]
        if self.weighting == "random":
            gen = batch.get("generator")
            noise = torch.rand(ranking.shape, generator=gen) if gen is not None else torch.rand(ranking.shape)
            weights = noise.masked_fill(~present, 0.0)
            weights = weights / weights.sum(dim=1, keepdim=True).clamp_min(1e-9)
        else:
            weights = torch.softmax(scores.masked_fill(~present, MASKED), dim=1)
        logits = (weights.unsqueeze(-1) * per_evidence).sum(dim=1)
        logits = logits.masked_fill(~batch["label_mask"], MASKED)
        return logits, ranking

    def mixture_weights(self) -> list[float]:
        """``π`` over the four temporal rankings (``temporal.rankings.METHODS`` order); empty
        without a mixture."""
        if self.mixture_logits is None:
            return []
        return [float(w) for w in torch.softmax(self.mixture_logits.detach(), dim=0)]
