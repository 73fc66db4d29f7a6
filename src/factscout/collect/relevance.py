"""The relevance filter: keep a search result when its snippet is close to the query.

QuanTemp++ keeps a result for a sub-query when the cosine similarity of their sentence
embeddings reaches a threshold; 0.45 is the default here. Embeddings come from factscout's
offline encoder (all-MiniLM-L6-v2: int8 ONNX when installed, else the fp32 model; see
``factscout.text.onnx_encoder``), L2-normalised, so the cosine is a dot product. A result
with an empty snippet is scored on its title.

The encoder runs one thread: the batches here are small (a query and its ten snippets), and on
shared cores extra threads spin-wait for a busy core (as for ``factscout serve --threads``), so
a second thread makes such batches slower, not faster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from factscout.collect.providers.base import SearchResult
from factscout.errors import InputError

Embed = Callable[[Sequence[str]], np.ndarray]
DEFAULT_THRESHOLD = 0.45


def default_embed() -> Embed:
    """MiniLM int8 on ONNX Runtime with one thread, else the fp32 sentence-transformers model."""
    from factscout.errors import MissingDependency
    from factscout.text.onnx_encoder import OnnxEncoder

    try:
        return OnnxEncoder(threads=1).encode
    except MissingDependency:
        from factscout.text.encoder import Encoder

        return Encoder().encode


class RelevanceFilter:
    """``scores(query, results)``: cosine(query, snippet); ``relevant`` when >= ``threshold``."""

    def __init__(
        self,
        threshold: float = DEFAULT_THRESHOLD,
        embed: Embed | None = None,
        *,
        load: Callable[[], Embed] = default_embed,
    ) -> None:
        if not -1.0 <= threshold <= 1.0:
            raise InputError(f"relevance threshold is a cosine, in [-1, 1]; got {threshold!r}")
        self.threshold = float(threshold)
        self._embed = embed
        self._load = load

    @property
    def embed(self) -> Embed:
        """The embedding function, loaded on first use (a run whose searches all fail loads no model)."""
        if self._embed is None:
            self._embed = self._load()
        return self._embed

    def scores(self, query: str, results: Sequence[SearchResult]) -> list[float]:
        """The cosine of each result's snippet (or title) to the query, rounded to 4 decimals
        (so records and decisions do not hang on the last float bits)."""
        if not results:
            return []
        texts = [query] + [r.snippet or r.title or r.url for r in results]
        vectors = np.asarray(self.embed(texts), dtype=np.float32)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        vectors = vectors / norms
        return [round(float(s), 4) for s in vectors[1:] @ vectors[0]]

    def relevant(self, score: float) -> bool:
        return score >= self.threshold
