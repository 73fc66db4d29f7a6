"""How far to trust a definite verdict: a confidence, and abstaining below a threshold.

A fact-checker needs a definite call (``supported`` / ``refuted``) to be usually right more than
a call on every claim. Selective prediction (Geifman & El-Yaniv 2017, "Selective Classification
for Deep Neural Networks") gives each call a confidence and abstains below a threshold, trading
coverage for precision; the confidence is only useful when it is *calibrated*, i.e. calls made
with confidence 0.7 are right about 70% of the time (Guo et al. 2017, "On Calibration of Modern
Neural Networks"). A report calls it calibrated only when calibration lowered the expected
calibration error of the dev calls it was fitted for (:attr:`VerdictConfidence.calibrated`; the
shipped model: 0.175 before, 0.117 after, out of fold, on 177 dev calls).

**Features** (:func:`call_features`, names in :data:`FEATURE_NAMES`) of one definite call, from
the stance probabilities of the claim's evidence sentences (the ones the verdict read), turned
towards the call: *call* is the side the verdict took (``supports`` for ``supported``), *other*
the opposite side:

* ``max_call``, ``max_other``: the highest probability of each side over the sentences, and
  ``margin`` = ``max_call - max_other``;
* ``log1p_sum_call``, ``log1p_sum_other``: each side's probability summed over the sentences
  (a soft count of the evidence), log1p;
* ``log1p_n_call``, ``log1p_n_other``: how many sentences each side wins (argmax), log1p;
* ``log1p_sentences``: how many sentences were read, log1p.

**Model** (:class:`VerdictConfidence`): a linear score over the standardised features, fitted
as an L2-regularised logistic regression of "the call was right" (Platt 1999's scaling with
features), then either read as a probability (``platt``) or mapped through an isotonic
regression fitted on the same calls (``isotonic``: pool-adjacent-violators, Zadrozny & Elkan
2002), a non-decreasing step function stored as its knots and interpolated linearly. Inference
needs numpy only; the model is a JSON file, ``models/verdict_confidence.json``, that records what
it was fitted on and the default threshold chosen on dev claims (``benchmarks/calibration.py``).

**Abstention** (:func:`selective_verdict`): a definite call whose confidence is below
``min_confidence`` becomes ``not enough evidence``; the verdict keeps the original call, its
confidence and why it abstained ("low confidence 0.41 (< 0.55): would have been supported"),
distinct from a verdict that had no definite call to make ("no evidence found", "evidence did
not reach the rule's thresholds"). The measures (ECE, reliability diagram, risk-coverage, the
threshold for a precision) are in :mod:`factscout.evaluate.calibration`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.records import NOT_ENOUGH_EVIDENCE, REFUTED, SUPPORTED, Stance, Verdict, VerdictLabel
from factscout.verify.verdict import METHOD as RULE

FORMAT = "factscout-verdict-confidence/1"
FEATURE_NAMES: tuple[str, ...] = (
    "max_call",
    "max_other",
    "margin",
    "log1p_sum_call",
    "log1p_sum_other",
    "log1p_n_call",
    "log1p_n_other",
    "log1p_sentences",
)
DEFINITE: tuple[VerdictLabel, VerdictLabel] = (SUPPORTED, REFUTED)
"""The definite calls: the verdicts a confidence is given for."""
MODEL_FILE = Path(__file__).parent / "models" / "verdict_confidence.json"
Method = Literal["isotonic", "platt"]
METHODS: tuple[Method, ...] = ("isotonic", "platt")
NO_EVIDENCE = "no evidence found"
BELOW_THRESHOLDS = "evidence did not reach the rule's thresholds"
BALANCED = "supporting and refuting evidence balance out"
METHOD_SAID_NO = "the verdict method found the evidence insufficient"
_SIDE = {SUPPORTED: 0, REFUTED: 1}  # the call's column in (supports, refutes, not enough info)
Probabilities = Sequence[float]
Vector = Sequence[float] | np.ndarray


def call_features(label: str, probabilities: Iterable[Probabilities]) -> np.ndarray:
    """The :data:`FEATURE_NAMES` row of a definite call ``label`` (``supported`` or ``refuted``)
    from its sentences' stance probabilities (supports, refutes, not enough info), float64.

    No sentences is not an error: every feature is then 0."""
    if label not in _SIDE:
        raise InputError(f"a confidence is given for a definite call ({', '.join(DEFINITE)}), not {label!r}")
    rows = [tuple(float(x) for x in p) for p in probabilities]
    if any(len(r) != 3 or not all(math.isfinite(x) for x in r) for r in rows):
        raise InputError("each sentence needs 3 finite stance probabilities (supports, refutes, not enough info)")
    p = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    call, other = _SIDE[label], 1 - _SIDE[label]
    if not len(p):
        return np.zeros(len(FEATURE_NAMES))
    wins = p.argmax(axis=1)
    max_call, max_other = float(p[:, call].max()), float(p[:, other].max())
    return np.array(
        [
            max_call,
            max_other,
            max_call - max_other,
            math.log1p(float(p[:, call].sum())),
            math.log1p(float(p[:, other].sum())),
            math.log1p(int((wins == call).sum())),
            math.log1p(int((wins == other).sum())),
            math.log1p(len(p)),
        ]
    )


def stance_probabilities(stances: Iterable[Stance]) -> list[tuple[float, float, float]]:
    """The (supports, refutes, not enough info) probabilities of each stance, in order."""
    return [(float(a), float(b), float(c)) for a, b, c in (s.probabilities for s in stances)]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))
    return out


class VerdictConfidence:
    """The fitted confidence model: ``score = ((x - mean) / scale) @ weight + bias``, then
    ``sigmoid(score)`` (``platt``) or the isotonic map through the knots ``(iso_x, iso_y)``
    (``isotonic``), clipped to its end values outside them.

    ``threshold``: the default ``min_confidence`` chosen on dev claims (``None``: none chosen);
    ``fitted_with``: the check settings whose calls it was fitted on (``stance``, ``verdict``...);
    ``info``: free-form provenance (data, counts, dev figures).
    """

    def __init__(
        self,
        weight: Vector,
        bias: float,
        mean: Vector,
        scale: Vector,
        *,
        method: Method = "platt",
        iso_x: Vector = (),
        iso_y: Vector = (),
        threshold: float | None = None,
        fitted_with: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        n = len(FEATURE_NAMES)
        self.weight, self.mean, self.scale = (np.asarray(a, dtype=np.float64) for a in (weight, mean, scale))
        if {a.shape for a in (self.weight, self.mean, self.scale)} != {(n,)}:
            raise BadModel(f"weight, mean and scale need {n} values each (one per feature)")
        self.bias = float(bias)
        finite = all(np.all(np.isfinite(a)) for a in (self.weight, self.mean, self.scale)) and math.isfinite(self.bias)
        if not finite or np.any(self.scale <= 0):
            raise BadModel("the verdict confidence has non-finite weights or non-positive scales")
        if method not in METHODS:
            raise BadModel(f"unknown calibration method {method!r}; known: {', '.join(METHODS)}")
        self.method: Method = method
        self.iso_x, self.iso_y = np.asarray(iso_x, dtype=np.float64), np.asarray(iso_y, dtype=np.float64)
        if method == "isotonic":
            x, y = self.iso_x, self.iso_y
            if x.ndim != 1 or x.shape != y.shape or not len(x):
                raise BadModel("an isotonic map needs matching, non-empty knots iso_x and iso_y")
            if np.any(np.diff(x) < 0) or np.any(np.diff(y) < 0) or np.any((y < 0) | (y > 1)):
                raise BadModel("isotonic knots must be non-decreasing, with values in [0, 1]")
        self.threshold = None if threshold is None else check_min_confidence(threshold, "threshold")
        self.fitted_with = dict(fitted_with or {})
        self.info = dict(info or {})

    # -- inference --

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The linear scores of rows of :func:`call_features` (higher: more likely right)."""
        x = np.asarray(features, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(FEATURE_NAMES):
            raise InputError(f"the verdict confidence reads {len(FEATURE_NAMES)} features per call, got {x.shape}")
        out: np.ndarray = ((x - self.mean) / self.scale) @ self.weight + self.bias
        return out

    def predict_features(self, features: np.ndarray) -> np.ndarray:
        """Calibrated probabilities that each call is right, ``(n,)``."""
        z = self.scores(features)
        if self.method == "isotonic":
            out: np.ndarray = np.interp(z, self.iso_x, self.iso_y)
            return out
        return _sigmoid(z)

    def predict(self, label: str, probabilities: Iterable[Probabilities]) -> float:
        """The confidence of one definite call from its sentences' stance probabilities."""
        return float(self.predict_features(call_features(label, probabilities)[None])[0])

    def matches(self, stance: str, verdict: str) -> bool:
        """Whether it was fitted on calls of this stance model and verdict method (unrecorded: yes)."""
        want = {"stance": stance, "verdict": verdict}
        return all(self.fitted_with.get(k, v) == v for k, v in want.items())

    @property
    def dev_ece(self) -> dict[str, float] | None:
        """The expected calibration error of the calls it was fitted for on dev claims, before
        (the raw call features' score) and after calibration (out of fold), as recorded when it
        was fitted (``benchmarks/calibration.py``); ``None`` when not recorded."""
        dev = self.info.get("dev") or {}
        before, after = dev.get("ece_before"), dev.get("ece_after_oof")
        if not isinstance(before, int | float) or not isinstance(after, int | float):
            return None
        return {"before": float(before), "after": float(after)}

    @property
    def calibrated(self) -> bool | None:
        """Whether calibration lowered the dev ECE (:attr:`dev_ece`): only then is its output called
        a *calibrated* probability. ``None``: not recorded."""
        ece = self.dev_ece
        return None if ece is None else ece["after"] < ece["before"]

    # -- persistence --

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "features": list(FEATURE_NAMES),
            "method": self.method,
            "weight": self.weight.tolist(),
            "bias": self.bias,
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "isotonic": {"x": self.iso_x.tolist(), "y": self.iso_y.tolist()} if self.method == "isotonic" else None,
            "threshold": self.threshold,
            "fitted_with": self.fitted_with,
            "info": self.info,
        }

    def save(self, path: str | Path = MODEL_FILE) -> Path:
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return file

    @classmethod
    def load(cls, path: str | Path | None = None) -> VerdictConfidence:
        """Read a model written by :meth:`save` (default: the shipped one; :func:`shipped` is
        ``None`` when there is none)."""
        file = Path(path) if path is not None else MODEL_FILE
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelNotFound(f"no verdict confidence model at {file}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadModel(f"{file} is not a factscout verdict confidence model: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise BadModel(f"{file} is not a factscout verdict confidence model (format {got!r}, expected {FORMAT!r})")
        if data.get("features") != list(FEATURE_NAMES):
            raise BadModel(f"{file}: its features {data.get('features')} differ from this factscout's")
        try:
            iso = data.get("isotonic") or {}
            return cls(
                data["weight"],
                data["bias"],
                data["mean"],
                data["scale"],
                method=data["method"],
                iso_x=iso.get("x", ()),
                iso_y=iso.get("y", ()),
                threshold=data.get("threshold"),
                fitted_with=data.get("fitted_with"),
                info=data.get("info"),
            )
        except BadModel as exc:
            raise BadModel(f"{file}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise BadModel(f"{file} is not a factscout verdict confidence model: {type(exc).__name__}: {exc}") from None


def shipped(path: str | Path = MODEL_FILE) -> VerdictConfidence | None:
    """The shipped model, or ``None`` when factscout ships none (abstention is then off by default)."""
    return VerdictConfidence.load(path) if Path(path).is_file() else None


# --- fitting ---------------------------------------------------------------------------------


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50) -> tuple[np.ndarray, float]:
    """Weights and bias of an L2-regularised logistic regression (Newton's method; the bias is not
    penalised): minimises ``sum(log loss) + l2 / 2 * |w|^2``."""
    n, d = x.shape
    w, b = np.zeros(d), 0.0
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.diag([l2] * d + [1e-9])
    for _ in range(iterations):
        theta = np.append(w, b)
        p = _sigmoid(design @ theta)
        grad = design.T @ (p - y) + penalty @ theta
        hess = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess, grad)
        w, b = w - step[:d], float(b - step[d])
        if float(np.abs(step).max()) < 1e-10:
            break
    return w, b


