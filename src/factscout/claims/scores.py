"""What every check-worthiness model gives (:mod:`factscout.claims.checkworthy` loads one): a
:class:`CheckworthyScore` per text, the :class:`CheckworthyModel` protocol, and the scoring the
two model kinds share (:class:`Scoring`: probabilities to scores at the model's threshold)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from factscout.errors import BadModel, InputError

MINILM_FORMAT = "factscout-checkworthy-minilm"


@dataclass(frozen=True, slots=True)
class CheckworthyScore:
    """One text's check-worthiness: ``probability`` that it is check-worthy, ``label`` at the
    model's threshold, ``probabilities`` of every label of the model."""

    probability: float
    label: str
    probabilities: Mapping[str, float]


class CheckworthyModel(Protocol):
    """What :func:`load_checkworthy` returns."""

    @property
    def labels(self) -> tuple[str, ...]: ...

    @property
    def threshold(self) -> float: ...

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, len(labels))`` probabilities, rows summing to 1, check-worthy last."""
        ...

    def score(self, texts: Sequence[str]) -> list[CheckworthyScore]: ...


def scores_of(probabilities: np.ndarray, labels: Sequence[str], threshold: float) -> list[CheckworthyScore]:
    """One :class:`CheckworthyScore` per row of ``probabilities`` (columns in ``labels`` order,
    check-worthy last): check-worthy at ``threshold`` or above, else the likeliest other label."""
    out = []
    for row in np.asarray(probabilities, dtype=np.float64):
        p = float(row[-1])
        label = labels[-1] if p >= threshold else labels[int(np.argmax(row[:-1]))]
        out.append(CheckworthyScore(p, label, {name: float(v) for name, v in zip(labels, row, strict=True)}))
    return out


class Scoring:
    """The ``score`` of a model that gives ``probabilities`` (check-worthy last) and a ``threshold``."""

    labels: tuple[str, ...]
    threshold: float

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def score(self, texts: Sequence[str]) -> list[CheckworthyScore]:
        """Each text's :class:`CheckworthyScore`, in input order."""
        if isinstance(texts, str):
            raise InputError("score() takes a sequence of texts, not one string")
        texts = [str(t) for t in texts]
        if not texts:
            return []
        return scores_of(self.probabilities(texts), self.labels, self.threshold)


def checked_threshold(value: Any, source: str) -> float:
    """A model file's threshold: a number strictly between 0 and 1, else :class:`BadModel`."""
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        raise BadModel(f"{source}: threshold {value!r} is not a number") from None
    if not 0.0 < threshold < 1.0:
        raise BadModel(f"{source}: threshold {threshold} is not between 0 and 1")
    return threshold
