"""Train the learned verdict aggregator (``factscout train verdict-aggregator --out DIR``).

Recipe (fixed seeds; CPU, about a second per claim for the pipeline pass on 2 cores):

1. SciFact train claims are split exactly as for the stance models
   (:func:`~factscout.training.splits.split_scifact`, seed 13: the 202 held-out claims), and the
   training part again into fitting and dev claims (``dev_fraction`` 0.15, seed 14), as
   ``factscout train stance-cross`` does.
2. The real ``check`` pipeline (:class:`~factscout.check.Checker` with the default planner, fusion,
   selector and passages read, the given stance model, a BM25 index over the SciFact corpus, the
   cheapest retriever ``benchmarks/verdict.py`` offers) runs over every claim. The shipped stance
   head was trained on the whole training part, so with it (``--oof-head``, the default) the
   fitting and dev claims go through *out-of-fold* heads (:func:`oof_heads`: the head's recipe
   retrained on 4 of 5 claim-group folds, as its trainer does to tune the count rule): stances as
   sharp as the shipped head's on unseen claims, not sharper. What the pipeline hands the
   verdict method (the sentence stances and the fused ranking) is cached in the ``--features``
   file (JSONL, one claim a line, after a header naming the pipeline). The features
   (:func:`~factscout.verify.aggregate.claim_features`) are computed from it in milliseconds, so a
   second run with another ``k`` or model choice reuses the pass; a file made by another pipeline
   (another stance model) is refused, and claims missing from it are computed and added.
3. Logistic regression over standardised features is fitted on the fitting claims for each
   ``C`` x class weighting of the grid; the best dev macro-F1 wins (ties: the earlier grid
   entry). A softmax temperature is then fitted on dev (Guo et al. 2017, minimum negative
   log-likelihood over a log-spaced grid), which changes no label, only the probabilities.
4. Held-out report: accuracy, macro-F1 with a 95 % bootstrap interval (claims resampled) and
   per-class F1 of the aggregator, the count rule on the same pipeline output, the majority
   class and a claim-only logistic regression on the claim embedding (its ``C`` also chosen on
   dev); intervals of the differences; calibration (expected calibration error, 10 bins, and
   negative log-likelihood) before and after the temperature.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.evaluate.classification import accuracy, grouped_macro_f1_intervals, macro_f1
from factscout.records import RULE_VERDICT_LABELS, Claim
from factscout.training.base import described
from factscout.training.cards import licence_of, write_card, write_metrics
from factscout.training.splits import SEED, split_scifact
from factscout.training.verdict.aggregator_card import model_card
from factscout.training.verdict.evidence import (
    OOF_RECIPE,
    OOF_STANCE,
    ClaimEvidence,
    oof_heads,
    pipeline_evidence,
    read_evidence,
    write_evidence,
)
from factscout.verify.aggregate import DEFAULT_K, VerdictAggregator, claim_features, feature_names
from factscout.verify.verdict import CountRule, majority_label

Say = Callable[[str], None]
MODEL_NAME = "verdict_aggregator.json"
CARD_NAME = "VERDICT_AGGREGATOR_CARD.md"
METRICS_NAME = "verdict_aggregator_metrics.json"
SCIFACT_VERDICT = {"SUPPORT": "supported", "CONTRADICT": "refuted", "NEI": "not enough evidence"}
C_GRID: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
CLASS_WEIGHTS: tuple[str | None, ...] = ("balanced", None)
TEMPERATURES: tuple[float, ...] = tuple(float(t) for t in np.exp(np.linspace(math.log(0.25), math.log(4.0), 81)))


@dataclass(frozen=True, slots=True)
class AggregatorConfig:
    """Pipeline, split and model-selection settings of the aggregator's training run."""

    seed: int = SEED
    k: int = described(DEFAULT_K, "stances read per claim (top-k by passage rank)")
    stance: str | None = described(None, "stance model (default: check's default)")
    retriever: str = described("bm25", "retriever over the SciFact corpus")
    dev_fraction: float = 0.15
    bootstrap: int = 2000
    oof_head: bool = described(True, "with the stance head: the training part's stances from out-of-fold heads")
    limit_claims: int | None = described(None, "N claims per part")


