"""Re-ranking: re-score the top hits of a first-stage ranking with a cross-encoder.

``CrossEncoderReranker.load().rerank(claim_text, ranking, passages_by_id, top_n=50)`` uses the
LoRA adapters factscout trained over the offline all-MiniLM-L6-v2 (``models/MODEL_CARD.md``).
"""

from factscout.errors import BadModel, ModelNotFound
from factscout.rerank.cross_encoder import MODEL_FILE, CrossEncoderReranker

__all__ = ["MODEL_FILE", "BadModel", "CrossEncoderReranker", "ModelNotFound"]
