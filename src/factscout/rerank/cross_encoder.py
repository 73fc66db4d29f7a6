"""Cross-encoder re-ranking of a first-stage ranking (Nogueira & Cho 2019, "Passage Re-ranking
with BERT", arXiv:1901.04085).

The claim and a passage (title + text) are read together by one transformer, so every claim
token attends to every passage token, and a scalar relevance score comes out. Re-scoring only
the top ``top_n`` hits of a cheap retriever keeps the cost bounded (the re-ranking step of
Nogueira & Cho; interpolating with the first-stage score after min-max normalisation is the
usual hybrid of the two stages).

No cross-encoder loads offline here, so factscout trains its own over the offline
all-MiniLM-L6-v2 backbone (``factscout train rerank --out DIR``) and ships only what
differs from it: LoRA adapters (Hu et al. 2022, "LoRA: Low-Rank Adaptation of Large Language
Models", ICLR) on the attention projections of every layer and a small score head, fp16 in
``models/reranker_minilm_lora.npz``. The score head starts as the bi-encoder it came from: the
cosine of the mean-pooled claim tokens and the mean-pooled passage tokens of the joint encoding
(scaled), plus a learned linear term on their element-wise product.

Users with a model hub can instead load any sequence-classification cross-encoder by name with
:meth:`CrossEncoderReranker.from_hub` (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError, ModelNotFound
from factscout.nn import require_torch
from factscout.nn.adapters import FORMAT_VERSION, read_lora_file, write_lora_file
from factscout.nn.backbone import network_from_state
from factscout.nn.pairs import check_batching, run_pairs
from factscout.records import Hit, Passage, Ranking

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "reranker_minilm_lora.npz"
FORMAT = "factscout-reranker-lora"


# --- the re-ranker ---------------------------------------------------------------------------


def _minmax(values: np.ndarray) -> np.ndarray:
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 0.0:
        return np.zeros_like(values)
    out: np.ndarray = (values - lo) / (hi - lo)
    return out


class CrossEncoderReranker:
    """Scores (claim, passage) pairs with a cross-encoder and re-orders rankings by them.

    Build one with :meth:`load` (factscout's shipped weights, offline) or :meth:`from_hub` (a
    sequence-classification cross-encoder from a model hub). ``interpolation`` is the weight of
    the cross-encoder score in ``interpolate="tuned"`` (tuned on training claims, stored in the
    model file).
    """

    def __init__(
        self,
        network: Any,
        tokenizer: Any,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        interpolation: float = 1.0,
        info: Mapping[str, Any] | None = None,
        kind: str = "factscout",
        device: str = "cpu",
    ) -> None:
        check_batching(max_length, batch_size)
        if not 0.0 <= float(interpolation) <= 1.0:
            raise InputError(f"interpolation must be in [0, 1], got {interpolation!r}")
        self.network = network
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.interpolation = float(interpolation)
        self.info = dict(info or {})
        self.kind = kind
        self.device = device
        network.eval()

    # -- loading --

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, batch_size: int = 32, device: str = "cpu", backbone: str | None = None
    ) -> CrossEncoderReranker:
        """Load weights saved by :meth:`save`; by default the ones shipped with factscout (offline).

        ``backbone`` overrides where the backbone is read from (a folder holding the same model).
        """
        file = Path(path) if path is not None else MODEL_FILE
        hint = " (reinstall factscout, or train one: factscout train rerank --out DIR)" if path is None else ""
        config, arrays = read_lora_file(file, FORMAT, "re-ranker", hint=hint)
        if backbone is not None:
            config = {**config, "backbone": backbone}
        return cls.from_state(config, arrays, batch_size=batch_size, source=str(file), device=device)

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        arrays: Mapping[str, np.ndarray],
        *,
        batch_size: int = 32,
        source: str = "?",
        device: str = "cpu",
    ) -> CrossEncoderReranker:
        """A re-ranker from a config and the adapter/head arrays (what :meth:`load` reads)."""
        network, tokenizer = network_from_state(config, arrays, source)
        return cls(
            network.to(device),
            tokenizer,
            device=device,
            max_length=int(config.get("max_length", 256)),
            batch_size=batch_size,
            interpolation=float(config.get("interpolation", 1.0)),
            info=config.get("info", {}),
        )

    @classmethod
    def from_hub(cls, name: str, *, max_length: int = 512, batch_size: int = 32) -> CrossEncoderReranker:
        """A sequence-classification cross-encoder by hub name or folder (needs a model hub for names).

        Its first logit is the relevance score (the convention of sentence-transformers'
        ``CrossEncoder`` models trained on MS MARCO).
        """
        require_torch("the cross-encoder re-ranker")
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            model = AutoModelForSequenceClassification.from_pretrained(name)
            tokenizer = AutoTokenizer.from_pretrained(name)
        except OSError as exc:
            raise ModelNotFound(f"cannot load cross-encoder {name!r} ({exc})") from None

        class HubScorer:
            def __init__(self, model: Any) -> None:
                self.model = model

            def eval(self) -> None:
                self.model.eval()

            def __call__(self, **inputs: Any) -> Any:
                return self.model(**inputs).logits[:, 0]

        return cls(HubScorer(model), tokenizer, max_length=max_length, batch_size=batch_size, kind="hub")

    def save(self, path: str | Path, *, interpolation: float | None = None, config: Mapping[str, Any]) -> Path:
        """Write the adapters and head (fp16, no pickles) with ``config`` to a ``.npz`` file."""
        full = {
            **config,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "max_length": self.max_length,
            "interpolation": self.interpolation if interpolation is None else float(interpolation),
            "info": self.info,
        }
        return write_lora_file(Path(path), self.network, full)

    # -- scoring --

    def score(self, claim_text: str, passages: Sequence[Passage | str]) -> np.ndarray:
        """Relevance scores (float32, input order) of each passage for ``claim_text``."""
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise InputError(f"the re-ranker needs a non-empty claim text, got {claim_text!r}")
        texts = [p.contents if isinstance(p, Passage) else str(p) for p in passages]
        return self.score_pairs([claim_text] * len(texts), texts)

    def score_pairs(self, claims: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Scores of paired claims and passage texts, in batches ordered by length (deterministic)."""
        if len(claims) != len(texts):
            raise InputError(f"{len(claims)} claims but {len(texts)} passage texts")
        return run_pairs(
            self.network,
            self.tokenizer,
            claims,
            texts,
            max_length=self.max_length,
            batch_size=self.batch_size,
            device=self.device,
        )

    def rerank(
        self,
        claim_text: str,
        ranking: Ranking,
        passages_by_id: Mapping[str, Passage],
        top_n: int = 50,
        interpolate: float | str | None = None,
    ) -> Ranking:
        """Re-score the top ``top_n`` hits of ``ranking``; the hits below keep their order under them.

        ``interpolate``: ``None`` ranks by the cross-encoder score alone; ``"tuned"`` mixes in the
        first-stage score with the weight stored in the model file; a float ``w`` in [0, 1] scores
        ``w * minmax(cross-encoder) + (1 - w) * minmax(first stage)`` over the re-scored hits.
        Every hit keeps the query ids that found it (``found_by``) and the date-filter record.
        """
        if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 0:
            raise InputError(f"top_n must be a non-negative int, got {top_n!r}")
        weight = self._weight(interpolate)
        head = ranking.hits[:top_n]
        missing = [h.passage_id for h in head if h.passage_id not in passages_by_id]
        if missing:
            raise InputError(f"ranking {ranking.query_id!r}: no passage text for {', '.join(missing[:5])}")
        scores = self.score(claim_text, [passages_by_id[h.passage_id] for h in head])
        return rerank_with_scores(ranking, scores, top_n, weight)

    def _weight(self, interpolate: float | str | None) -> float | None:
        if interpolate is None:
            return None
        if interpolate == "tuned":
            return self.interpolation
        if isinstance(interpolate, (int, float)) and not isinstance(interpolate, bool) and 0.0 <= interpolate <= 1.0:
            return float(interpolate)
        raise InputError(f"interpolate must be None, 'tuned' or a weight in [0, 1], got {interpolate!r}")


