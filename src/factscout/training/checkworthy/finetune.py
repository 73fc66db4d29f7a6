"""Fine-tune MiniLM for check-worthiness (:class:`~factscout.claims.checkworthy_minilm.MinilmCheckworthy`).

One network (:func:`factscout.nn.backbone.build_network`, ``num_labels=3``) learns from every
source at once, each sentence with the labels its data allows: a three-way label (ClaimBuster,
CheckThat! 2022 1B / 2021 1A tweets) is one class; a binary one is a set of classes (check-worthy;
or not check-worthy = non-factual or unimportant factual). The loss is the negative log of the
probability of the allowed set (the marginal likelihood of partial labels; Jin & Ghahramani 2002,
"Learning with Multiple Labels", NeurIPS), so binary data trains the check-worthy probability
without pretending to know which of the other two a sentence is.

With ``max_train``, each epoch samples that many sentences without replacement, each part in
proportion to its weight (the loss then weighs every sentence alike); otherwise the weights scale
the loss. AdamW with linear warm-up and decay, batches of similar length (:func:`~factscout.training.loop.
length_batches`), a checkpoint every ``checkpoint_every`` steps (a killed run resumes from it), and
after each epoch the dev sets' mean check-worthy F1 at their best common threshold; the best
epoch is kept. Then one temperature is fitted on dev by likelihood.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.claims.checkworthy_minilm import MinilmCheckworthy
from factscout.datasets.checkworthy import CHECK_WORTHY, CHECKWORTHY_LABELS, CheckworthySentence
from factscout.nn.backend import require_torch
from factscout.training.checkworthy.evaluation import best_threshold
from factscout.training.checkworthy.linear import sample_weights
from factscout.training.loop import adamw_with_warmup, length_batches, optimizer_step

Say = Callable[[str], None]


@dataclass(frozen=True)
class FinetuneConfig:
    """The fine-tune's settings (the trainer's config copies them)."""

    seed: int = 13
    backbone: str = "minilm"
    finetune: str = "full"
    rank: int = 16
    alpha: float = 32.0
    dropout: float = 0.1
    targets: tuple[str, ...] = (
        "attention.self.query",
        "attention.self.key",
        "attention.self.value",
        "attention.output.dense",
        "intermediate.dense",
        "output.dense",
    )
    lr: float = 5e-5
    weight_decay: float = 0.01
    warmup: float = 0.06
    epochs: int = 2
    batch_size: int = 32
    max_length: int = 64
    max_train: int = 0  # sentences per epoch, sampled (0: all)
    checkpoint_every: int = 100


def allowed_classes(sentence: CheckworthySentence) -> np.ndarray:
    """Which of :data:`CHECKWORTHY_LABELS` the sentence's labels allow (a 0/1 row of three)."""
    if sentence.label is not None:
        return np.array([float(sentence.label == c) for c in CHECKWORTHY_LABELS], dtype=np.float32)
    return np.array([0, 0, 1] if sentence.checkworthy else [1, 1, 0], dtype=np.float32)


def partial_label_loss(torch: Any, logits: Any, allowed: Any, weights: Any) -> Any:
    """Weighted mean of ``-log P(allowed set)`` = ``logsumexp(all) - logsumexp(allowed)``."""
    masked = logits.masked_fill(allowed <= 0, float("-inf"))
    per = torch.logsumexp(logits, dim=-1) - torch.logsumexp(masked, dim=-1)
    return (per * weights).sum() / weights.sum().clamp(min=1e-6)