def _quiet(_: str) -> None:
    return None


# --- the model: fitting and calibration ---------------------------------------------------------------


def fit_aggregator(
    x: np.ndarray,
    y: Sequence[str],
    labels: Sequence[str] = RULE_VERDICT_LABELS,
    *,
    k: int = DEFAULT_K,
    rule: CountRule | None = None,
    c: float = 1.0,
    class_weight: str | None = "balanced",
    info: dict[str, str] | None = None,
) -> VerdictAggregator:
    """Multinomial logistic regression (L2, strength ``1/c``) over standardised rows of
    :func:`~factscout.verify.aggregate.claim_features` with ``k`` slots; ``y`` gold verdicts from
    ``labels`` (every label must occur)."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(x, dtype=np.float64)
    names = feature_names(k)
    if x.ndim != 2 or x.shape[1] != len(names) or x.shape[0] != len(y):
        raise InputError(f"need one row of {len(names)} features per label, got {x.shape} and {len(y)} labels")
    index = {label: i for i, label in enumerate(labels)}
    bad = sorted({g for g in y if g not in index})
    if bad:
        raise InputError(f"labels {bad} are not in the label set {list(labels)}")
    missing = [label for label in labels if label not in set(y)]
    if missing:
        raise InputError(f"the training claims have no {missing} examples; every label needs some")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=c, class_weight=class_weight, max_iter=5000)
    model.fit((x - mean) / scale, np.array([index[g] for g in y]))
    coef, intercept = model.coef_, model.intercept_
    if coef.shape[0] == 1:  # two labels: sklearn keeps one row; softmax([0, z]) = sigmoid(z)
        coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.concatenate([[0.0], intercept])
    return VerdictAggregator(labels, coef.T, intercept, mean, scale, k=k, rule=rule, info=info)


def logits_of(model: VerdictAggregator, x: np.ndarray) -> np.ndarray:
    """The model's class scores before the temperature."""
    return ((np.asarray(x, dtype=np.float64) - model.mean) / model.scale) @ model.weight + model.bias


def nll(probs: np.ndarray, gold: Sequence[int]) -> float:
    """Mean negative log-likelihood of the gold classes."""
    p = np.asarray(probs)[np.arange(len(gold)), np.asarray(gold)]
    return float(-np.mean(np.log(np.clip(p, 1e-12, 1.0))))


def expected_calibration_error(probs: np.ndarray, gold: Sequence[int], bins: int = 10) -> float:
    """ECE (Guo et al. 2017): |accuracy - confidence| of the top class, averaged over equal-width
    confidence bins weighted by their size."""
    p = np.asarray(probs)
    conf, pred = p.max(axis=1), p.argmax(axis=1)
    right = pred == np.asarray(gold)
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(right[inside].mean() - conf[inside].mean())
    return float(total)


def fit_temperature(logits: np.ndarray, gold: Sequence[int], grid: Sequence[float] = TEMPERATURES) -> float:
    """The temperature of ``grid`` with the least negative log-likelihood (ties: the one nearest 1)."""
    if not len(gold):
        raise InputError("fitting a temperature needs at least one claim")
    z = np.asarray(logits, dtype=np.float64)

    def loss(t: float) -> float:
        s = z / t
        s = s - s.max(axis=1, keepdims=True)
        return nll(np.exp(s) / np.exp(s).sum(axis=1, keepdims=True), gold)

    return float(min(grid, key=lambda t: (round(loss(t), 12), abs(math.log(t)))))


