"""The re-ranker contract: ``rerank(claim, ranking, passages) -> Ranking``, and its registry.

A re-ranker returns a new ranking of the same hits (same finders, same date-filter record) for
the claim; ``passages`` gives each passage by id (a dict or a retriever's passage store). The
check pipeline applies the re-rankers its settings name in turn, with no case for any of them.

``RERANKERS``: ``cross-encoder`` (factscout's LoRA cross-encoder,
:class:`~factscout.rerank.cross_encoder.CrossEncoderReranker`, over the top ``top_n`` hits, its
score interpolated with the first-stage score) and ``time-aware`` (a temporal ranking mixed in,
:class:`~factscout.temporal.rerank.TimeAwareReranker`). A factory is ``factory(**options) ->
Reranker``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from factscout.records import Claim, PassageLookup, Ranking
from factscout.registry import Registry
from factscout.rerank.cross_encoder import CrossEncoderReranker
from factscout.temporal.rerank import TimeAwareReranker


@runtime_checkable
class Reranker(Protocol):
    """Re-orders a claim's ranking."""

    def rerank(self, claim: Claim, ranking: Ranking, passages: PassageLookup) -> Ranking: ...


RERANKERS: Registry[Callable[..., Reranker]] = Registry("re-ranker")


def make_reranker(name: str, **options: Any) -> Reranker:
    """The re-ranker registered as ``name`` (unknown names list the known ones)."""
    return RERANKERS[name](**options)


@dataclass(frozen=True, slots=True)
class CrossEncoderStep:
    """The cross-encoder as a pipeline step: re-scores the top ``top_n`` hits with ``model``,
    ``interpolate`` as in :meth:`~factscout.rerank.cross_encoder.CrossEncoderReranker.rerank`
    (``"tuned"``: the weight stored in the model file)."""

    model: CrossEncoderReranker
    top_n: int = 50
    interpolate: float | str | None = "tuned"

    def rerank(self, claim: Claim, ranking: Ranking, passages: PassageLookup) -> Ranking:
        return self.model.rerank(claim.text, ranking, passages, top_n=self.top_n, interpolate=self.interpolate)  # type: ignore[arg-type]


@RERANKERS.register("cross-encoder")
def _cross_encoder(
    model: CrossEncoderReranker | None = None,
    *,
    path: str | Path | None = None,
    top_n: int = 50,
    interpolate: float | str | None = "tuned",
) -> CrossEncoderStep:
    return CrossEncoderStep(model if model is not None else CrossEncoderReranker.load(path), top_n, interpolate)


RERANKERS.register("time-aware")(TimeAwareReranker)

__all__ = ["RERANKERS", "CrossEncoderStep", "Reranker", "make_reranker"]
