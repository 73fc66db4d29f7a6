"""Quality of the QuanTemp++ verdict classifier (``factscout.verify.classifier``) on AVeriTeC train.

QuanTemp++ (Prabhu 2025; Venktesh et al. 2024, "QuanTemp") classifies a claim from its top-3
retrieved evidence snippets whose score is above 0.5. factscout's version reads the claim and the
evidence retrieved by factscout itself (BM25 over the AVeriTeC BEIR answer pool, claim-only
planner, CombSUM-norm, published-before-claim filter; scores min-max normalised per claim), and a
logistic-regression head over MiniLM + stance features predicts AVeriTeC's 4 labels. All figures
are 5-fold cross-validation by claim (stratified, seed 13) on the 3,067 AVeriTeC train claims
with text, exactly as ``factscout train classifier`` computes them.

* Table 1: 4-class accuracy, macro / weighted F1, per-class F1; the classifier as the number of
  evidence passages varies (k = 1, 3, 5, 7, 10, always with the > 0.5 cut; k = 3 is shipped), an
  ablation without the cut, the baselines (majority class; the same head on the claim embedding
  only) and the head given the gold answer passages (qrels) instead of retrieved ones.
* Table 2: the same in the 3-class QuanTemp++ view (supported -> true, refuted -> false,
  conflicting -> conflicting; gold "not enough evidence" claims left out, predictions renormalised
  over the three classes).
* Table 3: macro-F1 per AVeriTeC claim type (a claim counts under each of its types).

Another split in the same BEIR format (claims with ``metadata.label``, AVeriTeC or QuanTemp label
names): ``--eval-claims C --eval-corpus P [--eval-qrels Q]`` evaluates the shipped head (fitted on
all AVeriTeC train) on it, with the baselines fitted on AVeriTeC train, plus a gold-evidence row
when qrels are given.

    python benchmarks/verdict_classifier.py [--no-gold] [--eval-claims C --eval-corpus P [--eval-qrels Q]]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np
from _common import RESULTS, machine, markdown_table, publish, quiet, write_predictions

from factscout.formats.beir import read_claims, read_corpus, read_qrels
from factscout.records import Claim, Passage
from factscout.text.encoder import Encoder
from factscout.training.verdict.classifier import (
    FOLDS,
    SEED,
    C,
    Prepared,
    constant_probabilities,
    cross_validate,
    cv_splits,
    features_for,
    fit_linear,
    four_and_three,
    load_averitec_train,
    majority_cv,
    prepare,
)
from factscout.verify.classifier import (
    CLASSIFIER_LABELS,
    MIN_SCORE,
    QUANTEMP_LABELS,
    TOP_K,
    VerdictClassifier,
    to_prediction,
)

KS = (1, 3, 5, 7, 10)
COLS4 = ["accuracy", "macro-F1", "weighted-F1", *[f"F1 {lab}" for lab in CLASSIFIER_LABELS]]
COLS3 = ["accuracy", "macro-F1", "weighted-F1", *[f"F1 {lab}" for lab in QUANTEMP_LABELS]]


def gold_evidence(claims: Sequence[Claim], qrels: dict[str, dict[str, int]]) -> list[list[tuple[str, float]]]:
    """Each claim's relevant passages (qrels > 0) as evidence with score 1.0, in passage-id order."""
    return [[(pid, 1.0) for pid in sorted(p for p, r in qrels.get(c.claim_id, {}).items() if r > 0)] for c in claims]


def save_predictions(
    result: str, name: str, k: object, claims: Sequence[Claim], gold: Sequence[str], probs: np.ndarray
) -> None:
    """One row's predictions as a run file: claim id, gold and predicted label, the probabilities
    (in ``CLASSIFIER_LABELS`` order)."""
    write_predictions(
        result,
        f"{name} k={k}",
        (
            {"claim_id": c.claim_id, "gold": g, "predicted": to_prediction(p).label}
            | {"probabilities": [round(float(x), 5) for x in p]}
            for c, g, p in zip(claims, gold, probs, strict=True)
        ),
    )


def row(name: str, k: object, view: dict[str, float], cols: Sequence[str]) -> list[object]:
    return [name, k, int(view["n"]), *[view[c] for c in cols]]


