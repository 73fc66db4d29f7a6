"""Stage 0 of the stance cross-encoder: NLI pre-training on the general NLI pairs of
``../shared/data`` (``factscout train stance-cross --stage nli --out DIR``).

The claim-evidence stages (:mod:`factscout.training.stance.cross`) then start from its weights
(``--init DIR/stance_nli.pt``). It is sized for two CPU cores and for sessions that end:

- every pair is tokenised once (fast tokenizer, no padding), cut at ``max_length`` tokens
  (longest first); batches are made of pairs of similar length
  (:func:`~factscout.training.loop.length_batches`) and padded only to their longest pair, so
  little of each step is spent on padding;
- a checkpoint (``nli_checkpoint.pt``: trained weights, optimizer, schedule, torch RNG, step
  and log) is written atomically every ``checkpoint_every`` steps and at each epoch's end; a
  run started again with the same settings and pairs continues from it, and ends with the same
  weights as a run never interrupted (the batch order of an epoch depends on the seed and the
  epoch only; a test checks it on a tiny backbone);
- throughput (pairs/s) is printed every 100 steps and the time of each epoch at its end, with
  the NLI check set's accuracy (:func:`factscout.training.stance.nli_data.nli_check_set`: 2,000
  MultiNLI dev-matched pairs stratified by label and difficulty, the 2,000 of counterfactual SNLI's
  test split; never trained on) per part.

Outputs in ``out``: ``stance_nli.pt`` (the trained weights in full precision, what ``--init``
reads), ``stance_nli.npz`` (the same as a stance cross-encoder file, usable with ``--stance
cross:DIR/stance_nli.npz`` for the zero-shot rows), ``stance_nli_log.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError
from factscout.training.loop import adamw_with_warmup, length_batches, optimizer_step
from factscout.training.stance.cross_config import CrossConfig, Say, quiet
from factscout.training.stance.data import Pair
from factscout.verify.stance import STANCE_LABELS

CHECKPOINT = "nli_checkpoint.pt"
WEIGHTS = "stance_nli.pt"
MODEL = "stance_nli.npz"
LOG = "stance_nli_log.json"


def _signature(pairs: Sequence[Pair], config: CrossConfig, backbone: str) -> str:
    """What a checkpoint must match to be resumed: the settings that shape the run and the pairs."""
    h = hashlib.sha256()
    shaping = {k: v for k, v in asdict(config).items() if k in _SHAPING}
    h.update(json.dumps([shaping, backbone], sort_keys=True).encode())
    for p in pairs:
        h.update(f"{p.claim}\t{p.sentence}\t{p.label}\n".encode())
    return h.hexdigest()


_SHAPING = ("seed", "epochs", "lr", "batch_size", "max_length", "finetune", "rank", "alpha", "dropout", "warmup",
            "weight_decay", "max_steps")  # fmt: skip


def _save_atomic(torch: Any, obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def check_accuracy(model: Any, check: Sequence[Pair]) -> dict[str, float]:
    """Accuracy and macro-F1 of ``model`` on the check pairs, overall and per part (the source tag)."""
    from factscout.training.stance.evaluation import stance_scores

    probs = model.predict_pairs([p.claim for p in check], [p.sentence for p in check])
    pred = probs.argmax(axis=1)
    gold = np.array([p.label for p in check])
    out: dict[str, float] = {}
    for part in [*sorted({p.source for p in check}), "all"]:
        mask = np.array([part == "all" or p.source == part for p in check])
        name = part.split(":")[-1]
        scores = stance_scores(gold[mask].tolist(), pred[mask].tolist())
        out[f"{name}_accuracy"] = round(scores["accuracy"], 4)
        out[f"{name}_macro_f1"] = round(scores["macro_f1"], 4)
    return out


def train_nli(
    pairs: Sequence[Pair],
    check: Sequence[Pair],
    config: CrossConfig,
    out: Path,
    say: Say = quiet,
    *,
    device: str = "cpu",
    backbone: str | None = None,
    checkpoint_every: int = 200,
    stop_after_steps: int | None = None,
) -> dict[str, Any]:
    """Fine-tune the backbone on the NLI ``pairs`` (see the module doc), resuming from ``out``'s
    checkpoint when it matches; returns the log. ``stop_after_steps``: leave after that many steps
    of this call, the checkpoint written (what a session's end does; tests use it)."""
    import torch
    from transformers import AutoTokenizer

    from factscout.nn.adapters import trainable_state
    from factscout.nn.backbone import backbone_path, build_network
    from factscout.verify.cross_stance import CrossStanceModel

    if not pairs:
        raise InputError("no NLI training pairs")
    if checkpoint_every < 1:
        raise InputError(f"checkpoint_every must be >= 1, got {checkpoint_every}")
    name = backbone or "minilm"
    out.mkdir(parents=True, exist_ok=True)
    signature = _signature(pairs, config, name)
    torch.manual_seed(config.seed)
    net_config = config.network(name)
    network = build_network(net_config).to(device)
    tokenizer = AutoTokenizer.from_pretrained(backbone_path(net_config["backbone"]), local_files_only=True)
    started = time.perf_counter()
    enc = tokenizer(
        [p.claim for p in pairs], [p.sentence or " " for p in pairs], truncation="longest_first",
        max_length=config.max_length,
    )  # fmt: skip
    ids, types = enc["input_ids"], enc["token_type_ids"]
    say(f"tokenised {len(pairs):,} pairs in {time.perf_counter() - started:.0f} s")
    params = [p for p in network.parameters() if p.requires_grad]
    per_epoch = math.ceil(len(pairs) / config.batch_size)
    steps = per_epoch * config.epochs if config.max_steps is None else min(per_epoch * config.epochs, config.max_steps)
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.learning_rate, weight_decay=config.weight_decay, steps=steps, warmup=config.warmup
    )
    counts = Counter(f"{p.source}/{STANCE_LABELS[p.label]}" for p in pairs)
    log: dict[str, Any] = {"pairs": len(pairs), "steps": steps, "steps_per_epoch": per_epoch, "epochs": [],
                           "training_pairs": dict(sorted(counts.items())), "check_pairs": len(check),
                           "config": {**asdict(config), **net_config}, "device": device}  # fmt: skip
    step, seconds = 0, 0.0
    ckpt = out / CHECKPOINT
    if ckpt.exists():
        state = torch.load(ckpt, map_location=device, weights_only=False)
        if state.get("signature") != signature:
            raise InputError(f"{ckpt} is from another run (other settings or pairs); move it away to start afresh")
        network.load_state_dict(state["network"], strict=False)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        step, seconds, log = int(state["step"]), float(state["seconds"]), state["log"]
        say(f"resumed from {ckpt} at step {step}/{steps}")

    def checkpoint() -> None:
        trained = {k: v for k, v in network.state_dict().items() if k in _trained_names(network)}
        _save_atomic(torch, {"signature": signature, "network": trained, "optimizer": optimizer.state_dict(),
                             "scheduler": scheduler.state_dict(), "rng": torch.get_rng_state(), "step": step,
                             "seconds": seconds + time.perf_counter() - clock, "log": log}, ckpt)  # fmt: skip

    model = CrossStanceModel(network, tokenizer, max_length=config.max_length, device=device, batch_size=64)
    model.info = {"trained": time.strftime("%Y-%m-%d"), "seed": str(config.seed), "data": "general NLI pairs"}

    def write_model() -> None:
        """The weights of the last finished epoch: full precision (``--init``) and as a model file."""
        torch.save({k: torch.from_numpy(v) for k, v in trainable_state(network).items()}, out / WEIGHTS)
        model.save(out / MODEL, config={**asdict(config), **net_config}, backbone=backbone)

    lengths = [len(x) for x in ids]
    clock = time.perf_counter()
    this_call = 0
    window: list[float] = []
    window_pairs, window_start = 0, time.perf_counter()
    while step < steps:
        epoch, offset = divmod(step, per_epoch)
        batches = length_batches(lengths, config.batch_size, config.seed * 1000 + epoch)
        network.train()
        for b in range(offset, per_epoch):
            if step >= steps:
                break
            idx = batches[b]
            batch = tokenizer.pad(
                {"input_ids": [ids[i] for i in idx], "token_type_ids": [types[i] for i in idx]}, return_tensors="pt"
            )
            logits = network(**{k: v.to(device) for k, v in batch.items()})
            target = torch.tensor([pairs[i].label for i in idx], dtype=torch.long, device=device)
            loss = torch.nn.functional.cross_entropy(logits, target)
            optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
            step += 1
            this_call += 1
            window.append(float(loss.detach()))
            window_pairs += len(idx)
            if step % 100 == 0:
                rate = window_pairs / (time.perf_counter() - window_start)
                say(f"step {step}/{steps} loss {np.mean(window[-100:]):.4f} {rate:.1f} pairs/s")
                window_pairs, window_start = 0, time.perf_counter()
            if step % checkpoint_every == 0 or step == steps or b == per_epoch - 1:
                if b == per_epoch - 1 or step == steps:
                    network.eval()
                    model.clear_cache()
                    scores = check_accuracy(model, check) if check else {}
                    elapsed = seconds + time.perf_counter() - clock
                    done = {"epoch": epoch + 1, "step": step, "seconds": round(elapsed, 1),
                            "pairs_per_second": round(step * config.batch_size / max(elapsed, 1e-9), 1),
                            **scores}  # fmt: skip
                    log["epochs"].append(done)
                    say(f"epoch {epoch + 1}: {json.dumps(done)}")
                    write_model()
                    network.train()
                checkpoint()
            if stop_after_steps is not None and this_call >= stop_after_steps and step < steps:
                say(f"stopped at step {step}/{steps}; run the same command again to continue")
                return log | {"stopped_at": step}
    if not (out / WEIGHTS).exists():  # the last step wrote them, unless a finished run's checkpoint was resumed
        network.eval()
        write_model()
    log["train_seconds"] = round(seconds + time.perf_counter() - clock, 1)
    (out / LOG).write_text(json.dumps(log, indent=1) + "\n")
    say(f"wrote {out / WEIGHTS} and {out / MODEL} ({log['train_seconds']:.0f} s of training)")
    return log


def _trained_names(network: Any) -> set[str]:
    return {name for name, p in network.named_parameters() if p.requires_grad}


def load_init(network: Any, path: Path) -> None:
    """Copy stage 0's full-precision weights (``stance_nli.pt``) into ``network``."""
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    own = network.state_dict()
    unknown = [k for k in state if k not in own]
    if unknown:
        raise BadModel(f"{path}: weights {unknown[:3]} are not in this network (another backbone or --finetune?)")
    network.load_state_dict(state, strict=False)


def run(out: Path, config: CrossConfig, *, say: Say = quiet, sources: Sequence[str] | None = None,
        device: str = "cpu", backbone: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Stage 0 on the general NLI pairs of ``sources`` (default: every one found), the check set apart."""
    from factscout.training.stance import nli_data

    check = nli_data.nli_check_set()
    pairs = nli_data.nli_training_pairs(tuple(sources)) if sources else nli_data.nli_training_pairs()
    say(f"{len(pairs):,} NLI training pairs ({dict(Counter(p.source for p in pairs))}); check set {len(check):,}")
    return train_nli(pairs, check, config, out, say, device=device, backbone=backbone)
