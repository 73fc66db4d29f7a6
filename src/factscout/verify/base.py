"""The two verification contracts and their registries.

- :class:`StanceModel`: ``predict(claim, sentences) -> [Stance]``, one
  :class:`~factscout.records.Stance` per :class:`~factscout.records.Sentence`, in input order.
  ``STANCE_MODELS``: ``head`` (the SBERT-style head, :class:`~factscout.verify.stance.StanceHead`),
  ``cross`` (the cross-encoder, :class:`~factscout.verify.cross_stance.CrossStanceModel`),
  ``nli`` (any sentence-transformers ``CrossEncoder`` NLI model,
  :class:`~factscout.verify.nli.NliStanceModel`) and ``ensemble`` (several of them pooled,
  ``ensemble:cross+head=0.5``, :class:`~factscout.verify.ensemble.EnsembleStance`). A factory is
  ``factory(encoder=None, **options) -> StanceModel``; ``encoder`` is the sentence encoder the check pipeline shares between its steps
  (a model that reads text pairs itself ignores it). A name may carry an argument, ``kind:arg``
  (``nli:cross-encoder/nli-deberta-v3-small``): the text after the first colon goes to the
  factory of ``kind`` as its ``arg`` keyword; only factories with an ``arg`` parameter take one,
  and for them it is required. A factory may also carry ``check_arg(arg)`` (:class:`ChecksArg`),
  which :func:`split_stance_name` calls so that a bad argument fails before any model loads.
  Optional capabilities of a stance model, each a small protocol checked with ``isinstance``:
  :class:`PairStanceModel` (``predict_pairs`` over text pairs at once, the cross-encoders),
  :class:`EmbeddingStanceModel` (``predict_proba`` over the vectors of its ``encoder``, the head)
  and :class:`TunedStanceModel` (``rule_thresholds``: the count rule's thresholds tuned with it).
- :class:`VerdictMethod`: ``judge(claim, stances, ranking, passages) -> Verdict``, the claim's
  :class:`~factscout.records.Verdict` from its sentence stances and its ranked evidence.
  ``VERDICT_METHODS``: ``rule`` (the Quin+ count rule, :class:`~factscout.verify.verdict.CountRule`)
  and ``classifier`` (QuanTemp++, :class:`~factscout.verify.classifier.ClassifierVerdict`). A
  factory is ``factory(rule=None, classifier=None) -> VerdictMethod``: ``rule`` the count rule
  whose counted sentences every verdict reports, ``classifier`` a trained classifier or a
  function that loads one on first use. A verdict method trained on one stance model's output
  says which (:class:`TrainedVerdict`, ``trained_with``).

Implementations register beside their class (``STANCE_MODELS.register("head")(...)``); importing
:mod:`factscout.verify` registers the shipped ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from factscout.errors import InputError
from factscout.records import Claim, PassageLookup, Ranking, Sentence, Stance, Verdict
from factscout.registry import Registry

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class StanceModel(Protocol):
    """Classifies each evidence sentence as supports / refutes / not enough info for a claim."""

    def predict(self, claim: Claim, sentences: Sequence[Sentence]) -> list[Stance]: ...


@runtime_checkable
class VerdictMethod(Protocol):
    """Gives a claim's verdict from its sentence stances and its ranked evidence passages."""

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict: ...


@runtime_checkable
class ChecksArg(Protocol):
    """A stance model factory that checks its ``kind:arg`` argument before any model loads
    (``check_arg(arg)`` raises :class:`~factscout.errors.InputError` for a bad one)."""

    def check_arg(self, arg: str) -> None: ...


