"""Re-ranking: re-score the top hits of a first-stage ranking.

``CrossEncoderReranker.load().rerank(claim_text, ranking, passages_by_id, top_n=50)`` uses the
LoRA adapters factscout trained over the offline all-MiniLM-L6-v2 (``models/MODEL_CARD.md``).
Every re-ranker of the check pipeline follows :class:`~factscout.rerank.base.Reranker`
(``rerank(claim, ranking, passages)``) and is registered in ``RERANKERS``: ``cross-encoder``
and ``time-aware``.
"""

from factscout.errors import BadModel, ModelNotFound
from factscout.rerank.base import RERANKERS, CrossEncoderStep, Reranker, make_reranker
from factscout.rerank.cross_encoder import MODEL_FILE, CrossEncoderReranker

__all__ = [
    "MODEL_FILE",
    "RERANKERS",
    "BadModel",
    "CrossEncoderReranker",
    "CrossEncoderStep",
    "ModelNotFound",
    "Reranker",
    "make_reranker",
]
