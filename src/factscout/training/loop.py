"""The optimisation pieces the torch trainers share: the settings every LoRA fine-tune of the
MiniLM backbone starts from, AdamW with a linear warm-up and decay, and one optimizer step (zero
the gradients, back-propagate, clip, step, advance the schedule)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from factscout.nn import require_torch
from factscout.nn.backbone import DEFAULT_BACKBONE
from factscout.nn.lora import LORA_TARGETS
from factscout.training.splits import SEED


@dataclass(frozen=True)
class LoraTrainConfig:
    """The first settings of every LoRA trainer's config (a subclass adds its own after them, so
    a saved config keeps this order): seed, backbone and the adapters' shape."""

    seed: int = SEED
    backbone: str = DEFAULT_BACKBONE
    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    targets: tuple[str, ...] = LORA_TARGETS


def adamw_with_warmup(params: Any, *, lr: float, weight_decay: float, steps: int, warmup: float) -> tuple[Any, Any]:
    """(AdamW, scheduler): linear warm-up over the first ``warmup`` share of ``steps``, then linear
    decay to 0 (the usual BERT fine-tuning schedule); call ``scheduler.step()`` after each step."""
    torch = require_torch("the cross-encoder re-ranker")
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    warm = max(1, round(warmup * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    return optimizer, scheduler


def optimizer_step(
    loss: Any, optimizer: Any, *, scheduler: Any = None, clip: Iterable[Any] | None = None, max_norm: float = 1.0
) -> None:
    """One step: zero the gradients, back-propagate ``loss``, clip the gradient norm of ``clip``
    (when given) to ``max_norm``, step the optimizer, then the ``scheduler`` (when given)."""
    torch = require_torch("training")
    optimizer.zero_grad()
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(clip, max_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