def choose_model(
    x_fit: np.ndarray,
    y_fit: Sequence[str],
    x_dev: np.ndarray,
    y_dev: Sequence[str],
    labels: Sequence[str],
    *,
    k: int,
    rule: CountRule,
    c_grid: Sequence[float] = C_GRID,
    class_weights: Sequence[str | None] = CLASS_WEIGHTS,
) -> tuple[VerdictAggregator, list[dict[str, Any]]]:
    """Fit every grid entry on the fitting rows, keep the best dev macro-F1, then fit its
    temperature on dev. Returns the model and the grid's dev scores."""
    grid: list[dict[str, Any]] = []
    best: tuple[float, VerdictAggregator] | None = None
    for weighting in class_weights:
        for c in c_grid:
            model = fit_aggregator(x_fit, y_fit, labels, k=k, rule=rule, c=c, class_weight=weighting)
            pred = [model.labels[i] for i in model.predict_features(x_dev).argmax(axis=1)]
            f1 = macro_f1(y_dev, pred, labels)
            grid.append({"C": c, "class_weight": weighting or "none", "dev_macro_f1": round(f1, 4)})
            if best is None or f1 > best[0] + 1e-12:
                best = (f1, model)
    if best is None:
        raise InputError("the model grid is empty")
    model = best[1]
    gold = [model.labels.index(g) for g in y_dev]
    model.temperature = fit_temperature(logits_of(model, x_dev), gold)
    return model, grid


# --- the run ------------------------------------------------------------------------------------------


def gold_verdict(claim: Claim) -> str:
    raw = str(claim.meta.get("label", "")).strip().upper()
    if raw not in SCIFACT_VERDICT:
        raise InputError(f"claim {claim.claim_id}: label {raw!r} is not one of {sorted(SCIFACT_VERDICT)}")
    return SCIFACT_VERDICT[raw]


def _scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    per = {label: round(macro_f1(gold, pred, [label]), 4) for label in labels}
    return {"accuracy": round(accuracy(gold, pred), 4), "macro_f1": round(macro_f1(gold, pred, labels), 4), "f1": per}


def _claim_only(x: dict[str, np.ndarray], y: dict[str, list[str]], labels: Sequence[str]) -> tuple[list[str], float]:
    """Logistic regression on the claim embedding, ``C`` chosen on dev: held-out predictions, C."""
    from sklearn.linear_model import LogisticRegression

    best: tuple[float, float, Any] | None = None
    for c in (*C_GRID, 10.0, 30.0):
        model = LogisticRegression(C=c, max_iter=5000).fit(x["fit"], y["fit"])
        f1 = macro_f1(y["dev"], [str(p) for p in model.predict(x["dev"])], labels)
        if best is None or f1 > best[0] + 1e-12:
            best = (f1, c, model)
    if best is None:
        raise InputError("the claim-only grid is empty")
    return [str(p) for p in best[2].predict(x["heldout"])], best[1]


