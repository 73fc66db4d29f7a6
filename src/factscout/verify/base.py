"""The two verification contracts and their registries.

- :class:`StanceModel`: ``predict(claim, sentences) -> [Stance]``, one
  :class:`~factscout.records.Stance` per :class:`~factscout.records.Sentence`, in input order.
  ``STANCE_MODELS``: ``head`` (the SBERT-style head, :class:`~factscout.verify.stance.StanceHead`)
  and ``cross`` (the cross-encoder, :class:`~factscout.verify.cross_stance.CrossStanceModel`).
  A factory is ``factory(encoder=None, **options) -> StanceModel``; ``encoder`` is the sentence
  encoder the check pipeline shares between its steps (a model that reads text pairs itself
  ignores it).
- :class:`VerdictMethod`: ``judge(claim, stances, ranking, passages) -> Verdict``, the claim's
  :class:`~factscout.records.Verdict` from its sentence stances and its ranked evidence.
  ``VERDICT_METHODS``: ``rule`` (the Quin+ count rule, :class:`~factscout.verify.verdict.CountRule`)
  and ``classifier`` (QuanTemp++, :class:`~factscout.verify.classifier.ClassifierVerdict`). A
  factory is ``factory(rule=None, classifier=None) -> VerdictMethod``: ``rule`` the count rule
  whose counted sentences every verdict reports, ``classifier`` a trained classifier or a
  function that loads one on first use.

Implementations register beside their class (``STANCE_MODELS.register("head")(...)``); importing
:mod:`factscout.verify` registers the shipped ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from factscout.records import Claim, PassageLookup, Ranking, Sentence, Stance, Verdict
from factscout.registry import Registry


@runtime_checkable
class StanceModel(Protocol):
    """Classifies each evidence sentence as supports / refutes / not enough info for a claim."""

    def predict(self, claim: Claim, sentences: Sequence[Sentence]) -> list[Stance]: ...


@runtime_checkable
class VerdictMethod(Protocol):
    """Gives a claim's verdict from its sentence stances and its ranked evidence passages."""

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict: ...


STANCE_MODELS: Registry[Callable[..., StanceModel]] = Registry("stance model")
VERDICT_METHODS: Registry[Callable[..., VerdictMethod]] = Registry("verdict method")

RULE_TUNED_WITH = "head"
"""The stance model the count rule's default thresholds were tuned with; another model may carry
its own (a ``rule_thresholds`` attribute: ``(min_evidence, min_confidence)``)."""


def make_stance_model(name: str, *, encoder: Any = None, **options: Any) -> StanceModel:
    """The stance model registered as ``name`` (unknown names list the known ones)."""
    return STANCE_MODELS[name](encoder=encoder, **options)


def make_verdict_method(name: str, **options: Any) -> VerdictMethod:
    """The verdict method registered as ``name`` (unknown names list the known ones)."""
    return VERDICT_METHODS[name](**options)


__all__ = [
    "RULE_TUNED_WITH",
    "STANCE_MODELS",
    "VERDICT_METHODS",
    "StanceModel",
    "VerdictMethod",
    "make_stance_model",
    "make_verdict_method",
]
