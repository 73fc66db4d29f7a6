"""Train the stance cross-encoder (``factscout train stance-cross --out DIR``).

Three stages, run together or one at a time through a bundle file (``--stage``), so that the
fit can run on a GPU machine that holds neither the datasets nor the installed backbone package
(:func:`prepare` -> JSON bundle; :func:`fit` needs only torch, the bundle and a backbone folder;
:func:`~factscout.training.stance.cross_report.report` scores and writes the card where the data is).
The settings (:class:`~factscout.training.stance.cross_config.CrossConfig`) and the SciFact split
the stages share are in :mod:`factscout.training.stance.cross_config`.

Recipe (fixed seeds):

1. SciFact train claims are split exactly as for the stance head
   (:func:`~factscout.training.splits.split_scifact`, seed 13): the 202 held-out claims are
   never trained or tuned on. The training part is split again, by claim groups, into a fitting
   part and a dev part (``dev_fraction``) that chooses the epoch and tunes the count rule.
2. Training pairs: with ``pairs`` (a file of ``factscout train stance-pairs``), those pairs (a
   SciFact pair of a dev or held-out claim is refused), optionally a label-balanced sample of
   ``max_pairs``; otherwise the built-in recipe: every rationale sentence of the fitting part (SUPPORT -> supports,
   CONTRADICT -> refutes); per claim the ``hard_nei`` non-rationale sentences of its cited
   abstracts most similar to it (MiniLM cosine) and ``random_nei`` others (not enough info);
   a share of the negation pairs (:func:`~factscout.training.stance.data.negation_pairs`); and a
   balanced sample of COVID-Fact gold evidence pairs (refuted claims there are counter-claims
   that differ from the evidence in a word or two: the contrast a cross-encoder can learn and
   a pooled bi-encoder cannot).
3. LoRA adapters + a linear 3-class head (:func:`factscout.nn.backbone.build_network`
   with ``num_labels=3``), or with ``finetune="full"`` every backbone weight but the
   vocabulary table; class-weighted cross-entropy, AdamW with warm-up and linear decay,
   batches of pairs of similar length (:func:`~factscout.training.loop.length_batches`: less
   padding, about twice the pairs per second on CPU); ``init`` starts from another model file or
   from stage 0's NLI weights (:mod:`factscout.training.stance.nli_stage`).
   After each epoch the dev part's stance macro-F1 is measured; the best epoch is kept.
4. Calibration: one temperature dividing the logits, fitted on every dev pair by likelihood
   (Guo et al. 2017, "On Calibration of Modern Neural Networks"); stored in the model file.
5. The count rule (``min_evidence``, ``min_confidence``) is tuned on the dev part's claims with
   the sentences the embedding selector would pass, and stored in the model file.
6. Held-out report: stance accuracy / macro-F1 on the same evaluation pairs as the head's model
   card (gold rationales + the 2 most claim-similar other sentences per claim), against the
   shipped head, similarity-only and majority, with bootstrap intervals; the held-out verdict
   with the selector's sentences and with the gold rationales.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError
from factscout.training.loop import adamw_with_warmup, length_batches, optimizer_step
from factscout.training.stance.cross_config import FIT_LOG, CrossConfig, Parts, Say, quiet, scifact_parts
from factscout.training.stance.data import (
    Pair,
    covidfact_pairs,
    negation_pairs,
    read_stance_pairs,
)
from factscout.training.stance.evaluation import (
    stance_eval_set,
    stance_scores,
)
from factscout.verify.cross_stance import MODEL_FILE, CrossStanceModel
from factscout.verify.stance import STANCE_LABELS

BUNDLE_FORMAT = "factscout-stance-cross-bundle"


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


def file_pairs(path: str | Path, refused: set[str]) -> tuple[list[Pair], list[str]]:
    """The pairs of a ``factscout train stance-pairs`` file and their origins; a SciFact pair of a
    claim in ``refused`` (the dev and held-out claims) raises :class:`InputError`."""
    pairs, origins = read_stance_pairs(path)
    leaked = sorted(
        {p.claim_id for p, o in zip(pairs, origins, strict=True) if o == "scifact" and p.claim_id in refused}
    )
    if leaked:
        raise InputError(
            f"{path}: {len(leaked)} SciFact dev/held-out claims have training pairs (e.g. {leaked[:3]}); "
            "rebuild it with factscout train stance-pairs"
        )
    return pairs, origins


def train_model(
    pairs: Sequence[Pair],
    config: CrossConfig,
    say: Say,
    *,
    evaluate: Callable[[CrossStanceModel], float] | None = None,
    device: str = "cpu",
    backbone: str | None = None,
) -> tuple[CrossStanceModel, dict[str, Any]]:
    """Fine-tune the network on ``pairs``; keep the epoch with the best ``evaluate`` score.
    ``backbone``: a folder holding the backbone (default: the installed package)."""
    import torch
    from transformers import AutoTokenizer

    from factscout.nn.adapters import trainable_state
    from factscout.nn.backbone import assign_state, backbone_path, build_network
    from factscout.nn.pairs import encode_pairs

    if not pairs:
        raise InputError("no training pairs")
    torch.manual_seed(config.seed)
    net_config = config.network(backbone or "minilm")
    network = build_network(net_config)
    if config.init is not None:
        _load_weights(network, config.init, net_config)
    network = network.to(device)
    tokenizer = AutoTokenizer.from_pretrained(backbone_path(net_config["backbone"]), local_files_only=True)
    model = CrossStanceModel(network, tokenizer, max_length=config.max_length, device=device, batch_size=128)
    params = [p for p in network.parameters() if p.requires_grad]
    counts = np.bincount([p.label for p in pairs], minlength=len(STANCE_LABELS)).astype(np.float64)
    weights = torch.tensor(counts.sum() / (len(counts) * np.maximum(counts, 1.0)), dtype=torch.float32)
    per_epoch = math.ceil(len(pairs) / config.batch_size)
    steps = per_epoch * config.epochs
    if config.max_steps is not None:
        steps = min(steps, config.max_steps)
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.learning_rate, weight_decay=config.weight_decay, steps=steps, warmup=config.warmup
    )
    log: dict[str, Any] = {
        "pairs": len(pairs),
        "steps": steps,
        "epochs": [],
        "label_counts": counts.tolist(),
        "device": device,
        "training_pairs": dict(Counter(f"{p.source}/{STANCE_LABELS[p.label]}" for p in pairs)),
    }
    best: tuple[float, dict[str, np.ndarray]] | None = None
    started = time.perf_counter()
    losses: list[float] = []
    step = 0
    lengths = [len(p.claim) + len(p.sentence) for p in pairs]  # characters: a cheap stand-in for tokens
    for epoch in range(config.epochs):
        network.train()
        batches = length_batches(lengths, config.batch_size, config.seed * 1000 + epoch)
        for b in range(per_epoch):
            if step >= steps:
                break
            batch = [pairs[i] for i in batches[b]]
            enc = encode_pairs(
                tokenizer, [p.claim for p in batch], [p.sentence for p in batch], max_length=config.max_length
            )
            logits = network(**{k: v.to(device) for k, v in enc.items()})
            target = torch.tensor([p.label for p in batch], dtype=torch.long, device=device)
            loss = torch.nn.functional.cross_entropy(logits, target, weight=weights.to(device))
            optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
            losses.append(float(loss.detach()))
            step += 1
            if step % 100 == 0 or step == steps:
                say(f"step {step}/{steps} loss {np.mean(losses[-100:]):.4f} ({time.perf_counter() - started:.0f} s)")
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
    assign_state(network, best[1], {}, "the best epoch")
    model.clear_cache()
    model.batch_size = 32
    log["best_dev_macro_f1"] = round(best[0], 4)
    log["train_seconds"] = round(time.perf_counter() - started, 1)
    log["trainable_parameters"] = int(sum(p.numel() for p in params))
    return model, log


def train_soup(
    pairs: Sequence[Pair],
    config: CrossConfig,
    say: Say,
    *,
    evaluate: Callable[[CrossStanceModel], float],
    device: str = "cpu",
    backbone: str | None = None,
) -> tuple[CrossStanceModel, dict[str, Any]]:
    """One :func:`train_model` fit per seed of ``config.soup``, then the element-wise mean of the
    fits' trained weights (a uniform model soup: Wortsman et al. 2022, "Model soups: averaging
    weights of multiple fine-tuned models improves accuracy without increasing inference time").
    Every fit starts from the same weights (the backbone or ``config.init``) and differs only in
    its data order, so the mean stays a working network; it costs nothing at inference."""
    from factscout.nn.adapters import trainable_state
    from factscout.nn.backbone import assign_state

    if not config.soup or len(set(config.soup)) != len(config.soup):
        raise InputError(f"a soup needs distinct seeds, not {config.soup}")
    total: dict[str, np.ndarray] = {}  # the fits' weights summed in float64
    fits: list[dict[str, Any]] = []
    for seed in config.soup:
        say(f"soup: fit with seed {seed}")
        model, log = train_model(
            pairs, replace(config, seed=seed, soup=None), say, evaluate=evaluate, device=device, backbone=backbone
        )
        for name, value in trainable_state(model.network).items():
            total[name] = total.get(name, 0.0) + value.astype(np.float64)
        fits.append({k: log[k] for k in ("best_dev_macro_f1", "epochs", "train_seconds")} | {"seed": seed})
    mean = {name: (value / len(fits)).astype(np.float32) for name, value in total.items()}
    assign_state(model.network, mean, {}, "the soup")
    model.clear_cache()
    score = evaluate(model)
    say(f"soup of {len(fits)} fits: dev macro-F1 {score:.4f} (fits: {[f['best_dev_macro_f1'] for f in fits]})")
    log |= {
        "soup": fits,
        "best_dev_macro_f1": round(score, 4),
        "train_seconds": round(sum(f["train_seconds"] for f in fits), 1),
    }
    return model, log


def _load_weights(network: Any, path: str, net_config: dict[str, Any]) -> None:
    """Copy a stance cross-encoder file's weights (or stage 0's full-precision ``stance_nli.pt``)
    into ``network`` (built with the same config)."""
    from factscout.nn.adapters import read_lora_file
    from factscout.nn.backbone import assign_state
    from factscout.verify.cross_stance import FORMAT

    if Path(path).suffix == ".pt":
        from factscout.training.stance.nli_stage import load_init

        load_init(network, Path(path))
        return
    config, arrays = read_lora_file(Path(path), FORMAT, "stance cross-encoder")
    if config.get("finetune", "lora") != net_config["finetune"]:
        raise BadModel(
            f"{path} was trained with finetune={config.get('finetune', 'lora')}, not {net_config['finetune']}"
        )
    assign_state(network, arrays, config, path)


def prepare(config: CrossConfig, say: Say = quiet, *, parts: Parts | None = None) -> dict[str, Any]:
    """The training pairs and the dev evaluation pairs that choose the epoch, as a JSON bundle."""
    from factscout.datasets import load_dataset

    parts = parts or scifact_parts(config, say)
    if config.pairs is not None:
        pairs, origins = file_pairs(config.pairs, {c.claim_id for c in (*parts.dev, *parts.heldout)})
    else:
        covid = balanced_sample(covidfact_pairs(load_dataset("covidfact").claims), config.covidfact, config.seed)
        negation = negation_pairs(parts.pairs["fit"])
        negation = random.Random(config.seed).sample(negation, round(config.negation_share * len(negation)))
        pairs = training_pairs(parts.pairs["fit"], parts.cosines["fit"], [*negation, *covid], config)
        origins = [p.source.split(":")[0] for p in pairs]
    say(f"{len(pairs)} training pairs: {dict(Counter(STANCE_LABELS[p.label] for p in pairs))}")
    dev = parts.pairs["dev"]
    dev_idx = stance_eval_set(dev, parts.cosines["dev"])
    scifact_dev = [[dev[i].claim, dev[i].sentence, dev[i].label] for i in dev_idx]
    bundle: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "pairs": [[p.claim, p.sentence, p.label, p.source, o] for p, o in zip(pairs, origins, strict=True)],
        "dev": scifact_dev,
        "claims": {"fitting": len(parts.fit), "dev": len(parts.dev), "heldout": len(parts.heldout)},
    }
    if config.domains:
        from factscout.training.stance.domains import domain_rows

        bundle["dev_sets"] = {"scifact": scifact_dev} | {
            name: [list(r) for r in rows] for name, rows in domain_rows().items()
        }
        say("dev pairs per domain: " + ", ".join(f"{k} {len(v)}" for k, v in bundle["dev_sets"].items()))
    return bundle


def fit(
    bundle: dict[str, Any],
    config: CrossConfig,
    out: Path,
    say: Say = quiet,
    *,
    device: str = "cpu",
    backbone: str | None = None,
    backbone_name: str | None = None,
) -> Path:
    """Train on a :func:`prepare` bundle (needs torch and the backbone only) and write the weights
    (without temperature and count rule: :func:`report` adds them) and the fit log to ``out``.
    ``backbone_name``: the backbone the file records, where ``backbone`` is a copy of it read
    from elsewhere (a GPU machine's fp16 copy of the installed package: ``minilm``)."""
    if bundle.get("format") != BUNDLE_FORMAT:
        raise BadModel(f"not a stance cross-encoder bundle (format {bundle.get('format')!r})")
    rows = bundle["pairs"]
    if any(len(row) != 5 for row in rows[:1]):
        raise BadModel("the bundle's pairs lack fields (claim, sentence, label, source, origin): prepare it again")
    if config.origins is not None:
        unknown = set(config.origins) - {row[4] for row in rows}
        if unknown:
            raise InputError(f"no training pairs from {sorted(unknown)}")
        rows = [row for row in rows if row[4] in config.origins]
    pairs = [Pair(str(row[3]), "", str(row[0]), str(row[1]), int(row[2])) for row in rows]
    if config.max_pairs is not None:
        pairs = balanced_sample(pairs, config.max_pairs, config.seed)
    say(f"fitting on {len(pairs)} pairs: {dict(Counter(STANCE_LABELS[p.label] for p in pairs))}")
    dev_sets = bundle.get("dev_sets") if config.domains else None
    dev_sets = dev_sets or {"scifact": bundle["dev"]}
    per_domain: list[dict[str, float]] = []

    def dev_score(model: CrossStanceModel) -> float:
        scores = {}
        for name, rows in dev_sets.items():
            probs = model.predict_pairs([c for c, _, _ in rows], [s for _, s, _ in rows])
            scores[name] = stance_scores([int(y) for _, _, y in rows], [int(x) for x in probs.argmax(axis=1)])[
                "macro_f1"
            ]
        per_domain.append({k: round(v, 4) for k, v in scores.items()})
        if len(scores) > 1:
            say("dev macro-F1 per domain: " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
        return float(np.mean(list(scores.values())))

    trainer = train_soup if config.soup else train_model
    model, log = trainer(pairs, config, say, evaluate=dev_score, device=device, backbone=backbone)
    seeds = ",".join(map(str, config.soup)) if config.soup else str(config.seed)
    model.info = {"trained": dt.date.today().isoformat(), "seed": seeds, "data": config.pairs or "recipe"}
    out.mkdir(parents=True, exist_ok=True)
    net_config = config.network(backbone_name or backbone or "minilm")  # the backbone its deltas are from
    weights = model.save(out / MODEL_FILE.name, config={**asdict(config), **net_config}, backbone=backbone)
    log["dev_per_domain"] = per_domain
    (out / FIT_LOG).write_text(json.dumps({**log, "claims": bundle.get("claims", {})}, indent=1) + "\n")
    say(f"wrote {weights} ({weights.stat().st_size:,} bytes)")
    return weights


def run(out: Path, config: CrossConfig, *, say: Say = quiet, command: str = "") -> dict[str, Any]:
    """All three stages (the recipe of the module docstring) on this machine."""
    from factscout.training.stance.cross_report import report

    t0 = time.perf_counter()
    parts = scifact_parts(config, say)  # split and embedded once for the prepare and report stages
    weights = fit(prepare(config, say, parts=parts), config, out, say)
    return report(weights, config, out, say=say, command=command, started=t0, parts=parts)