def run(out: Path, config: AggregatorConfig, *, features: Path | None = None, say: Say = _quiet,
        command: str = "") -> dict[str, Any]:  # fmt: skip
    """The recipe of the module docstring; writes the model, metrics and card to ``out``."""
    from factscout.check import Checker, CheckSettings
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_retriever

    t0 = time.perf_counter()
    settings = CheckSettings() if config.stance is None else CheckSettings(stance=config.stance)
    config = replace(config, stance=settings.stance)
    scifact = load_dataset("scifact", "train")
    train, heldout = split_scifact(list(scifact.claims), seed=config.seed)
    fit, dev = split_scifact(train, heldout_fraction=config.dev_fraction, seed=config.seed + 1)
    if config.limit_claims is not None:
        fit, dev, heldout = fit[: config.limit_claims], dev[: config.limit_claims], heldout[: config.limit_claims]
    parts = {"fit": fit, "dev": dev, "heldout": heldout}
    say(f"SciFact: {len(fit)} fitting, {len(dev)} dev, {len(heldout)} held-out claims")

    retriever = build_retriever(scifact.corpus, config.retriever)
    checker = Checker(retriever, settings)
    oof = config.oof_head and settings.stance == OOF_STANCE
    pipeline = json.loads(json.dumps({
        "corpus": f"scifact train corpus ({len(scifact.corpus)} passages)",
        "retriever": config.retriever,
        "settings": asdict(settings),
        "rule": {"min_evidence": checker.rule.min_evidence, "min_confidence": checker.rule.min_confidence},
        "training_part_stances": OOF_RECIPE if oof else "the stance model itself",
    }))  # fmt: skip
    evidence = read_evidence(features, pipeline) if features is not None and features.is_file() else {}
    todo = [c for part in parts.values() for c in part if c.claim_id not in evidence]
    say(f"pipeline pass: {len(todo)} claims to check ({len(evidence)} cached)")
    t_pass = time.perf_counter()
    if todo:
        if oof:  # the training part's claims through heads that never saw them; held-out through the shipped one
            todo_ids = {c.claim_id for c in todo}
            held_ids = {c.claim_id for c in heldout}
            for fold, head in oof_heads(train, checker.encoder, config.seed, say):
                claims = [c for c in fold if c.claim_id in todo_ids]
                fold_checker = Checker(retriever, settings, stance=head, encoder=checker.encoder)
                evidence.update(pipeline_evidence(fold_checker, claims, say))
            evidence.update(pipeline_evidence(checker, [c for c in todo if c.claim_id in held_ids], say))
        else:
            evidence.update(pipeline_evidence(checker, todo, say))
        if features is not None:
            write_evidence(features, pipeline, evidence)
            say(f"wrote {features} ({len(evidence)} claims)")
    pass_s = time.perf_counter() - t_pass
    checker.stance  # noqa: B018  (loads the model, which records its provenance, when the cache served every claim)
    report = train_and_evaluate(
        out,
        parts,
        evidence,
        checker.rule,
        config,
        embed=checker.encoder.encode,
        about={
            "pipeline": pipeline,
            "stance_model": dict(checker.provenance.get("stance_model", {"kind": settings.stance})),
            "licence": licence_of("scifact"),
            "command": command,
            "seconds": {"pipeline_pass": round(pass_s, 1)},
        },
    )
    report["seconds"]["total"] = round(time.perf_counter() - t0, 1)
    write_metrics(out / METRICS_NAME, report)
    write_card(out / CARD_NAME, model_card(report))
    h, cis = report["heldout"], report["heldout_ci95"]
    say(f"held-out macro-F1: learned {h['learned']['macro_f1']} {cis['learned']}, rule {h['rule']['macro_f1']} "
        f"{cis['rule']}, majority {h['majority']['macro_f1']}, claim-only {h['claim-only']['macro_f1']}")  # fmt: skip
    return report


