"""Train the QuanTemp++ verdict classifier (:mod:`factscout.verify.classifier`) on AVeriTeC train.

    factscout train classifier --out src/factscout/verify/models

1. **evidence**: every AVeriTeC train claim is checked by factscout's own retrieval,
   ``Checker(bm25 over the AVeriTeC BEIR answer pool, CheckSettings(planner="claim",
   fusion="combsum-norm", depth=50, date_filter=True)).retrieve(claims)``: passages published
   after the claim are filtered out; the fused ranking is min-max normalised per claim
   (:func:`~factscout.verify.classifier.normalized_evidence`) and the top 10 kept;
2. **features**: MiniLM embeddings of claims and passages (cached on disk by the encoder), the
   shipped stance head's probabilities for each (claim, passage) pair, and
   :func:`~factscout.verify.classifier.verdict_features` over the top ``k`` (3) passages whose
   normalised score is > 0.5;
3. **head**: multinomial logistic regression, balanced class weights, ``C`` fixed in advance
   (:data:`C`; no hyper-parameter search, so the cross-validated figures are not tuned on
   themselves); standardisation is folded into the weights, which are rounded to fp16 both in
   cross-validation and in the shipped file;
4. **figures**: 5-fold cross-validation by claim (stratified, seeded), against the majority
   class and the same head on the claim embedding alone; the shipped head is then fitted on
   all claims. Writes ``verdict_classifier.npz``, ``classifier_metrics.json`` and
   ``CLASSIFIER_CARD.md`` into ``--out``.

The helpers here (:func:`prepare`, :func:`features_for`, :func:`cross_validate`, :func:`scores`)
are also what ``benchmarks/verdict_classifier.py`` runs.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from factscout.datasets import load_dataset
from factscout.errors import InputError
from factscout.evaluate.classification import class_scores
from factscout.hashing import file_sha256
from factscout.nn.encoding import CachingEncoder
from factscout.records import Claim, Passage
from factscout.training.cards import write_card, write_metrics
from factscout.training.splits import CV_FOLDS, SEED, folds_of, train_test_indices
from factscout.verify.classifier import (
    AVERITEC_LABELS,
    CLASSIFIER_LABELS,
    CONFLICTING,
    MIN_SCORE,
    QUANTEMP_LABELS,
    TO_QUANTEMP,
    TOP_K,
    VerdictClassifier,
    normalized_evidence,
    to_prediction,
    verdict_features,
)
from factscout.verify.stance import StanceHead
from factscout.verify.verdict import NOT_ENOUGH_EVIDENCE, REFUTED, SUPPORTED

log = logging.getLogger(__name__)

FOLDS = CV_FOLDS
C = 0.1
DEPTH = 50
KEEP = 10
MODEL_NAME = "verdict_classifier.npz"
METRICS_NAME = "classifier_metrics.json"
CARD_NAME = "CLASSIFIER_CARD.md"
COMMAND = "factscout train classifier --out src/factscout/verify/models"

_GOLD = {
    **{k.lower(): v for k, v in AVERITEC_LABELS.items()},
    **{v: v for v in CLASSIFIER_LABELS},
    "true": SUPPORTED,
    "false": REFUTED,
    "conflicting evidence": CONFLICTING,
    "support": SUPPORTED,
    "supports": SUPPORTED,
    "refutes": REFUTED,
    "contradict": REFUTED,
    "nei": NOT_ENOUGH_EVIDENCE,
    "not enough info": NOT_ENOUGH_EVIDENCE,
}


def gold_label(claim: Claim) -> str:
    """A claim's gold verdict from ``meta["label"]`` (AVeriTeC strings, QuanTemp's True/False/Conflicting,
    SciFact/FEVER names or :data:`CLASSIFIER_LABELS`)."""
    raw = str(claim.meta.get("label", "")).strip()
    label = _GOLD.get(raw.lower())
    if label is None:
        raise InputError(f"claim {claim.claim_id}: label {raw!r} is not one of {sorted(AVERITEC_LABELS)}")
    return label


@dataclass(frozen=True, slots=True)
class ClassifierConfig:
    """The settings of ``factscout train classifier`` (:func:`train`'s defaults)."""

    folds: int = FOLDS
    seed: int = SEED


@dataclass
class Prepared:
    """Everything the head needs for a set of claims, computed once: gold labels, claim types,
    each claim's top :data:`KEEP` evidence ``(passage_id, normalised score)``, the embeddings and
    the stance probabilities of every (claim, evidence) pair."""

    claims: list[Claim]
    labels: list[str]
    types: list[tuple[str, ...]]
    evidence: list[list[tuple[str, float]]]
    claim_vectors: np.ndarray
    passage_vectors: dict[str, np.ndarray]
    stance: list[np.ndarray]  # per claim (len(evidence[i]), 3)
    seconds: dict[str, float]


def retrieve_evidence(
    claims: Sequence[Claim], corpus: Sequence[Passage], *, depth: int = DEPTH, keep: int = KEEP,
    date_filter: bool = True, retriever: str = "bm25",
) -> list[list[tuple[str, float]]]:  # fmt: skip
    """Each claim's top ``keep`` passages by factscout's check retrieval (claim-only planner,
    CombSUM-norm, published-before-claim filter), scores min-max normalised per claim."""
    from factscout.check import Checker, CheckSettings
    from factscout.retrieve import build_retriever

    index = build_retriever(list(corpus), retriever, show_progress=False)
    checker = Checker(
        index, CheckSettings(planner="claim", fusion="combsum-norm", depth=depth, date_filter=date_filter)
    )
    found = checker.retrieve(list(claims))
    return [normalized_evidence(f.ranking)[:keep] for f in found]


def prepare(
    claims: Sequence[Claim],
    corpus: Sequence[Passage],
    *,
    encoder: Any = None,
    stance: StanceHead | None = None,
    date_filter: bool = True,
    evidence: Sequence[list[tuple[str, float]]] | None = None,
) -> Prepared:
    """Retrieve, embed and stance-classify the evidence of ``claims`` (labels from their meta).

    ``evidence`` (per claim ``(passage_id, score)`` best first) replaces retrieval, e.g. the gold
    passages of the qrels for an oracle-evidence row."""
    from factscout.text.encoder import Encoder

    seconds: dict[str, float] = {}
    t = time.perf_counter()
    labels = [gold_label(c) for c in claims]
    types = [tuple(str(x) for x in (c.meta.get("claim_types") or ())) for c in claims]
    if evidence is None:
        evidence = retrieve_evidence(claims, corpus, date_filter=date_filter)
    evidence = [list(ev) for ev in evidence]
    if len(evidence) != len(claims):
        raise InputError(f"{len(claims)} claims but {len(evidence)} evidence lists")
    seconds["retrieve"] = time.perf_counter() - t
    t = time.perf_counter()
    encoder = encoder or Encoder()
    encode = encoder.encode_cached if isinstance(encoder, CachingEncoder) else encoder.encode
    text_of = {p.passage_id: p.text for p in corpus}
    needed = sorted({pid for ev in evidence for pid, _ in ev})
    pvecs = np.asarray(encode([text_of[p] for p in needed]), dtype=np.float32)
    passage_vectors = dict(zip(needed, pvecs, strict=True))
    claim_vectors = np.asarray(encode([c.text for c in claims]), dtype=np.float32)
    seconds["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    stance = stance or StanceHead.load(encoder=encoder)
    probs = []
    for u, ev in zip(claim_vectors, evidence, strict=True):
        if ev:
            v = np.stack([passage_vectors[pid] for pid, _ in ev])
            probs.append(stance.predict_proba(np.repeat(u[None], len(ev), axis=0), v))
        else:
            probs.append(np.zeros((0, 3), dtype=np.float32))
    seconds["stance"] = time.perf_counter() - t
    return Prepared(list(claims), labels, types, evidence, claim_vectors, passage_vectors, probs, seconds)


def features_for(
    data: Prepared, k: int = TOP_K, min_score: float = MIN_SCORE, *, claim_only: bool = False
) -> np.ndarray:
    """The feature matrix with at most ``k`` evidence passages above ``min_score`` per claim;
    ``claim_only`` keeps just the claim embedding (the claim-only baseline)."""
    if claim_only:
        return np.asarray(data.claim_vectors, dtype=np.float32)
    rows = []
    d = data.claim_vectors.shape[1]
    for u, ev, probs in zip(data.claim_vectors, data.evidence, data.stance, strict=True):
        keep = [i for i, (_, s) in enumerate(ev) if s > min_score][:k]  # ev is sorted best first
        vecs = np.stack([data.passage_vectors[ev[i][0]] for i in keep]) if keep else np.zeros((0, d), np.float32)
        rows.append(verdict_features(u, vecs, [ev[i][1] for i in keep], probs[keep]))
    return np.stack(rows)


class LinearHead(NamedTuple):
    """A fitted softmax-linear head over standardised features (fp16-rounded weights)."""

    weight: np.ndarray
    bias: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = ((np.asarray(x, dtype=np.float32) - self.mean) / self.scale) @ self.weight + self.bias
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        out: np.ndarray = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
        return out


def fit_linear(x: np.ndarray, y: Sequence[str], *, c: float = C, seed: int = SEED) -> LinearHead:
    """Multinomial logistic regression (balanced class weights) on standardised features, columns
    in :data:`CLASSIFIER_LABELS` order, weights rounded to fp16 as in the shipped file."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    present = set(y)
    if present != set(CLASSIFIER_LABELS):
        raise InputError(f"training needs all of {CLASSIFIER_LABELS}, got {sorted(present)}")
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=3000, random_state=seed)
    model.fit(scaler.transform(x), list(y))
    order = [list(model.classes_).index(lab) for lab in CLASSIFIER_LABELS]
    weight = model.coef_[order].T.astype(np.float16).astype(np.float32)
    bias = model.intercept_[order].astype(np.float16).astype(np.float32)
    return LinearHead(weight, bias, scaler.mean_.astype(np.float32), scaler.scale_.astype(np.float32))


def fit_head(x: np.ndarray, y: Sequence[str], *, c: float = C, seed: int = SEED) -> VerdictClassifier:
    """:func:`fit_linear` on :func:`features_for` rows, as a :class:`VerdictClassifier`."""
    h = fit_linear(x, y, c=c, seed=seed)
    return VerdictClassifier(h.weight, h.bias, h.mean, h.scale)


def cv_splits(labels: Sequence[str], folds: int = FOLDS, seed: int = SEED) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training, held-out) indices of a stratified ``folds``-fold split by claim (one row per
    claim), seeded (:func:`factscout.training.splits.folds_of` with ``by="label"``)."""
    return train_test_indices(folds_of(list(range(len(labels))), folds, seed, by="label", labels=labels))


def cross_validate(
    x: np.ndarray, labels: Sequence[str], splits: Sequence[tuple[np.ndarray, np.ndarray]], *, c: float = C
) -> np.ndarray:
    """Out-of-fold class probabilities ``(n, 4)`` in :data:`CLASSIFIER_LABELS` order."""
    y = np.asarray(labels)
    out = np.zeros((len(y), len(CLASSIFIER_LABELS)), dtype=np.float32)
    for train, test in splits:
        out[test] = fit_linear(x[train], y[train], c=c).predict_proba(x[test])
    return out


def scores(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy, macro- and weighted F1 and per-class F1 (``F1 <label>``) over ``labels``
    (:func:`factscout.evaluate.classification.class_scores`)."""
    return class_scores(gold, predicted, labels)


def four_and_three(gold: Sequence[str], probabilities: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    """4-class scores, and the 3-class QuanTemp++ view (gold NEE claims left out, predictions
    through :meth:`~factscout.verify.classifier.Prediction.three_way`)."""
    preds = [to_prediction(p) for p in probabilities]
    four = scores(gold, [p.label for p in preds], CLASSIFIER_LABELS)
    kept = [i for i, g in enumerate(gold) if g != NOT_ENOUGH_EVIDENCE]
    three = scores([TO_QUANTEMP[gold[i]] for i in kept], [preds[i].three_way()[0] for i in kept], QUANTEMP_LABELS)
    return four, three


def constant_probabilities(label: str, n: int) -> np.ndarray:
    p = np.zeros((n, len(CLASSIFIER_LABELS)), dtype=np.float32)
    p[:, CLASSIFIER_LABELS.index(label)] = 1.0
    return p


def majority_cv(labels: Sequence[str], splits: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Out-of-fold "probabilities" of the majority-class baseline (each fold's training majority)."""
    y = np.asarray(labels)
    out = np.zeros((len(y), len(CLASSIFIER_LABELS)), dtype=np.float32)
    for train, test in splits:
        label = Counter(y[train].tolist()).most_common(1)[0][0]
        out[test] = constant_probabilities(str(label), len(test))
    return out


def load_averitec_train() -> tuple[list[Claim], list[Passage]]:
    data = load_dataset("averitec_beir", "train")
    return list(data.claims), list(data.corpus)


def train(out: Path, *, folds: int = FOLDS, seed: int = SEED, c: float = C) -> dict[str, Any]:
    """Cross-validate, fit on all AVeriTeC train claims and write the head, metrics and card to ``out``."""
    start = time.perf_counter()
    np.random.seed(seed)
    claims, corpus = load_averitec_train()
    data = prepare(claims, corpus)
    x = features_for(data)
    splits = cv_splits(data.labels, folds, seed)
    t = time.perf_counter()
    cv = cross_validate(x, data.labels, splits, c=c)
    rows = {
        "classifier (claim + top-3 evidence > 0.5)": four_and_three(data.labels, cv),
        "claim only (same head, claim embedding)": four_and_three(
            data.labels, cross_validate(features_for(data, claim_only=True), data.labels, splits, c=c)
        ),
        "majority class": four_and_three(data.labels, majority_cv(data.labels, splits)),
    }
    cv_s = time.perf_counter() - t
    t = time.perf_counter()
    model = fit_head(x, data.labels, c=c, seed=seed)
    fit_s = time.perf_counter() - t
    n_ev = Counter(min(sum(s > MIN_SCORE for _, s in ev), TOP_K) for ev in data.evidence)
    qrels = load_dataset("averitec_beir", "train").qrels
    with_gold = sum(
        any(pid in qrels.get(c.claim_id, {}) for pid, s in ev[:TOP_K] if s > MIN_SCORE)
        for c, ev in zip(claims, data.evidence, strict=True)
    )
    info = {
        "trained_on": f"AVeriTeC train ({len(claims):,} claims), evidence retrieved by factscout (BM25, AVeriTeC BEIR pool)",
        "licence": "CC BY-NC 4.0 (AVeriTeC): these weights are for non-commercial use",
        "seed": str(seed),
        "C": str(c),
        "encoder": "minilm",
    }
    model.info = info
    out.mkdir(parents=True, exist_ok=True)
    path = model.save(out / MODEL_NAME)
    total = time.perf_counter() - start
    metrics: dict[str, Any] = {
        "model": MODEL_NAME,
        "bytes": path.stat().st_size,
        "sha256": file_sha256(path),
        "parameters": int(model.weight.size + model.bias.size),
        "standardisation_values": int(model.mean.size + model.scale.size),
        "command": COMMAND,
        "seed": seed,
        "folds": folds,
        "C": c,
        "k": TOP_K,
        "min_score": MIN_SCORE,
        "claims": len(claims),
        "label_counts": dict(Counter(data.labels)),
        "evidence_counts": {str(k): n_ev[k] for k in sorted(n_ev)},
        "claims_with_gold_in_evidence": with_gold,
        "cv": {name: {"4-class": four, "3-class": three} for name, (four, three) in rows.items()},
        "seconds": {
            **{k: round(v, 1) for k, v in data.seconds.items()},
            "cv": round(cv_s, 1),
            "fit": round(fit_s, 1),
            "total": round(total, 1),
        },
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
    }
    write_metrics(out / METRICS_NAME, metrics)
    write_card(out / CARD_NAME, card(metrics))
    return metrics


def _table(rows: dict[str, Any], view: str, labels: Sequence[str]) -> str:
    cols = ["accuracy", "macro-F1", "weighted-F1", *[f"F1 {lab}" for lab in labels]]
    lines = ["| model | n | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, views in rows.items():
        s = views[view]
        lines.append(f"| {name} | {int(s['n'])} | " + " | ".join(f"{s[col]:.3f}" for col in cols) + " |")
    return "\n".join(lines)


def card(m: dict[str, Any]) -> str:
    """The model card (markdown) from the metrics written by :func:`train`."""
    return f"""# factscout verdict classifier (`{m["model"]}`)

The QuanTemp++ verdict step (Prabhu 2025; Venktesh et al. 2024, "QuanTemp"): claim + its top-3
retrieved evidence whose score is above 0.5 -> supported / refuted / conflicting / not enough
evidence (AVeriTeC's four labels), with a 3-class QuanTemp++ view (supported -> true, refuted ->
false, conflicting -> conflicting; NEE probability mass dropped and gold-NEE claims left out).
`factscout.verify.classifier.VerdictClassifier.load().predict(claim, evidence_texts, evidence_scores)`.

- file: `{m["model"]}`, {m["bytes"]:,} bytes, sha256 `{m["sha256"]}`
- head: multinomial logistic regression, {m["parameters"]:,} weights and biases (fp16) over features
  standardised with {m["standardisation_values"]:,} stored means and scales (float32), balanced class
  weights, C = {m["C"]} fixed in advance (no search)
- features: frozen all-MiniLM-L6-v2 claim embedding u, mean evidence embedding v, |u-v|, u*v,
  and 15 evidence statistics (the shipped stance head's supports/refutes/NEI probabilities
  averaged and maxed over the evidence, cosine and score statistics, evidence count); no
  evidence -> zeros in the evidence block (prediction from the claim alone)
- seed {m["seed"]}; command (CPU, 2 shared cores, {m["seconds"]["total"]:.0f} s in all; stage
  seconds {json.dumps(m["seconds"])}, with the MiniLM embeddings already in the encoder's disk cache;
  a first run also encodes the claims and their retrieved passages, about 10 more minutes here):

  ```
  {m["command"]}
  ```

## Data and licence

AVeriTeC train (Schlichtkrull, Guo & Vlachos 2023), {m["claims"]:,} claims, **CC BY-NC 4.0**: the
weights are derived from non-commercial data and are **for non-commercial use only**.
Label counts: {json.dumps(m["label_counts"])}.
QuanTemp's claims here carry no verdicts, so it is not used.

Evidence is *retrieved* by factscout, not given: `Checker(bm25, CheckSettings(planner="claim",
fusion="combsum-norm", depth=50, date_filter=True)).retrieve(claims)` over the AVeriTeC BEIR
passage pool (the gold answers of the train and dev claims, 9,453 passages), passages dated after
the claim removed. Each claim's fused ranking is min-max normalised (best = 1, the last of the up to 50 kept = 0) and
the top-3 with normalised score > 0.5 are read. Claims by number of evidence passages read:
{json.dumps(m["evidence_counts"])}; {m["claims_with_gold_in_evidence"]:,} of {m["claims"]:,} claims have at least one of their
own gold answers (qrels) among the passages read.
Caveat: the pool is closed and holds each claim's own gold answers (written by annotators who
knew the verdict), so this evidence is far cleaner than open-web retrieval: expect lower figures
on web evidence.

## {m["folds"]}-fold cross-validation by claim (stratified, seed {m["seed"]})

4 classes (AVeriTeC):

{_table(m["cv"], "4-class", CLASSIFIER_LABELS)}

3 classes (QuanTemp++ view, gold "not enough evidence" claims left out):

{_table(m["cv"], "3-class", QUANTEMP_LABELS)}

The k sweep (1, 3, 5, 7, 10 evidence passages) and the per-claim-type breakdown are in
`benchmarks/results/verdict_classifier.md` (`python benchmarks/verdict_classifier.py`).
"""
