"""Relevance before stance: keep a sentence when the stance cross-encoder finds it is evidence.

The stance cross-encoder (:class:`~factscout.verify.cross_stance.CrossStanceModel`) was trained
on SciFact rationale sentences (supports / refutes) against the other sentences of the same cited
abstracts and top retrieved sentences of other abstracts (not enough info): its
``1 - P(not enough info)`` is a claim-aware relevance score learned on rationales, the question
"is this sentence evidence about *this* claim?" that the check pipeline's stance step asks next.

The ``stance-relevance`` selector is the :class:`~factscout.select.relevance.RelevanceSelector`
rule over that score (:class:`~factscout.select.relevance.StanceRelevance`, re-exported here),

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

from dataclasses import replace
from pathlib import Path
from typing import Any

from factscout.select.base import register_selector
from factscout.select.relevance import RelevanceSelector, StanceRelevance, read_setting

STANCE_SETTING_FILE = Path(__file__).parent / "models" / "stance_relevance.json"


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