def rerank_with_scores(
    ranking: Ranking, scores: Sequence[float] | np.ndarray, top_n: int, weight: float | None
) -> Ranking:
    """Re-order ``ranking`` given new scores for its first ``top_n`` hits (the core of :meth:`rerank`).

    With ``weight`` the head is scored ``weight * minmax(scores) + (1 - weight) * minmax(first stage)``.
    The hits below ``top_n`` keep their order and their score gaps, shifted under the lowest new
    score. Finders (``found_by``) and the date-filter record are kept.
    """
    hits = ranking.hits
    head, tail = hits[:top_n], hits[top_n:]
    new_scores = np.asarray(scores, dtype=np.float64)
    if new_scores.shape != (len(head),):
        raise InputError(f"ranking {ranking.query_id!r}: {new_scores.shape} scores for {len(head)} re-scored hits")
    if not head:
        return Ranking(ranking.query_id, hits, ranking.date_filter)
    if weight is not None:
        first = np.array([h.score for h in head], dtype=np.float64)
        new_scores = weight * _minmax(new_scores) + (1.0 - weight) * _minmax(first)
    new = [Hit(h.passage_id, float(s), found_by=h.found_by) for h, s in zip(head, new_scores, strict=True)]
    if tail:
        floor, top_tail = float(new_scores.min()) - 1.0, tail[0].score
        new += [Hit(h.passage_id, floor - (top_tail - h.score), found_by=h.found_by) for h in tail]
    return Ranking(ranking.query_id, new, ranking.date_filter)
