"""Stance consistency: how often a stance model gives the label a claim-sentence pair has by
construction.

Behavioural tests of a classifier in the manner of CheckList (Ribeiro, Wu, Guestrin & Singh,
ACL 2020, "Beyond Accuracy: Behavioral Testing of NLP Models with CheckList"): a claim with
itself or a faithful rewording is a minimum-functionality test (supports), a negation or a
reversed direction a directional one (refutes), and a sentence about another claim or another
subject tests that a model reads the claim, not its topic (not enough info). Each case is a
:class:`ConsistencyCase` of one :data:`KINDS` kind; the builders, which need the parser and the
counterfactual edits, live in :mod:`factscout.training.stance.consistency`.

The measure is per kind: the share of cases that get the :data:`EXPECTED` label, and for
:data:`SUBJECT` also the share called supports or refutes (the error the kind exists for).
:data:`TARGETS` holds the bars a model is chosen against; kinds without a target are
reported only.

Scoring takes any ``score(claims, sentences) -> (n, 3)`` probability function in
:data:`~factscout.records.STANCE_LABELS` order (``functools.partial(pair_probabilities, model)``
for a stance model), so this module depends on no model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, StanceLabel

SELF = "self"
"""The claim with itself: supports."""
PARAPHRASE = "paraphrase"
"""The claim with a faithful rule-based rewording of it: supports."""
NEGATION = "negation"
"""The claim with its negation: refutes."""
DIRECTION = "direction"
"""The claim with its direction word reversed ("reduces" -> "increases"): refutes."""
UNRELATED = "unrelated"
"""The claim with another claim of its domain that shares few words: not enough info."""
SUBJECT = "subject"
"""The claim with a sentence about another subject, population, exposure or outcome: not enough info."""
KINDS = (SELF, PARAPHRASE, NEGATION, DIRECTION, UNRELATED, SUBJECT)
EXPECTED: dict[str, StanceLabel] = {
    SELF: SUPPORTS,
    PARAPHRASE: SUPPORTS,
    NEGATION: REFUTES,
    DIRECTION: REFUTES,
    UNRELATED: NOT_ENOUGH_INFO,
    SUBJECT: NOT_ENOUGH_INFO,
}
"""The label each kind's pairs have by construction."""

Share = Literal["expected", "decided"]


@dataclass(frozen=True, slots=True)
class Target:
    """A bar on one kind's rate: ``share`` is ``"expected"`` (the share with the kind's expected
    label) or ``"decided"`` (the share called supports or refutes); ``at_least`` says whether
    the share must reach ``value`` or stay at or below it."""

    kind: str
    share: Share
    at_least: bool
    value: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"consistency kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.share not in ("expected", "decided"):
            raise InputError(f"a target's share is 'expected' or 'decided', got {self.share!r}")
        if not 0.0 <= self.value <= 1.0:
            raise InputError(f"a target is a share in [0, 1], got {self.value!r}")

    def measured(self, rate: KindRate) -> float:
        return rate.expected_share if self.share == "expected" else rate.decided_share

    def met(self, rate: KindRate) -> bool:
        value = self.measured(rate)
        return value >= self.value if self.at_least else value <= self.value

    def __str__(self) -> str:
        what = EXPECTED[self.kind] if self.share == "expected" else "supports/refutes"
        return f"{what} {'≥' if self.at_least else '≤'} {self.value:.0%}"


TARGETS: dict[str, Target] = {
    SELF: Target(SELF, "expected", True, 0.98),
    UNRELATED: Target(UNRELATED, "expected", True, 0.98),
    NEGATION: Target(NEGATION, "expected", True, 0.80),
    SUBJECT: Target(SUBJECT, "decided", False, 0.10),
}
"""The bars a model must clear (paraphrase and direction have none: reported only)."""


@dataclass(frozen=True, slots=True)
class ConsistencyCase:
    """One pair of the suite: ``claim`` and ``sentence`` with the label ``kind`` gives it.
    ``case_id`` is ``<domain>/<claim_id>/<kind>/<n>``, stable for a seed."""

    case_id: str
    domain: str
    claim_id: str
    kind: str
    claim: str
    sentence: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"consistency kind {self.kind!r} is not one of {', '.join(KINDS)}")
        for name in ("claim", "sentence"):
            if not getattr(self, name).strip():
                raise InputError(f"consistency case {self.case_id!r}: empty {name}")

    @property
    def expected(self) -> StanceLabel:
        return EXPECTED[self.kind]

    def row(self) -> dict[str, str]:
        return {
            "id": self.case_id,
            "domain": self.domain,
            "claim_id": self.claim_id,
            "kind": self.kind,
            "claim": self.claim,
            "sentence": self.sentence,
            "expected": self.expected,
        }


