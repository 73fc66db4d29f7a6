"""Stance of evidence sentences towards a claim, and the claim's verdict (Quin+).

``StanceHead.load().predict(claim, sentences) -> [Stance]`` classifies each selected
:class:`Sentence` as supports / refutes / not enough info with factscout's own SBERT-style head
(Reimers & Gurevych 2019) over frozen MiniLM embeddings; ``CountRule()(stances) -> Verdict``
applies the Quin+ count rule (Samarinas et al. 2021). ``CrossStanceModel`` is the cross-encoder
alternative (claim and sentence read together; ``factscout check --stance cross``),
``NliStanceModel`` any sentence-transformers NLI cross-encoder (``--stance nli:<hub id or folder>``),
``EnsembleStance`` several stance models pooled (``--stance ensemble:cross+nli:<id>=0.5``) and
``ClassifierVerdict`` the QuanTemp++ verdict classifier and ``LearnedVerdict`` the learned
aggregator over the top stances (``--verdict learned``). The contracts and registries
(``StanceModel``/``STANCE_MODELS``, ``VerdictMethod``/``VERDICT_METHODS``) are in
:mod:`factscout.verify.base`. Training: ``factscout train stance --out DIR`` and
``factscout train stance-cross --out DIR``.
"""

from factscout.verify.aggregate import LearnedVerdict, VerdictAggregator
from factscout.verify.base import (
    STANCE_MODELS,
    VERDICT_METHODS,
    StanceModel,
    VerdictMethod,
    make_stance_model,
    make_verdict_method,
    split_stance_name,
)
from factscout.verify.classifier import ClassifierVerdict
from factscout.verify.cross_stance import CrossStanceModel
from factscout.verify.ensemble import EnsembleStance
from factscout.verify.nli import NliStanceModel
from factscout.verify.pairs import read_pairs, score_pairs
from factscout.verify.stance import (
    NOT_ENOUGH_INFO,
    REFUTES,
    STANCE_LABELS,
    SUPPORTS,
    BadModel,
    ModelNotFound,
    Sentence,
    Stance,
    StanceHead,
    nli_features,
)
from factscout.verify.verdict import (
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_MIN_EVIDENCE,
    NOT_ENOUGH_EVIDENCE,
    REFUTED,
    SUPPORTED,
    VERDICT_LABELS,
    CountRule,
    RuleFit,
    Verdict,
    count_rule,
    majority_baseline,
    tune_rule,
)

__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "DEFAULT_MIN_EVIDENCE",
    "NOT_ENOUGH_EVIDENCE",
    "NOT_ENOUGH_INFO",
    "REFUTED",
    "REFUTES",
    "STANCE_LABELS",
    "STANCE_MODELS",
    "SUPPORTED",
    "SUPPORTS",
    "VERDICT_LABELS",
    "VERDICT_METHODS",
    "BadModel",
    "ClassifierVerdict",
    "CountRule",
    "CrossStanceModel",
    "EnsembleStance",
    "LearnedVerdict",
    "ModelNotFound",
    "NliStanceModel",
    "RuleFit",
    "Sentence",
    "Stance",
    "StanceHead",
    "StanceModel",
    "Verdict",
    "VerdictAggregator",
    "VerdictMethod",
    "count_rule",
    "majority_baseline",
    "make_stance_model",
    "make_verdict_method",
    "nli_features",
    "read_pairs",
    "score_pairs",
    "split_stance_name",
    "tune_rule",
]
