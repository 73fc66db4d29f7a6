"""ListMLE: the Plackett–Luce negative log-likelihood of a target permutation.

Xia, Liu, Wang, Zhang, Li. "Listwise approach to learning to rank: theory and algorithm".
ICML 2008. For predicted scores ``s`` and the target permutation ``π`` (items sorted by target
relevance, best first),

    L(s, π) = - Σ_{i=1..n} [ s_{π(i)} - log Σ_{j=i..n} exp(s_{π(j)}) ],

i.e. ``-log P(π | s)`` under the Plackett–Luce model. Items whose ``mask`` is False (undated or
excluded evidence, padding) take no part: they are neither ranked nor in any denominator.
Ties in the target keep the items' list order (a stable sort), so a target with ties defines
one permutation, the same every time. Lists with fewer than two ranked items contribute 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from factscout.errors import InputError

if TYPE_CHECKING:
    import torch

_FAR = -1e9  # stands in for -inf on masked items: finite, so no NaN gradients


def target_permutation(target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Indices that sort each row best first (masked items last; ties in list order)."""
    import torch

    keyed = torch.where(mask, target.to(torch.float64), torch.full_like(target, float("-inf"), dtype=torch.float64))
    return torch.sort(keyed, dim=-1, descending=True, stable=True).indices


def listmle_loss(
    scores: torch.Tensor, target: torch.Tensor, mask: torch.Tensor | None = None, *, reduction: str = "mean"
) -> torch.Tensor:
    """ListMLE of ``scores`` (batch, n) against ``target`` relevances (batch, n), higher = better.

    ``reduction``: ``"none"`` (one loss per list), ``"sum"``, or ``"mean"`` over the lists with
    at least two ranked items (0 when there is none)."""
    import torch

    if scores.shape != target.shape:
        raise InputError(f"scores {tuple(scores.shape)} and target {tuple(target.shape)} differ in shape")
    if scores.dim() == 1:
        scores, target = scores.unsqueeze(0), target.unsqueeze(0)
        mask = None if mask is None else mask.unsqueeze(0)
    mask = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.to(torch.bool)
    if mask.shape != scores.shape:
        raise InputError(f"mask {tuple(mask.shape)} does not match scores {tuple(scores.shape)}")
    order = target_permutation(target, mask)
    s = torch.gather(scores, -1, order)
    m = torch.gather(mask, -1, order)
    s = torch.where(m, s, torch.full_like(s, _FAR))
    tail_lse = torch.logcumsumexp(s.flip(-1), dim=-1).flip(-1)
    per_item = torch.where(m, tail_lse - s, torch.zeros_like(s))
    losses = per_item.sum(dim=-1)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    if reduction != "mean":
        raise InputError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    counted = m.sum(dim=-1) >= 2
    if not bool(counted.any()):
        return scores.sum() * 0.0
    return losses[counted].mean()
