"""The verdict on a claim from the stances of its evidence sentences: the Quin+ count rule.

Quin+ (Samarinas, Hsu & Lee 2021, "Improving Evidence Retrieval for Automated Explainable
Fact-Checking", NAACL demos) classifies each selected sentence with an NLI model and counts:
the claim is inconclusive when too few sentences take a confident side, else "probably true"
when supporting sentences outnumber refuting ones and "probably false" otherwise. Here:

- a sentence *supports* (*refutes*) when its predicted stance is ``supports`` (``refutes``) with
  probability >= ``min_confidence``;
- fewer than ``min_evidence`` such sentences -> ``not enough evidence``;
- else ``supported`` if supporting > refuting, ``refuted`` if refuting > supporting, and a tie
  -> ``not enough evidence``.

``min_evidence`` and ``min_confidence`` are tuned on training claims with :func:`tune_rule`
(grid search maximising claim-level macro-F1). The defaults below come from that tuning on
SciFact train claims (stance model out-of-fold predictions over the sentences the threshold
selector keeps from each claim's cited abstracts; see ``models/MODEL_CARD.md``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from factscout.errors import InputError
from factscout.evaluate.classification import accuracy, macro_f1
from factscout.records import (
    NOT_ENOUGH_EVIDENCE,
    REFUTED,
    REFUTES,
    RULE_VERDICT_LABELS,
    SUPPORTED,
    SUPPORTS,
    Claim,
    PassageLookup,
    Ranking,
    Stance,
    Verdict,
    VerdictLabel,
)
from factscout.verify.base import VERDICT_METHODS

VERDICT_LABELS = RULE_VERDICT_LABELS
"""The count rule's three verdicts (the name the trainers and benchmarks import; every label a
report can carry is :data:`factscout.records.VERDICT_LABELS`)."""
METHOD = "quin+ count rule"
L = TypeVar("L", bound=str)

# Tuned on the 607 training-part SciFact train claims (out-of-fold stances of the sentences with
# cosine >= 0.62 in the cited abstracts): claim macro-F1 0.518 there, 0.579 on the 202 held-out
# claims (majority baseline 0.202). MODEL_CARD.md, "Verdict"; `factscout train stance` reproduces it.
DEFAULT_MIN_EVIDENCE = 1
DEFAULT_MIN_CONFIDENCE = 0.4
DEFAULT_MIN_SHARE = 0.5  # Quin+'s rule: the side with more counted sentences wins

MIN_EVIDENCE_GRID: tuple[int, ...] = (1, 2, 3, 4)
MIN_CONFIDENCE_GRID: tuple[float, ...] = tuple(round(0.34 + 0.02 * i, 2) for i in range(32))  # 0.34 .. 0.96


def count_rule(
    stances: Iterable[Stance], *, min_evidence: int, min_confidence: float, min_share: float = DEFAULT_MIN_SHARE
) -> Verdict:
    """The Quin+ count rule (Samarinas et al. 2021) over one claim's sentence stances: the side with
    more counted sentences wins. ``min_share`` > 0.5 asks more of a definite verdict: the winning
    side must hold more than that share of the counted sentences, so that mixed evidence (5
    refuting against 4 supporting) is not enough evidence rather than a call; 0.5 is Quin+'s rule."""
    if not isinstance(min_evidence, int) or min_evidence < 1:
        raise InputError(f"min_evidence must be an int >= 1, got {min_evidence!r}")
    if not 0.0 <= min_confidence <= 1.0:
        raise InputError(f"min_confidence must be in [0, 1], got {min_confidence!r}")
    if not 0.5 <= min_share < 1.0:
        raise InputError(f"min_share must be in [0.5, 1), got {min_share!r}")
    supporting: list[Stance] = []
    refuting: list[Stance] = []
    neutral: list[Stance] = []
    for s in stances:
        if s.label == SUPPORTS and s.confidence >= min_confidence:
            supporting.append(s)
        elif s.label == REFUTES and s.confidence >= min_confidence:
            refuting.append(s)
        else:
            neutral.append(s)
    label: VerdictLabel
    n_sup, n_ref = len(supporting), len(refuting)
    # min_confidence is a threshold on each sentence's stance probability, not the verdict's confidence
    counts = (
        f"{n_sup} supporting, {n_ref} refuting, {len(neutral)} neutral or unsure sentences "
        f"(a sentence counts for a side when its stance probability is at least {min_confidence:g})"
    )
    if n_sup + n_ref < min_evidence:
        label, why = NOT_ENOUGH_EVIDENCE, f"fewer than {min_evidence} supporting or refuting sentences"
    elif n_sup != n_ref and max(n_sup, n_ref) <= min_share * (n_sup + n_ref):
        label, why = NOT_ENOUGH_EVIDENCE, f"mixed evidence: neither side has more than {min_share:.0%} of it"
    elif n_sup > n_ref:
        label, why = SUPPORTED, "more supporting than refuting sentences"
    elif n_ref > n_sup:
        label, why = REFUTED, "more refuting than supporting sentences"
    else:
        label, why = NOT_ENOUGH_EVIDENCE, "as many supporting as refuting sentences"
    return Verdict(label, tuple(supporting), tuple(refuting), tuple(neutral), f"{why}: {counts}", METHOD)