def per_type(
    data: Prepared, systems: dict[str, np.ndarray]
) -> tuple[list[list[object]], dict[str, dict[str, dict[str, float]]]]:
    types = sorted({t for ts in data.types for t in ts})
    rows, out = [], {}
    for t in types:
        idx = [i for i, ts in enumerate(data.types) if t in ts]
        gold = [data.labels[i] for i in idx]
        cells: list[object] = [t, len(idx), dict(Counter(gold)).get("not enough evidence", 0)]
        out[t] = {}
        for name, probs in systems.items():
            four, three = four_and_three(gold, probs[idx])
            out[t][name] = {"4-class macro-F1": four["macro-F1"], "3-class macro-F1": three["macro-F1"]}
            cells += [four["macro-F1"], three["macro-F1"]]
        rows.append(cells)
    return rows, out


def averitec_cv(args: argparse.Namespace, text: list[str], headline: dict[str, object], full: dict) -> None:
    t0 = time.perf_counter()
    claims, corpus = load_averitec_train()
    encoder = Encoder()
    data = prepare(claims, corpus, encoder=encoder)
    splits = cv_splits(data.labels, FOLDS, SEED)
    systems: dict[str, np.ndarray] = {}
    rows4: list[list[object]] = []
    rows3: list[list[object]] = []

    def add(name: str, k: object, probs: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
        four, three = four_and_three(data.labels, probs)
        save_predictions("verdict_classifier", name, k, data.claims, data.labels, probs)
        rows4.append(row(name, k, four, COLS4))
        rows3.append(row(name, k, three, COLS3))
        full[f"{name} | k={k}"] = {"4-class": four, "3-class": three}
        return four, three

    four, three = add("majority class (each fold's training majority)", "-", majority_cv(data.labels, splits))
    headline.update(majority_macro_f1_4=round(four["macro-F1"], 4), majority_macro_f1_3=round(three["macro-F1"], 4))
    systems["majority"] = majority_cv(data.labels, splits)
    probs = cross_validate(features_for(data, claim_only=True), data.labels, splits)
    four, three = add("claim only (same head, claim embedding)", 0, probs)
    headline.update(claim_only_macro_f1_4=round(four["macro-F1"], 4), claim_only_macro_f1_3=round(three["macro-F1"], 4))
    systems["claim only"] = probs
    for k in KS:
        probs = cross_validate(features_for(data, k), data.labels, splits)
        name = f"classifier, top-{k} evidence > {MIN_SCORE}" + (" (shipped)" if k == TOP_K else "")
        four, three = add(name, k, probs)
        headline[f"k{k}_macro_f1_4"] = round(four["macro-F1"], 4)
        headline[f"k{k}_macro_f1_3"] = round(three["macro-F1"], 4)
        if k == TOP_K:
            systems["classifier k=3"] = probs
            headline.update(macro_f1_4=round(four["macro-F1"], 4), macro_f1_3=round(three["macro-F1"], 4))
            headline.update(accuracy_4=round(four["accuracy"], 4), accuracy_3=round(three["accuracy"], 4))
    add(
        f"classifier, top-{TOP_K}, no score cut",
        TOP_K,
        cross_validate(features_for(data, TOP_K, -np.inf), data.labels, splits),
    )
    if not args.no_gold:
        from factscout.datasets import load_dataset

        qrels = load_dataset("averitec_beir", "train").qrels
        gold = prepare(claims, corpus, encoder=encoder, evidence=gold_evidence(claims, qrels))
        probs = cross_validate(features_for(gold, TOP_K), gold.labels, splits)
        four, three = add(f"classifier on the gold answer passages (first {TOP_K} by id; oracle)", TOP_K, probs)
        headline.update(gold_macro_f1_4=round(four["macro-F1"], 4), gold_macro_f1_3=round(three["macro-F1"], 4))
    n_ev = Counter(min(sum(s > MIN_SCORE for _, s in ev), TOP_K) for ev in data.evidence)
    text += [
        f"### AVeriTeC train, {FOLDS}-fold CV by claim: 4 classes ({len(data.labels):,} claims; {dict(Counter(data.labels))})",
        "",
        markdown_table(["system", "k", "n", *COLS4], rows4),
        "",
        "### Same, 3-class QuanTemp++ view (true / false / conflicting; gold NEE claims left out)",
        "",
        markdown_table(["system", "k", "n", *COLS3], rows3),
        "",
        f"Claims by evidence passages read at k = {TOP_K} (> {MIN_SCORE} after per-claim min-max): "
        f"{dict(sorted(n_ev.items()))}. Head: logistic regression, balanced class weights, C = {C} (fixed).",
        "",
    ]
    type_rows, full["per_type"] = per_type(data, systems)
    header = ["claim type", "claims", "NEE"]
    for name in systems:
        header += [f"{name} 4-cl", f"{name} 3-cl"]
    text += [
        "### Macro-F1 per AVeriTeC claim type (CV predictions above; 4-class and 3-class view)",
        "",
        markdown_table(header, type_rows),
        "",
    ]
    num = full["per_type"].get("Numerical Claim", {}).get("classifier k=3")
    if num:
        headline["numerical_macro_f1_4"] = round(num["4-class macro-F1"], 4)
        headline["numerical_macro_f1_3"] = round(num["3-class macro-F1"], 4)
    text.append(
        f"AVeriTeC part took {time.perf_counter() - t0:.0f} s on {machine()}; texts missing from the encoder disk cache are encoded first (~10 min each for the "
        "retrieved and the gold passages on a first run)."
    )


def external(args: argparse.Namespace, text: list[str], headline: dict[str, object], full: dict) -> None:
    claims = list(read_claims(args.eval_claims))
    corpus: list[Passage] = list(read_corpus(args.eval_corpus))
    encoder = Encoder()
    model = VerdictClassifier.load(encoder=encoder)
    data = prepare(claims, corpus, encoder=encoder)
    train_claims, train_corpus = load_averitec_train()
    train = prepare(train_claims, train_corpus, encoder=encoder)
    rows4, rows3 = [], []

    def add(name: str, probs: np.ndarray, labels: Sequence[str]) -> dict[str, float]:
        four, three = four_and_three(list(labels), probs)
        save_predictions("verdict_classifier_eval", name, TOP_K, data.claims, labels, probs)
        rows4.append(row(name, TOP_K, four, COLS4))
        rows3.append(row(name, TOP_K, three, COLS3))
        full[f"eval | {name}"] = {"4-class": four, "3-class": three}
        return four

    majority = Counter(train.labels).most_common(1)[0][0]
    add(f"majority class of AVeriTeC train ({majority})", constant_probabilities(majority, len(claims)), data.labels)
    head = fit_linear(features_for(train, claim_only=True), train.labels)
    add("claim only (fitted on AVeriTeC train)", head.predict_proba(features_for(data, claim_only=True)), data.labels)
    four = add(
        "shipped classifier, retrieved evidence",
        model.predict_features(features_for(data, model.k, model.min_score)),
        data.labels,
    )
    headline["eval_macro_f1_4"] = round(four["macro-F1"], 4)
    if args.eval_qrels:
        gold = prepare(claims, corpus, encoder=encoder, evidence=gold_evidence(claims, read_qrels(args.eval_qrels)))
        add(
            "shipped classifier, gold (qrels) evidence",
            model.predict_features(features_for(gold, model.k, model.min_score)),
            gold.labels,
        )
    text += [
        f"### {args.eval_claims}: shipped classifier ({len(claims)} claims; {dict(Counter(data.labels))})",
        "",
        markdown_table(["system", "k", "n", *COLS4], rows4),
        "",
        "3-class QuanTemp++ view:",
        "",
        markdown_table(["system", "k", "n", *COLS3], rows3),
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-claims", help="claims JSONL (BEIR queries with metadata.label)")
    parser.add_argument("--eval-corpus", help="corpus JSONL (BEIR) for --eval-claims")
    parser.add_argument("--eval-qrels", help="qrels TSV (BEIR) for --eval-claims: adds a gold-evidence row")
    parser.add_argument("--no-gold", action="store_true", help="skip the gold-evidence (oracle) row on AVeriTeC")
    args = parser.parse_args()
    if bool(args.eval_claims) != bool(args.eval_corpus) or (args.eval_qrels and not args.eval_claims):
        parser.error("--eval-claims and --eval-corpus go together (--eval-qrels needs both)")
    quiet()
    text: list[str] = []
    headline: dict[str, object] = {"benchmark": "verdict_classifier"}
    full: dict = {}
    if args.eval_claims:
        headline["eval"] = args.eval_claims
        external(args, text, headline, full)
    else:
        headline["eval"] = f"AVeriTeC train {FOLDS}-fold CV"
        averitec_cv(args, text, headline, full)
    text += ["", "Reproduce: `python benchmarks/verdict_classifier.py`"]
    name = "verdict_classifier_eval" if args.eval_claims else "verdict_classifier"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps({"headline": headline, "tables": full}, indent=2) + "\n")
    publish(name, "\n".join(text), headline)


if __name__ == "__main__":
    main()
