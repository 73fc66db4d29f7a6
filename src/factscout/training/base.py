"""The trainer role: every trained model has one :class:`Trainer` registered in :data:`TRAINERS`
under the name of its ``factscout train`` sub-command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from factscout.registry import Registry


@runtime_checkable
class Trainer(Protocol):
    """A trained model's training entry: ``name`` (the sub-command), ``module`` (where the
    recipe lives), ``summary`` (one line for ``factscout train --help``)."""

    @property
    def name(self) -> str: ...

    @property
    def module(self) -> str: ...

    @property
    def summary(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TrainerInfo:
    name: str
    module: str
    summary: str


TRAINERS: Registry[Trainer] = Registry("trainer")


def _add(name: str, module: str, summary: str) -> None:
    TRAINERS.register(name)(TrainerInfo(name, f"factscout.training.{module}", summary))


_add("stance", "stance", "the stance head (SBERT-NLI features of frozen MiniLM embeddings)")
_add("stance-cross", "stance_cross", "the stance cross-encoder (MiniLM, LoRA or full fine-tuning, 3-class head)")
_add("rerank", "rerank", "the cross-encoder re-ranker (LoRA over MiniLM)")
_add("selector", "selector", "the BIO sentence tagger (evidence selector)")
_add("classifier", "classifier", "the verdict classifier (claim + evidence features)")
_add("qgen", "qgen", "the qgen query generator")
_add("dense", "dense", "the dense retriever's encoder adapter (LoRA over MiniLM)")
_add("verdict-aggregator", "verdict_aggregator", "the learned verdict aggregator (top-k stances -> calibrated verdict)")
_add("rewrite", "rewrite", "a rewrite policy (decision transformer or one-action classifier) from BFS trajectories")
_add(
    "rewrite-ranker",
    "rewrite_ranker",
    "the candidate-ranking rewrite policy (learned from the endpoint's rewards; no trajectories)",
)
_add("claim-match", "claim_match.train", "the claim-match model (learned BM25 + MiniLM fusion for fact-check lookup)")
