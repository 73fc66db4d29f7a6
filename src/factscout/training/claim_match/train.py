"""Train the claim-match model on CheckThat! 2022 2A train, choose it on dev, report dev-test.

Recipe: a memory of the CheckThat verified claims only (the lab's setting) gives each tweet its
candidates and features (:meth:`~factscout.factchecks.FactCheckMemory.candidates`); a logistic
regression (scikit-learn, L2, one strength per ``config.cs``) learns relevant vs not over the
candidates of the train tweets; the strength with the best dev MAP@5 is kept, compared against
the unlearned fallback (CombSUM) on dev; then the shown-match threshold is the lowest top-1
score at which the dev top-1 matches reach ``config.precision`` counting, besides each dev
tweet, the same tweet as if nobody had checked it (its relevant fact-checks left out, so any
match shown for it is wrong): every dev tweet has a fact-check, real claims mostly do not, and a
threshold chosen on the tweets alone would show everything. Dev-test is scored once, after
every choice. MAP@k as in the lab (trec_eval ``map_cut``, through factscout.evaluate).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.datasets.base import Dataset, data_root
from factscout.evaluate.metrics import evaluate
from factscout.factchecks.match import MatchModel, candidate_features, score_candidates
from factscout.factchecks.memory import FactCheckMemory
from factscout.factchecks.sources import load_source
from factscout.training.cards import write_card, write_metrics
from factscout.training.claim_match.card import model_card
from factscout.training.claim_match.config import ClaimMatchConfig

MEASURES = ("AP@1", "AP@5", "R@5")
Candidates = list[tuple[list[int], np.ndarray]]


def _split(name: str, root: Path) -> Dataset:
    from factscout.datasets.checkthat import load

    return load(name, root)


def score_split(memory: FactCheckMemory, model: MatchModel, data: Dataset, cands: Candidates) -> dict[str, Any]:
    """MAP@1, MAP@5, R@5 and the top-1 (score, relevant) pairs of ``model`` on one split."""
    run, top1 = {}, []
    for claim, (rows, X) in zip(data.claims, cands, strict=True):
        scores = score_candidates(model, X)
        ids = [memory.records[r].fact_check_id for r in rows]
        run[claim.claim_id] = dict(zip(ids, map(float, scores), strict=True))
        if len(rows):
            best = max(range(len(rows)), key=lambda i: (scores[i], [-ord(c) for c in ids[i]]))
            top1.append((float(scores[best]), data.qrels.get(claim.claim_id, {}).get(ids[best], 0) > 0))
        else:
            top1.append((0.0, False))
    return {**evaluate(data.qrels, run, list(MEASURES)).means(), "top1": top1}


def unchecked_top1(
    memory: FactCheckMemory, model: MatchModel, data: Dataset, cands: Candidates
) -> list[tuple[float, bool]]:
    """The top-1 score of each tweet as if nobody had checked it: its relevant fact-checks left
    out of its candidates (features recomputed without them), so any match shown is wrong."""
    out = []
    for claim, (rows, X) in zip(data.claims, cands, strict=True):
        relevant = {r for r in rows if data.qrels.get(claim.claim_id, {}).get(memory.records[r].fact_check_id, 0) > 0}
        keep = [i for i, r in enumerate(rows) if r not in relevant]
        if not keep:
            out.append((0.0, False))
            continue
        cos = {rows[i]: float(X[i, 2]) for i in keep}
        bm25 = {rows[i]: float(X[i, 1]) * 20.0 for i in keep if X[i, 1] > 0}
        dense = sorted(cos, key=lambda r: (-cos[r], r))[: model.depth]
        kept, X2 = candidate_features(bm25, cos, dense)
        X2[:, 6:] = X[[rows.index(r) for r in kept], 6:]  # the time and word features are per pair
        out.append((float(score_candidates(model, X2).max()), False))
    return out


def shown_at(top1: Sequence[tuple[float, bool]], threshold: float) -> tuple[float, float]:
    """Precision and coverage of the top-1 matches shown at ``threshold``."""
    shown = [rel for score, rel in top1 if score >= threshold]
    return (sum(shown) / len(shown) if shown else 1.0), len(shown) / max(1, len(top1))


def choose_threshold(top1: Sequence[tuple[float, bool]], precision: float) -> float:
    """The lowest top-1 score at which the shown matches reach ``precision`` (most coverage)."""
    for t in sorted({s for s, _ in top1}):
        if shown_at(top1, t)[0] >= precision:
            return t
    return 1.0


def _labels(memory: FactCheckMemory, data: Dataset, cands: Candidates) -> tuple[np.ndarray, np.ndarray]:
    X = np.vstack([x for _, x in cands if len(x)])
    y = np.concatenate(
        [[data.qrels.get(c.claim_id, {}).get(memory.records[r].fact_check_id, 0) > 0 for r in rows]
         for c, (rows, x) in zip(data.claims, cands, strict=True) if len(x)]
    )  # fmt: skip
    return X, y.astype(int)


def run(
    out: Path,
    config: ClaimMatchConfig,
    *,
    root: Path | None = None,
    say: Callable[[str], None] = print,
    command: str = "",
) -> dict[str, Any]:
    """Train, choose and write ``claim_match.json``, ``metrics.json`` and ``MODEL_CARD.md`` into ``out``."""
    from sklearn.linear_model import LogisticRegression

    root = root or data_root()
    fallback = dataclasses.replace(MatchModel(), depth=config.depth)
    say("building the CheckThat 2A memory (MiniLM vectors cached after the first run)")
    memory = FactCheckMemory.build(load_source("checkthat2022", root), model=fallback)
    splits = {name: _split(name, root) for name in ("train", "dev", "dev-test")}
    cands = {name: memory.candidates([c.text for c in d.claims]) for name, d in splits.items()}
    X, y = _labels(memory, splits["train"], cands["train"])
    say(f"train: {len(splits['train'].claims)} tweets, {len(y)} candidates, {int(y.sum())} relevant")
    tried: dict[str, Any] = {"fallback": score_split(memory, fallback, splits["dev"], cands["dev"])}
    models: dict[str, MatchModel] = {"fallback": fallback}
    for c in config.cs:
        lr = LogisticRegression(C=c, max_iter=5000, random_state=config.seed).fit(X, y)
        name = f"logistic C={c:g}"
        models[name] = dataclasses.replace(
            fallback, weights=tuple(float(w) for w in lr.coef_[0]), bias=float(lr.intercept_[0])
        )
        tried[name] = score_split(memory, models[name], splits["dev"], cands["dev"])
        say(f"dev {name}: MAP@5 {tried[name]['AP@5']:.4f}")
    chosen = max(tried, key=lambda n: (tried[n]["AP@5"], tried[n]["AP@1"], n != "fallback"))
    dev_neg = unchecked_top1(memory, models[chosen], splits["dev"], cands["dev"])
    threshold = choose_threshold(tried[chosen]["top1"] + dev_neg, config.precision)
    dev_p, dev_cov = shown_at(tried[chosen]["top1"], threshold)
    dev_p_mixed = shown_at(tried[chosen]["top1"] + dev_neg, threshold)[0]
    test = score_split(memory, models[chosen], splits["dev-test"], cands["dev-test"])
    test_p, test_cov = shown_at(test["top1"], threshold)
    test_neg = unchecked_top1(memory, models[chosen], splits["dev-test"], cands["dev-test"])
    test_p_mixed, _ = shown_at(test["top1"] + test_neg, threshold)
    false_rate = sum(s >= threshold for s, _ in test_neg) / max(1, len(test_neg))
    metrics: dict[str, Any] = {
        "chosen": chosen,
        "dev": {n: {m: round(v[m], 4) for m in MEASURES} for n, v in tried.items()},
        "dev_test": {m: round(test[m], 4) for m in MEASURES},
        "threshold": round(threshold, 6),
        "shown": {"dev": {"precision": round(dev_p, 4), "coverage": round(dev_cov, 4),
                          "precision_with_unchecked": round(dev_p_mixed, 4)},
                  "dev_test": {"precision": round(test_p, 4), "coverage": round(test_cov, 4),
                               "precision_with_unchecked": round(test_p_mixed, 4),
                               "unchecked_shown": round(false_rate, 4)}},
        "config": dataclasses.asdict(config),
    }  # fmt: skip
    model = dataclasses.replace(
        models[chosen], threshold=round(threshold, 6), metrics={"dev_test": metrics["dev_test"]}
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "claim_match.json")
    metrics["sha256"] = hashlib.sha256((out / "claim_match.json").read_bytes()).hexdigest()
    write_metrics(out / "metrics.json", metrics)
    write_card(out / "MODEL_CARD.md", model_card(metrics, command or "factscout train claim-match --out DIR"))
    say(
        f"chose {chosen}: dev-test MAP@5 {test['AP@5']:.4f}; threshold {threshold:.4f} (dev-test precision {test_p:.3f}, coverage {test_cov:.3f})"
    )
    return metrics