def train_and_evaluate(
    out: Path,
    parts: Mapping[str, Sequence[Claim]],
    evidence: dict[str, ClaimEvidence],
    rule: CountRule,
    config: AggregatorConfig,
    *,
    embed: Callable[[list[str]], Any],
    about: dict[str, Any],
    labels: Sequence[str] = RULE_VERDICT_LABELS,
    gold_of: Callable[[Claim], str] | None = None,
    data: str = "SciFact train",
) -> dict[str, Any]:
    """Steps 3 and 4 of the recipe over the pipeline's ``evidence`` for the ``fit`` / ``dev`` /
    ``heldout`` claims of ``parts``; ``embed`` gives the claim-only baseline's claim vectors.
    Writes the model to ``out`` and returns the report (``about`` merged in); metrics and card are
    written by :func:`run`. The model's classes are ``labels`` and ``gold_of(claim)`` a claim's gold
    verdict (default: SciFact's ``meta["label"]``, three classes); AVeriTeC-style data passes the
    four :data:`~factscout.records.VERDICT_LABELS` and its own reader (``conflicting`` included)."""
    labels = list(labels)
    gold_of = gold_of or gold_verdict
    missing = [c.claim_id for part in parts.values() for c in part if c.claim_id not in evidence]
    if missing:
        raise InputError(f"no pipeline output for claims {missing[:5]}{' ...' if len(missing) > 5 else ''}")
    x = {n: np.stack([claim_features(evidence[c.claim_id].stances, evidence[c.claim_id].ranking, rule, config.k)
                      for c in part]) for n, part in parts.items()}  # fmt: skip
    y = {n: [gold_of(c) for c in part] for n, part in parts.items()}
    model, grid = choose_model(x["fit"], y["fit"], x["dev"], y["dev"], labels, k=config.k, rule=rule)
    best = max(grid, key=lambda g: g["dev_macro_f1"])
    n_fit, n_dev, n_held = (len(parts[n]) for n in ("fit", "dev", "heldout"))
    model.info = {
        "trained": dt.date.today().isoformat(),
        "data": f"{data}: {n_fit} fitting claims (dev {n_dev}, held-out {n_held})",
        "stance": str(config.stance),
        "stance_model": json.dumps(about.get("stance_model", {}), sort_keys=True),
        "pipeline": json.dumps(about.get("pipeline", {}), sort_keys=True),
        "C": str(best["C"]),
        "class_weight": str(best["class_weight"]),
        "seed": str(config.seed),
    }
    path = model.save(out / MODEL_NAME)

    def predict(part: str, temperature: float | None = None) -> tuple[list[str], np.ndarray]:
        z = logits_of(model, x[part]) / (model.temperature if temperature is None else temperature)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return [model.labels[i] for i in p.argmax(axis=1)], p

    learned, probs = predict("heldout")
    _, raw_probs = predict("heldout", 1.0)
    dev_pred, dev_probs = predict("dev")
    _, dev_raw = predict("dev", 1.0)
    by_rule: dict[str, list[str]] = {
        n: [rule(evidence[c.claim_id].stances).label for c in part] for n, part in parts.items()
    }
    majority = majority_label(y["fit"])
    emb = {n: np.asarray(embed([c.text for c in part]), dtype=np.float64) for n, part in parts.items()}
    claim_only, claim_only_c = _claim_only(emb, y, labels)
    gold = y["heldout"]
    systems: dict[str, list[str]] = {"learned": learned, "rule": by_rule["heldout"], "majority": [majority] * len(gold),
               "claim-only": claim_only}  # fmt: skip
    gold_idx, dev_idx = [labels.index(g) for g in gold], [labels.index(g) for g in y["dev"]]
    groups = [c.claim_id for c in parts["heldout"]]
    cis = grouped_macro_f1_intervals(groups, gold, systems, labels, n=config.bootstrap, seed=config.seed)
    return {
        "model": "verdict aggregator (logistic regression)",
        "config": asdict(config),
        "claims": {n: len(p) for n, p in parts.items()},
        "gold": {n: dict(Counter(v)) for n, v in y.items()},
        "features": len(feature_names(config.k)),
        "grid": grid,
        "chosen": {"C": best["C"], "class_weight": best["class_weight"], "temperature": round(model.temperature, 4)},
        "dev": {"learned": _scores(y["dev"], dev_pred, labels), "rule": _scores(y["dev"], by_rule["dev"], labels)},
        "heldout": {name: _scores(gold, pred, labels) for name, pred in systems.items()},
        "heldout_ci95": cis,
        "calibration": {
            "dev": {"nll_raw": round(nll(dev_raw, dev_idx), 4), "nll": round(nll(dev_probs, dev_idx), 4)},
            "heldout": {
                "ece_raw": round(expected_calibration_error(raw_probs, gold_idx), 4),
                "ece": round(expected_calibration_error(probs, gold_idx), 4),
                "nll_raw": round(nll(raw_probs, gold_idx), 4),
                "nll": round(nll(probs, gold_idx), 4),
            },
        },
        "baselines": {"majority_label": majority, "claim_only_C": claim_only_c},
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        **about,
    }


__all__ = [
    "AggregatorConfig",
    "choose_model",
    "expected_calibration_error",
    "fit_aggregator",
    "fit_temperature",
    "run",
    "train_and_evaluate",
]