def isotonic_knots(scores: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pool-adjacent-violators: the non-decreasing fit of ``y`` on ``scores`` as knots ``(x, y)``
    (each pooled block contributes its lowest and highest score, at the block's mean)."""
    order = np.argsort(scores, kind="stable")
    xs, ys = np.asarray(scores, dtype=np.float64)[order], np.asarray(y, dtype=np.float64)[order]
    blocks: list[list[float]] = []  # [sum y, count, lowest x, highest x]
    for x, v in zip(xs, ys, strict=True):
        if blocks and blocks[-1][3] == x:  # tied scores share one value
            blocks[-1][0] += v
            blocks[-1][1] += 1
        else:
            blocks.append([v, 1.0, x, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c, _, hi = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
            blocks[-1][3] = hi
    kx, ky = [], []
    for s, c, lo, hi in blocks:
        kx += [lo, hi] if hi > lo else [lo]
        ky += [s / c] * (2 if hi > lo else 1)
    return np.array(kx), np.array(ky)


def fit_verdict_confidence(
    features: np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    method: Method = "isotonic",
    l2: float = 1.0,
    threshold: float | None = None,
    fitted_with: Mapping[str, Any] | None = None,
    info: Mapping[str, Any] | None = None,
) -> VerdictConfidence:
    """Fit :class:`VerdictConfidence` on definite calls: ``features`` rows of :func:`call_features`,
    ``correct[i]`` whether call ``i`` matched the gold verdict."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURE_NAMES) or len(x) != len(y) or not len(y):
        raise InputError(f"fitting needs one {len(FEATURE_NAMES)}-feature row per call and a label each, "
                         f"got features {x.shape} and {y.shape[0]} labels")  # fmt: skip
    if method not in METHODS:
        raise InputError(f"unknown calibration method {method!r}; known: {', '.join(METHODS)}")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    if y.min() == y.max():  # every call right (or wrong): the base rate, smoothed
        rate = (y.sum() + 0.5) / (len(y) + 1)
        w, b = np.zeros(x.shape[1]), float(math.log(rate / (1 - rate)))
    else:
        w, b = fit_logistic(z, y, l2)
    iso_x: np.ndarray = np.array([])
    iso_y: np.ndarray = np.array([])
    if method == "isotonic":
        iso_x, iso_y = isotonic_knots(z @ w + b, y)
    return VerdictConfidence(
        w, b, mean, scale, method=method, iso_x=iso_x, iso_y=iso_y, threshold=threshold,
        fitted_with=fitted_with, info=info,
    )  # fmt: skip


# --- abstention ------------------------------------------------------------------------------


def check_min_confidence(value: object, name: str = "min_confidence") -> float:
    """A confidence threshold: a number in [0, 1] (0 = never abstain), else an :class:`InputError`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{name} must be a number from 0 to 1 (0: never abstain), got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class AbstentionPolicy:
    """How a checker abstains: the confidence ``model`` it uses (``None``: none, no confidence is
    given), the ``min_confidence`` below which a definite call is withheld, and a ``note`` when the
    model on offer (``offered``) was fitted on other settings."""

    model: VerdictConfidence | None
    min_confidence: float
    note: str | None = None
    offered: VerdictConfidence | None = None

    @property
    def warnings(self) -> list[str]:
        """The note, when a model fitted on other settings is used anyway."""
        return [self.note] if self.note and self.model is not None else []

    @property
    def provenance(self) -> dict[str, Any]:
        """``{"verdict_confidence": ...}`` for a report's provenance (empty without a model on offer)."""
        if self.offered is None:
            return {}
        unused = {"unused": self.note} if self.note and self.model is None else {}
        model = self.offered
        about = {"method": model.method, "fitted_with": model.fitted_with, "calibrated": model.calibrated}
        about |= {"dev_ece": model.dev_ece} if model.dev_ece is not None else {}
        return {"verdict_confidence": {**about, "min_confidence": self.min_confidence, **unused}}


def abstention_policy(
    model: VerdictConfidence | None, stance: str, verdict: str, given: float | None = None
) -> AbstentionPolicy:
    """How a checker with this ``stance`` model and ``verdict`` method abstains, given the ``model``
    on offer and the threshold ``given`` by the user (``check --min-confidence``; ``None``: default).

    A model fitted on calls of the same stance model and verdict method is used, with the given
    threshold or else its stored one. A model fitted on other settings would be miscalibrated: it
    is left unused (no confidence, no abstention; the note says why) unless a threshold is given,
    when it is used with a warning. A threshold above 0 with no model is an :class:`InputError`."""
    if given is not None:
        given = check_min_confidence(given, "--min-confidence")
    if model is None:
        if given:
            raise InputError(
                f"--min-confidence {given:g} needs a verdict confidence model, and none is shipped "
                "(fit one: python benchmarks/calibration.py)"
            )
        return AbstentionPolicy(None, 0.0)
    if model.matches(stance, verdict):
        return AbstentionPolicy(model, given if given is not None else model.threshold or 0.0, offered=model)
    fitted = ", ".join(f"{k} {v!r}" for k, v in sorted(model.fitted_with.items()) if k in ("stance", "verdict"))
    note = f"the verdict confidence was fitted on calls of {fitted}, not stance {stance!r} and verdict {verdict!r}"
    if given is None:
        why = f"{note}: no confidence is given and factscout does not abstain (give --min-confidence)"
        return AbstentionPolicy(None, 0.0, why, model)
    return AbstentionPolicy(model, given, f"{note}: it may be miscalibrated", model)


def _shown_below(confidence: float) -> str:
    """``confidence`` rounded down to 2 decimals (so it never prints as the threshold it missed)."""
    return f"{math.floor(confidence * 100) / 100:.2f}"


def no_call_reason(verdict: Verdict, n_stances: int) -> str:
    """Why a ``not enough evidence`` verdict made no definite call (before any abstention)."""
    if n_stances == 0:
        return NO_EVIDENCE
    if verdict.method != RULE:
        return METHOD_SAID_NO
    if verdict.supporting and len(verdict.supporting) == len(verdict.refuting):
        return BALANCED
    return BELOW_THRESHOLDS


def selective_verdict(
    verdict: Verdict,
    stances: Sequence[Stance],
    model: VerdictConfidence | None,
    min_confidence: float = 0.0,
) -> Verdict:
    """``verdict`` with its confidence (a definite call, when a ``model`` is given) and, when it
    is not definite, why: below ``min_confidence`` a definite call becomes ``not enough evidence``
    and keeps the call it would have made (``call``) and the reason (``abstention``)."""
    threshold = check_min_confidence(min_confidence)
    if verdict.label in DEFINITE:
        if model is None:
            return replace(verdict, call=verdict.label)
        confidence = model.predict(verdict.label, stance_probabilities(stances))
        if confidence >= threshold:
            return replace(verdict, confidence=confidence, call=verdict.label)
        why = f"low confidence {_shown_below(confidence)} (< {threshold:g}): would have been {verdict.label}"
        return replace(
            verdict,
            label=NOT_ENOUGH_EVIDENCE,
            reason=f"{why}; {verdict.reason}",
            confidence=confidence,
            call=verdict.label,
            abstention=why,
        )
    no_call = no_call_reason(verdict, len(stances)) if verdict.label == NOT_ENOUGH_EVIDENCE else None
    return replace(verdict, call=verdict.label, abstention=no_call)


__all__ = [
    "BALANCED",
    "BELOW_THRESHOLDS",
    "DEFINITE",
    "FEATURE_NAMES",
    "FORMAT",
    "METHODS",
    "MODEL_FILE",
    "NO_EVIDENCE",
    "AbstentionPolicy",
    "VerdictConfidence",
    "abstention_policy",
    "call_features",
    "check_min_confidence",
    "fit_verdict_confidence",
    "isotonic_knots",
    "no_call_reason",
    "selective_verdict",
    "shipped",
]