class CountRule:
    """The count rule as an aggregator: ``CountRule(min_evidence, min_confidence[, min_share])(stances) -> Verdict``."""

    def __init__(
        self,
        min_evidence: int = DEFAULT_MIN_EVIDENCE,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        min_share: float = DEFAULT_MIN_SHARE,
    ):
        count_rule((), min_evidence=min_evidence, min_confidence=min_confidence, min_share=min_share)  # validates
        self.min_evidence = min_evidence
        self.min_confidence = min_confidence
        self.min_share = min_share

    def __call__(self, stances: Iterable[Stance]) -> Verdict:
        return count_rule(
            stances, min_evidence=self.min_evidence, min_confidence=self.min_confidence, min_share=self.min_share
        )

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict:
        """The :class:`~factscout.verify.base.VerdictMethod` form: the rule reads the stances only."""
        return self(stances)

    def __repr__(self) -> str:
        share = f", min_share={self.min_share:g}" if self.min_share != DEFAULT_MIN_SHARE else ""
        return f"CountRule(min_evidence={self.min_evidence}, min_confidence={self.min_confidence:g}{share})"


@VERDICT_METHODS.register("rule")
def _count_rule(rule: CountRule | None = None, **_: Any) -> CountRule:
    """The given count rule, else one with the tuned defaults."""
    return rule if rule is not None else CountRule()


# --- tuning and baselines --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RuleFit:
    """The count-rule parameters chosen by :func:`tune_rule` and their claim-level scores."""

    min_evidence: int
    min_confidence: float
    macro_f1: float
    accuracy: float

    def rule(self) -> CountRule:
        return CountRule(self.min_evidence, self.min_confidence)


def tune_rule(
    claim_stances: Sequence[Sequence[Stance]],
    gold: Sequence[str],
    *,
    min_evidence_grid: Sequence[int] = MIN_EVIDENCE_GRID,
    min_confidence_grid: Sequence[float] = MIN_CONFIDENCE_GRID,
) -> RuleFit:
    """Grid-search ``min_evidence`` x ``min_confidence`` for the best claim-level macro-F1.

    ``claim_stances[i]`` are the sentence stances of claim ``i`` and ``gold[i]`` its verdict
    (one of :data:`VERDICT_LABELS`). Ties in macro-F1 go to the smaller ``min_evidence``, then
    the smaller ``min_confidence`` (the grid order).
    """
    if len(claim_stances) != len(gold) or not gold:
        raise InputError(f"tune_rule needs one gold verdict per claim, got {len(claim_stances)} and {len(gold)}")
    bad = sorted({g for g in gold if g not in VERDICT_LABELS})
    if bad:
        raise InputError(f"gold verdicts {bad} are not in {', '.join(VERDICT_LABELS)}")
    best: RuleFit | None = None
    for n in min_evidence_grid:
        for c in min_confidence_grid:
            pred = [count_rule(s, min_evidence=n, min_confidence=c).label for s in claim_stances]
            fit = RuleFit(n, float(c), macro_f1(gold, pred, VERDICT_LABELS), accuracy(gold, pred))
            if best is None or fit.macro_f1 > best.macro_f1 + 1e-12:
                best = fit
    if best is None:
        raise InputError("tune_rule needs non-empty grids")
    return best


def majority_label(labels: Iterable[L]) -> L:
    """The most frequent label (ties: alphabetical), the majority-class baseline's only answer."""
    counts = Counter(labels)
    if not counts:
        raise InputError("majority_label needs at least one label")
    return min(counts, key=lambda label: (-counts[label], label))


def majority_baseline(train_labels: Iterable[str], test_labels: Sequence[str]) -> tuple[str, float, float]:
    """Predict the training majority for every test item: ``(label, accuracy, macro-F1)``.

    Macro-F1 is over :data:`VERDICT_LABELS` when the labels are verdicts, else over the labels seen.
    """
    label = majority_label(train_labels)
    predicted = [label] * len(test_labels)
    seen = set(test_labels) | {label}
    classes: Sequence[str] = VERDICT_LABELS if seen <= set(VERDICT_LABELS) else sorted(seen)
    return label, accuracy(test_labels, predicted), macro_f1(test_labels, predicted, classes)


__all__ = [
    "DEFAULT_MIN_CONFIDENCE",
    "DEFAULT_MIN_EVIDENCE",
    "NOT_ENOUGH_EVIDENCE",
    "REFUTED",
    "SUPPORTED",
    "VERDICT_LABELS",
    "CountRule",
    "RuleFit",
    "Verdict",
    "count_rule",
    "majority_baseline",
    "majority_label",
    "tune_rule",
]
