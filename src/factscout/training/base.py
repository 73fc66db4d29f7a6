"""The trainer role: every trained model has one :class:`Trainer` registered in :data:`TRAINERS`
under the name of its ``factscout train`` sub-command, with the config dataclass that holds its
defaults (the sub-command's options are generated from it: :mod:`factscout.cli.train_options`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

from factscout.registry import Registry


@runtime_checkable
class Trainer(Protocol):
    """A trained model's training entry: ``name`` (the sub-command), ``module`` (where the
    recipe lives), ``summary`` (one line for ``factscout train --help``), ``config`` (the name in
    ``module`` of the config dataclass holding the trainer's defaults; None: it has none)."""

    @property
    def name(self) -> str: ...

    @property
    def module(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def config(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class TrainerInfo:
    name: str
    module: str
    summary: str
    config: str | None = None


TRAINERS: Registry[Trainer] = Registry("trainer")

T = TypeVar("T")


def described(default: T, help: str) -> T:
    """A config field with a default and the help its ``factscout train`` option shows."""
    return field(default=default, metadata={"help": help})


def _add(name: str, module: str, summary: str, config: str | None = None) -> None:
    TRAINERS.register(name)(TrainerInfo(name, f"factscout.training.{module}", summary, config))


_add("stance", "stance.head", "the stance head (SBERT-NLI features of frozen MiniLM embeddings)", "HeadConfig")
_add(
    "stance-cross",
    "stance.cross",
    "the stance cross-encoder (MiniLM, LoRA or full fine-tuning, 3-class head)",
    "CrossConfig",
)
_add("rerank", "rerank.trainer", "the cross-encoder re-ranker (LoRA over MiniLM)", "TrainConfig")
_add("selector", "selector.trainer", "the BIO sentence tagger (evidence selector)", "TrainConfig")
_add("classifier", "verdict.classifier", "the verdict classifier (claim + evidence features)", "ClassifierConfig")
_add("qgen", "qgen.trainer", "the qgen query generator")
_add("dense", "dense.trainer", "the dense retriever's encoder adapter (LoRA over MiniLM)", "TrainConfig")
_add(
    "verdict-aggregator",
    "verdict.aggregator",
    "the learned verdict aggregator (top-k stances -> calibrated verdict)",
    "AggregatorConfig",
)
_add(
    "rewrite",
    "rewrite.trainer",
    "a rewrite policy (decision transformer or one-action classifier) from BFS trajectories",
    "TrainSettings",
)
_add(
    "rewrite-ranker",
    "rewrite.ranker",
    "the candidate-ranking rewrite policy (learned from the endpoint's rewards; no trajectories)",
    "RankerSettings",
)
_add(
    "claim-match",
    "claim_match.config",
    "the claim-match model (learned BM25 + MiniLM fusion for fact-check lookup)",
    "ClaimMatchConfig",
)
_add(
    "checkworthy",
    "checkworthy.trainer",
    "the check-worthiness classifier (linear on MiniLM embeddings, and a MiniLM fine-tune)",
    "CheckworthyConfig",
)
