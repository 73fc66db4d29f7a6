"""Sentence selection: keep the sentences of a retrieved passage that may be evidence for a claim.

``ThresholdSelector(threshold).select(claim_text, passage_id, sentences) -> [Sentence]`` is the
Quin+ embedding-threshold selector (Samarinas et al. 2021) over SBERT embeddings (Reimers &
Gurevych 2019); ``tune_threshold`` fits the threshold to rationale annotations.
``BioTagger.load().select_passage(claim, passage)`` is the Quin+ BIO sequence tagger (factscout's
own head over frozen MiniLM token states, ``models/MODEL_CARD.md``). ``relevance`` and
``stance-relevance`` keep the sentences a cross-encoder reading claim and sentence together finds
relevant: the re-ranker's score, or the stance cross-encoder's ``1 - P(not enough info)``
(:mod:`factscout.select.relevance`, :mod:`factscout.select.stance_relevance`). All are
:class:`~factscout.select.base.Selector` s, registered in ``SELECTORS`` (``make_selector(name)``).
"""

from factscout.select import relevance, stance_relevance  # noqa: F401  (register "relevance", "stance-relevance")
from factscout.select.base import SELECTORS, Selector, make_selector, register_selector, stance_model_of
from factscout.select.tagger import BioTagger
from factscout.select.threshold import (
    DEFAULT_THRESHOLD,
    PRF,
    ScoredAbstract,
    ThresholdCv,
    ThresholdFit,
    ThresholdSelector,
    best_threshold,
    cross_validate_threshold,
    score_abstracts,
    sentence_prf,
    tune_threshold,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "PRF",
    "SELECTORS",
    "BioTagger",
    "ScoredAbstract",
    "Selector",
    "ThresholdCv",
    "ThresholdFit",
    "ThresholdSelector",
    "best_threshold",
    "cross_validate_threshold",
    "make_selector",
    "register_selector",
    "score_abstracts",
    "sentence_prf",
    "stance_model_of",
    "tune_threshold",
]