@dataclass(frozen=True, slots=True)
class KindRate:
    """The labels one kind's cases got: ``counts`` in :data:`STANCE_LABELS` order."""

    kind: str
    counts: tuple[int, int, int]

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def expected_share(self) -> float:
        """The share of the cases with the kind's expected label (0 when there are none)."""
        return self.counts[STANCE_LABELS.index(EXPECTED[self.kind])] / self.n if self.n else 0.0

    @property
    def decided_share(self) -> float:
        """The share called supports or refutes (0 when there are none)."""
        return (self.counts[0] + self.counts[1]) / self.n if self.n else 0.0

    def met(self) -> bool | None:
        """Whether the kind's :data:`TARGETS` bar is met; None without a bar or without cases."""
        target = TARGETS.get(self.kind)
        return None if target is None or not self.n else target.met(self)


Score = Callable[[Sequence[str], Sequence[str]], Any]
"""``score(claims, sentences) -> (n, 3)`` stance probabilities in :data:`STANCE_LABELS` order."""


def predict_labels(cases: Sequence[ConsistencyCase], score: Score, *, batch_size: int = 64) -> list[StanceLabel]:
    """The most probable label of each case, ``batch_size`` pairs per ``score`` call, in order."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
    labels: list[StanceLabel] = []
    for start in range(0, len(cases), batch_size):
        batch = cases[start : start + batch_size]
        probs = np.asarray(score([c.claim for c in batch], [c.sentence for c in batch]), dtype=np.float64)
        if probs.shape != (len(batch), len(STANCE_LABELS)):
            raise InputError(f"score gave shape {probs.shape} for {len(batch)} pairs, not ({len(batch)}, 3)")
        labels.extend(STANCE_LABELS[int(i)] for i in probs.argmax(axis=1))
    return labels


def consistency_rates(cases: Sequence[ConsistencyCase], labels: Sequence[str]) -> dict[str, KindRate]:
    """Per kind (in :data:`KINDS` order, kinds without cases left out): the labels its cases got."""
    if len(cases) != len(labels):
        raise InputError(f"{len(cases)} cases but {len(labels)} labels")
    counts: dict[str, list[int]] = {}
    for case, label in zip(cases, labels, strict=True):
        if label not in STANCE_LABELS:
            raise InputError(f"stance label {label!r} is not one of {', '.join(STANCE_LABELS)}")
        counts.setdefault(case.kind, [0, 0, 0])[STANCE_LABELS.index(label)] += 1  # type: ignore[arg-type]
    return {k: KindRate(k, (counts[k][0], counts[k][1], counts[k][2])) for k in KINDS if k in counts}


def consistency_rates_by_domain(
    cases: Sequence[ConsistencyCase], labels: Sequence[str]
) -> dict[str, dict[str, KindRate]]:
    """:func:`consistency_rates` of each domain's cases, domains in first-seen order."""
    if len(cases) != len(labels):
        raise InputError(f"{len(cases)} cases but {len(labels)} labels")
    grouped: dict[str, tuple[list[ConsistencyCase], list[str]]] = {}
    for case, label in zip(cases, labels, strict=True):
        mine = grouped.setdefault(case.domain, ([], []))
        mine[0].append(case)
        mine[1].append(label)
    return {domain: consistency_rates(c, lab) for domain, (c, lab) in grouped.items()}


def targets_met(rates: dict[str, KindRate]) -> bool:
    """Whether every :data:`TARGETS` bar is met; a targeted kind without cases fails."""
    return all(k in rates and rates[k].met() is True for k in TARGETS)


__all__ = [
    "DIRECTION",
    "EXPECTED",
    "KINDS",
    "NEGATION",
    "PARAPHRASE",
    "SELF",
    "SUBJECT",
    "TARGETS",
    "UNRELATED",
    "ConsistencyCase",
    "KindRate",
    "Score",
    "Target",
    "consistency_rates",
    "consistency_rates_by_domain",
    "predict_labels",
    "targets_met",
]
