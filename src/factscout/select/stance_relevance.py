"""Relevance before stance: keep a sentence when the stance cross-encoder finds it is evidence.

The stance cross-encoder (:class:`~factscout.verify.cross_stance.CrossStanceModel`) was trained
on SciFact rationale sentences (supports / refutes) against the other sentences of the same cited
abstracts and top retrieved sentences of other abstracts (not enough info): its
``1 - P(not enough info)`` is a claim-aware relevance score learned on rationales, the question
"is this sentence evidence about *this* claim?" that the check pipeline's stance step asks next.

The ``stance-relevance`` selector is the :class:`~factscout.select.relevance.RelevanceSelector`
rule over that score,

    score = (1 - P(not enough info)) + cosine_weight * cos(claim, sentence)  >=  threshold
    and cos(claim, sentence) >= min_cosine

with its numbers in ``models/stance_relevance.json`` (``scorer: "stance"``), chosen by
``python benchmarks/selection.py --write-stance-setting`` on the 92 *dev* claims of the stance
model's split (never on the fitting claims it was trained on, where its scores are
over-confident, and never on the held-out claims).

The model caches its predictions per (claim, sentence), so when the stance step runs the same
instance on the kept sentences it reads them back instead of scoring them again: the check
pipeline passes its ``cross`` stance model as this selector's ``stance_model`` option.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.records import NOT_ENOUGH_INFO, STANCE_LABELS
from factscout.select.base import register_selector
from factscout.select.relevance import RelevanceSelector, read_setting

STANCE_SETTING_FILE = Path(__file__).parent / "models" / "stance_relevance.json"
_NEI = STANCE_LABELS.index(NOT_ENOUGH_INFO)


class StanceRelevance:
    """``1 - P(not enough info)`` of the stance cross-encoder, in [0, 1].

    ``model``: anything with ``predict_pairs(claims, sentences) -> (n, 3)`` probabilities in
    :data:`~factscout.records.STANCE_LABELS` order (default: the shipped
    :class:`~factscout.verify.cross_stance.CrossStanceModel`, loaded on first use)."""

    name = "stance"

    def __init__(self, model: Any = None) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        if self._model is None:
            from factscout.verify.cross_stance import CrossStanceModel

            self._model = CrossStanceModel.load()
        return self._model

    def relevance(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        probs = np.asarray(self.model.predict_pairs(list(claims), list(sentences)), dtype=np.float64)
        if probs.ndim != 2 or probs.shape != (len(sentences), len(STANCE_LABELS)):
            raise ValueError(f"the stance model gave probabilities of shape {probs.shape} for {len(sentences)} pairs")
        out: np.ndarray = 1.0 - probs[:, _NEI]
        return out


@register_selector("stance-relevance", stance_model="cross")
def _stance_relevance_selector(
    encoder: Any = None,
    threshold: float | None = None,
    setting: str | Path | None = None,
    stance_model: Any = None,
) -> RelevanceSelector:
    """``setting``: a setting file chosen for the ``stance`` scorer (``None``: the shipped
    ``models/stance_relevance.json``); ``threshold``: overrides its cut on the combined score;
    ``stance_model``: the stance cross-encoder instance to score with (``None``: the shipped one)."""
    chosen = read_setting(setting if setting is not None else STANCE_SETTING_FILE, scorer="stance")
    if threshold is not None:
        chosen = replace(chosen, threshold=threshold)
    return RelevanceSelector(chosen, scorer=StanceRelevance(stance_model), encoder=encoder)


__all__ = ["STANCE_SETTING_FILE", "StanceRelevance"]