@runtime_checkable
class PairStanceModel(Protocol):
    """A stance model that scores (claim, sentence) text pairs at once: ``(n, 3)`` probabilities
    in the order of :data:`~factscout.records.STANCE_LABELS`."""

    def predict_pairs(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class EmbeddingStanceModel(Protocol):
    """A stance model that classifies pairs of sentence vectors made by its ``encoder``
    (``None``: it has none yet): ``predict_proba(claim_vectors, sentence_vectors) -> (n, 3)``."""

    encoder: Any

    def predict_proba(self, claim_vectors: np.ndarray, sentence_vectors: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class TunedStanceModel(Protocol):
    """A stance model that carries the count rule's thresholds tuned with it,
    ``(min_evidence, min_confidence, min_share)`` (``None``: the defaults apply)."""

    @property
    def rule_thresholds(self) -> tuple[int, float, float] | None: ...


@runtime_checkable
class TrainedVerdict(Protocol):
    """A verdict method trained on the stances of one stance model: its name (``None``: not recorded)."""

    @property
    def trained_with(self) -> str | None: ...


@runtime_checkable
class DescribedModel(Protocol):
    """A model that says where it came from (file, sha256, training data...): reports record ``info``."""

    info: Mapping[str, Any]


@runtime_checkable
class HasInt8Form(Protocol):
    """A stance model factory whose model also runs dynamically quantised to int8: the registered
    name of that form (``cross`` -> ``cross-int8``), which checks load unless told ``fast=False``."""

    @property
    def int8(self) -> str: ...


STANCE_MODELS: Registry[Callable[..., StanceModel]] = Registry("stance model")
VERDICT_METHODS: Registry[Callable[..., VerdictMethod]] = Registry("verdict method")

RULE_TUNED_WITH = "head"
"""The stance model the count rule's default thresholds were tuned with; another model may carry
its own (:class:`TunedStanceModel`)."""


def stance_inputs(claim: str | Claim, sentences: Sequence[Sentence | str]) -> tuple[str, list[Sentence]]:
    """What every stance model's ``predict`` starts from: the claim's text (an error when empty)
    and the sentences as :class:`Sentence` records (a plain string is a sentence of an anonymous
    passage, ``passage_id=""``, at its position in ``sentences``)."""
    claim_text = getattr(claim, "text", claim)
    if not isinstance(claim_text, str) or not claim_text.strip():
        raise InputError(f"stance needs a non-empty claim text, got {claim!r}")
    return claim_text, [s if isinstance(s, Sentence) else Sentence("", i, s) for i, s in enumerate(sentences)]


def split_stance_name(name: str) -> tuple[str, str | None]:
    """``"kind:arg"`` -> ``("kind", "arg")``, a plain ``"kind"`` -> ``("kind", None)``, checked.

    A kind whose factory's ``arg`` defaults to ``None`` takes one optionally (``cross`` is the
    shipped model, ``cross:<file>`` a trained one). An unknown kind raises
    :class:`~factscout.errors.UnknownName` listing the known ones; an argument given to a kind
    that takes none, or missing (or empty after the colon) for one that needs it, an
    :class:`~factscout.errors.InputError`. Settings validate their stance name with it, so a bad
    name fails before any model loads.
    """
    if not isinstance(name, str):
        raise InputError(f"a stance model name must be a string, got {name!r}")
    kind, colon, arg = name.partition(":")
    param = inspect.signature(STANCE_MODELS[kind]).parameters.get("arg")
    if colon and param is None:
        raise InputError(f"stance model {kind!r} takes no ':' argument, got {name!r}")
    optional = param is not None and param.default is None  # ``cross`` or ``cross:<model file>``
    if param is not None and not arg.strip() and not (optional and not colon):
        raise InputError(f"stance model {kind!r} needs an argument: {kind}:<...>, got {name!r}")
    factory = STANCE_MODELS[kind]
    if colon and isinstance(factory, ChecksArg):  # e.g. an ensemble's member names
        factory.check_arg(arg.strip())
    return kind, (arg.strip() if colon else None)


def stance_model_takes(name: str, option: str) -> bool:
    """Whether the factory of stance model ``name`` (plain or ``kind:arg``) takes the keyword
    ``option`` (``device``...): it names it, or passes ``**options`` on to the model's loader."""
    params = inspect.signature(STANCE_MODELS[split_stance_name(name)[0]]).parameters
    return option in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def make_stance_model(name: str, *, encoder: Any = None, **options: Any) -> StanceModel:
    """The stance model registered as ``name``, or ``kind:arg`` (unknown names list the known ones)."""
    kind, arg = split_stance_name(name)
    if arg is not None:
        options["arg"] = arg
    return STANCE_MODELS[kind](encoder=encoder, **options)


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
    "split_stance_name",
    "stance_model_takes",
]