def fit_temperature(logits: np.ndarray, allowed: np.ndarray) -> float:
    """The temperature (grid 0.5-4) maximising the likelihood of the allowed sets (Guo et al. 2017)."""
    best_t, best_nll = 1.0, math.inf
    for t in np.arange(0.5, 4.01, 0.05):
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        log_all = np.log(np.exp(z).sum(axis=1))
        log_allowed = np.log(np.maximum((np.exp(z) * allowed).sum(axis=1), 1e-30))
        nll = float((log_all - log_allowed).mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return best_t


def _network_config(config: FinetuneConfig) -> dict[str, Any]:
    return {
        "backbone": config.backbone,
        "finetune": config.finetune,
        "rank": config.rank,
        "alpha": config.alpha,
        "dropout": config.dropout,
        "targets": list(config.targets),
        "num_labels": len(CHECKWORTHY_LABELS),
    }


def finetune(
    train: Sequence[CheckworthySentence],
    dev: Mapping[str, Sequence[CheckworthySentence]],
    config: FinetuneConfig,
    *,
    work: Path,
    part_weights: Mapping[str, float] | None = None,
    say: Say = lambda _: None,
) -> tuple[MinilmCheckworthy, dict[str, Any]]:
    """The fine-tuned model (best epoch by dev mean F1; threshold and temperature from dev) and a
    log of the run (per-epoch dev F1, seconds, sentences per second)."""
    torch = require_torch("the check-worthiness fine-tune")
    from transformers import AutoTokenizer

    from factscout.nn.backbone import backbone_path, build_network
    from factscout.nn.pairs import encode_pairs

    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    network = build_network(_network_config(config))
    tokenizer = AutoTokenizer.from_pretrained(backbone_path(config.backbone), local_files_only=True)
    allowed = np.stack([allowed_classes(s) for s in train]) if train else np.zeros((0, 3), np.float32)
    weights = sample_weights(train, part_weights or {}).astype(np.float64)
    loss_weights = np.ones(len(train), np.float32) if config.max_train else weights.astype(np.float32)
    texts = [s.text or " " for s in train]
    per_epoch = min(len(train), config.max_train) if config.max_train else len(train)
    steps_per_epoch = max(1, math.ceil(per_epoch / config.batch_size))
    total = steps_per_epoch * config.epochs
    params = [p for p in network.parameters() if p.requires_grad]
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.lr, weight_decay=config.weight_decay, steps=total, warmup=config.warmup
    )
    work.mkdir(parents=True, exist_ok=True)
    checkpoint = work / "checkworthy_minilm.ckpt"
    state: dict[str, Any] = {"epoch": 0, "step": 0, "history": [], "best": None, "seconds": 0.0}
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        if saved.get("config") == asdict(config) and saved.get("n_train") == len(train):
            network.load_state_dict(saved["network"], strict=False)
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            state = saved["state"]
            say(f"resumed from {checkpoint} at epoch {state['epoch']} step {state['step']}")

    def save_checkpoint() -> None:
        tmp = checkpoint.with_suffix(".tmp")
        trainable = {k: v for k, v in network.state_dict().items() if k in dict(network.named_parameters())}
        trainable = {k: v for k, v in trainable.items() if dict(network.named_parameters())[k].requires_grad}
        torch.save(
            {
                "config": asdict(config),
                "n_train": len(train),
                "network": trainable,
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "state": state,
            },
            tmp,
        )
        tmp.replace(checkpoint)

    lengths = [len(t) for t in texts]
    model = MinilmCheckworthy(network, tokenizer, max_length=config.max_length, batch_size=64)
    while state["epoch"] < config.epochs:
        epoch = int(state["epoch"])
        if config.max_train:  # sampled in proportion to the part weights (the loss then weighs all alike)
            order = rng.choice(len(train), size=per_epoch, replace=False, p=weights / weights.sum())
        else:
            order = np.arange(len(train))
        batches = length_batches([lengths[i] for i in order], config.batch_size, config.seed + epoch)
        network.train()
        started = time.perf_counter()
        seen = 0
        for b, batch in enumerate(batches):
            if b < state["step"]:
                continue
            idx = [int(order[i]) for i in batch]
            enc = encode_pairs(tokenizer, [texts[i] for i in idx], [""] * len(idx), max_length=config.max_length)
            logits = network(**enc)
            loss = partial_label_loss(
                torch, logits, torch.from_numpy(allowed[idx]), torch.from_numpy(loss_weights[idx])
            )
            optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
            seen += len(idx)
            state["step"] = b + 1
            if state["step"] % config.checkpoint_every == 0:
                elapsed = time.perf_counter() - started
                say(
                    f"epoch {epoch + 1} step {state['step']}/{len(batches)} loss {loss.detach().item():.3f} "
                    f"({seen / max(elapsed, 1e-9):.1f} sentences/s)"
                )
                state["seconds"] = float(state["seconds"]) + elapsed
                started, seen = time.perf_counter(), 0
                save_checkpoint()
        state["seconds"] = float(state["seconds"]) + time.perf_counter() - started
        network.eval()
        dev_logits = {n: model.logits([s.text for s in v]) for n, v in dev.items()}
        probs = {n: _softmax(z)[:, -1] for n, z in dev_logits.items()}
        threshold, mean_f1, per = best_threshold({n: [s.checkworthy for s in v] for n, v in dev.items()}, probs)
        state["history"].append({"epoch": epoch + 1, "dev mean F1": mean_f1, "dev F1": per, "threshold": threshold})
        say(f"epoch {epoch + 1}: dev mean F1 {mean_f1:.3f} at {threshold:.3f} {per}")
        best = state["best"]
        if best is None or mean_f1 > best["dev mean F1"]:
            trainable = {k: v.detach().clone() for k, v in network.named_parameters() if v.requires_grad}
            state["best"] = {"dev mean F1": mean_f1, "epoch": epoch + 1}
            torch.save(trainable, work / "checkworthy_minilm.best.pt")
        state["epoch"], state["step"] = epoch + 1, 0
        save_checkpoint()
    best_state = torch.load(work / "checkworthy_minilm.best.pt", weights_only=False)
    with torch.no_grad():
        named = dict(network.named_parameters())
        for k, v in best_state.items():
            named[k].copy_(v)
    network.eval()
    all_dev = [s for v in dev.values() for s in v]
    dev_logits_all = model.logits([s.text for s in all_dev])
    temperature = fit_temperature(dev_logits_all, np.stack([allowed_classes(s) for s in all_dev]))
    model.temperature = temperature
    probs = {n: model.probabilities([s.text for s in v])[:, -1] for n, v in dev.items()}
    threshold, mean_f1, per = best_threshold({n: [s.checkworthy for s in v] for n, v in dev.items()}, probs)
    model.threshold = threshold
    log = {
        "history": state["history"],
        "best epoch": state["best"]["epoch"] if state["best"] else None,
        "temperature": temperature,
        "threshold": threshold,
        "dev mean F1": mean_f1,
        "train seconds": float(state["seconds"]),
        "train sentences per epoch": per_epoch,
        "sentences per second": per_epoch * config.epochs / max(float(state["seconds"]), 1e-9),
        "network": _network_config(config),
    }
    return model, log


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def checkworthy_share(sentences: Sequence[CheckworthySentence]) -> float:
    return sum(s.label == CHECK_WORTHY or s.checkworthy for s in sentences) / max(1, len(sentences))
