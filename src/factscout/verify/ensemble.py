"""A stance model that combines others: ``ensemble:<member>+<member>[=weight]...``.

Each member is any stance model name (``head``, ``cross``, ``cross:<file>``, ``nli:<hub id or
folder>``), optionally followed by ``=weight`` (a positive number; default 1). The ensemble's
probabilities for a (claim, sentence) pair are the members' weighted geometric mean, renormalised:
``p ∝ prod_m p_m ** (w_m / sum w)``, i.e. the weighted mean of their log-probabilities, which is
how calibrated classifiers are usually pooled (a member that is sure a sentence is neutral pulls
the pair towards neutral however sure another is of a side).

Example: ``ensemble:cross=0.4+cross:mpnet_s2/stance_cross_minilm.npz=0.6`` (the shipped MiniLM
cross-encoder with an all-mpnet-base-v2 one, weights chosen on SciFact dev: docs/results.md,
"Inference-time levers"), or, for users with internet, the shipped model with a hub NLI model:
``ensemble:cross+nli:cross-encoder/nli-deberta-v3-base``.

The count rule's thresholds (:attr:`EnsembleStance.rule_thresholds`) are those of the heaviest
member (the first among equals) when it carries its own, else the defaults; ``CheckSettings``'s
``min_evidence``/``min_confidence`` override them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.records import STANCE_LABELS
from factscout.verify.base import (
    STANCE_MODELS,
    StanceModel,
    TunedStanceModel,
    make_stance_model,
    split_stance_name,
    stance_model_takes,
)
from factscout.verify.pairs import pair_probabilities
from factscout.verify.stance import PairwiseStance

KIND = "ensemble"
SEPARATOR = "+"


@dataclass(frozen=True, slots=True)
class Member:
    """One member of an ensemble: a stance model name and its weight."""

    name: str
    weight: float = 1.0


def parse_members(arg: str) -> list[Member]:
    """``"a+b=2"`` -> ``[Member("a", 1.0), Member("b", 2.0)]``, every member name checked.

    At least two members; a weight is a positive finite number after the last ``=`` of a member
    (text after ``=`` that is not a number stays part of the name: a path may hold ``=``). An
    ensemble inside an ensemble is refused (weight the members of one flat ensemble instead).
    """
    parts = [part.strip() for part in str(arg).split(SEPARATOR)]
    if len(parts) < 2 or not all(parts):
        raise InputError(
            f"an ensemble needs two or more stance models joined by '{SEPARATOR}' "
            f"(e.g. ensemble:cross+head=0.5), got {arg!r}"
        )
    members = []
    for part in parts:
        name, text = _split_weight(part)
        weight = 1.0 if text is None else float(text)
        if not (math.isfinite(weight) and weight > 0):
            raise InputError(f"ensemble member {part!r}: its weight must be a positive number, got {text!r}")
        if name.partition(":")[0].strip() == KIND:
            raise InputError(f"ensemble member {part!r}: an ensemble cannot hold another ensemble")
        split_stance_name(name)
        members.append(Member(name, weight))
    return members


def _split_weight(member: str) -> tuple[str, str | None]:
    """``"cross:m.npz=0.6"`` -> ``("cross:m.npz", "0.6")``; ``("head", None)`` without a weight
    (text after ``=`` that is not a number is part of the name)."""
    name, eq, text = member.strip().rpartition("=")
    try:
        float(text)
    except ValueError:
        return member.strip(), None
    return (name.strip(), text.strip()) if eq else (member.strip(), None)


def rename_members(arg: str, rename: Callable[[str], str]) -> str:
    """An ensemble's member list with ``rename`` applied to each member's name, weights kept
    (``check`` runs ``cross`` members as ``cross-int8``)."""
    renamed = []
    for part in arg.split(SEPARATOR):
        name, weight = _split_weight(part)
        renamed.append(rename(name) + ("" if weight is None else f"={weight}"))
    return SEPARATOR.join(renamed)


class EnsembleStance(PairwiseStance):
    """Stance from several stance models: the weighted geometric mean of their probabilities.

    ``predict(claim, sentences) -> [Stance]`` like every stance model; ``predict_pairs(claims,
    sentences) -> (n, 3)`` probabilities (order of :data:`STANCE_LABELS`). Any stance model can be
    a member: each scores the pairs its own way (:func:`~factscout.verify.pairs.pair_probabilities`).
    """

    def __init__(self, models: Sequence[StanceModel], weights: Sequence[float], names: Sequence[str] = ()) -> None:
        if len(models) < 2 or len(models) != len(weights):
            raise InputError(
                f"an ensemble needs two or more models, one weight each; got {len(models)} and {len(weights)}"
            )
        if not all(math.isfinite(w) and w > 0 for w in weights):
            raise InputError(f"ensemble weights must be positive numbers, got {list(weights)!r}")
        total = float(sum(weights))
        self.models = list(models)
        self.weights = [float(w) / total for w in weights]
        self.names = list(names) or [type(m).__name__ for m in models]
        self.info = {"members": " + ".join(f"{n} ({w:.3g})" for n, w in zip(self.names, self.weights, strict=True))}

    @property
    def rule_thresholds(self) -> tuple[int, float, float] | None:
        """The count-rule thresholds of the heaviest member (the first among equals), if it has its own."""
        heaviest = max(range(len(self.models)), key=lambda i: (self.weights[i], -i))
        model = self.models[heaviest]
        return (model.rule_thresholds if isinstance(model, TunedStanceModel) else None) or None

    def predict_pairs(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        """Class probabilities ``(n, 3)`` (order of :data:`STANCE_LABELS`) for paired texts
        (:func:`~factscout.verify.pairs.pair_probabilities` checks the lengths)."""
        log_mix = np.zeros((len(claims), len(STANCE_LABELS)), dtype=np.float64)
        for model, weight in zip(self.models, self.weights, strict=True):
            probs = np.asarray(pair_probabilities(model, claims, sentences), dtype=np.float64)
            log_mix += weight * np.log(np.clip(probs, 1e-12, None))
        log_mix -= log_mix.max(axis=1, keepdims=True)
        mixed = np.exp(log_mix)
        out: np.ndarray = (mixed / mixed.sum(axis=1, keepdims=True)).astype(np.float32)
        return out


class _EnsembleFactory:
    """``ensemble:<members>``: loads each member with the options it takes (``device``...) and the
    shared sentence ``encoder``."""

    def __call__(self, encoder: Any = None, arg: str = "", **options: Any) -> EnsembleStance:
        members = parse_members(arg)
        models = [
            make_stance_model(
                m.name, encoder=encoder, **{k: v for k, v in options.items() if stance_model_takes(m.name, k)}
            )
            for m in members
        ]
        return EnsembleStance(models, [m.weight for m in members], [m.name for m in members])

    @staticmethod
    def check_arg(arg: str) -> None:
        """Check an ensemble's members before any model loads (:func:`split_stance_name` calls it)."""
        parse_members(arg)


STANCE_MODELS.register(KIND)(_EnsembleFactory())

__all__ = ["KIND", "EnsembleStance", "Member", "parse_members", "rename_members"]
