"""LoRA layers (Hu et al. 2022, "LoRA: Low-Rank Adaptation of Large Language Models", ICLR).

A frozen linear layer ``W`` gains a trainable low-rank update ``(alpha / r) B A``; ``B`` starts
at zero, so a freshly adapted backbone computes exactly what the backbone did. The re-ranker,
the stance cross-encoder and the dense encoder adapter all put these on the attention
projections of every layer (:data:`LORA_TARGETS`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from factscout.nn.backend import require_torch

LORA_TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")


@functools.cache
def _lora_class() -> Any:
    torch = require_torch("the cross-encoder re-ranker")
    nn = torch.nn

    class LoRALinear(nn.Module):  # type: ignore[misc,name-defined]
        """``W x + (alpha / r) B A x`` with ``W`` frozen (Hu et al. 2022, eq. 3)."""

        def __init__(self, base: Any, rank: int, alpha: float, dropout: float) -> None:
            super().__init__()
            self.base = base
            self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
            self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
            nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
            self.scaling = alpha / rank
            self.dropout = nn.Dropout(dropout)

        def forward(self, x: Any) -> Any:
            return self.base(x) + (self.dropout(x) @ self.lora_a.T @ self.lora_b.T) * self.scaling

    return LoRALinear


def lora_linear(base: Any, rank: int, alpha: float, dropout: float) -> Any:
    """``base`` (a ``torch.nn.Linear``) wrapped with a LoRA update of rank ``rank``."""
    return _lora_class()(base, rank, alpha, dropout)


def add_lora(encoder: Any, targets: Sequence[str], rank: int, alpha: float, dropout: float) -> None:
    """Replace the ``targets`` sub-modules of every layer of a BERT-style ``encoder`` by LoRA layers."""
    for layer in encoder.encoder.layer:
        for target in targets:
            parent_name, _, leaf = target.rpartition(".")
            parent = layer.get_submodule(parent_name)
            setattr(parent, leaf, lora_linear(getattr(parent, leaf), rank, alpha, dropout))
