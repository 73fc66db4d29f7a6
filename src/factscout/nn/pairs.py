"""Batching of text pairs through a cross-encoder: ``(first, second)`` texts are read together,
batched in order of length (less padding) and returned in input order."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.backend import require_torch
from factscout.nn.quantize import OnnxNetwork


def check_batching(max_length: int, batch_size: int) -> None:
    """Validate the token limit and batch size of a pair scorer."""
    if not isinstance(max_length, int) or max_length < 8:
        raise InputError(f"max_length must be an int >= 8, got {max_length!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive int, got {batch_size!r}")


def encode_pairs(
    tokenizer: Any, firsts: Sequence[str], seconds: Sequence[str], *, max_length: int, tensors: str = "pt"
) -> Any:
    """Tokenise text pairs for a cross-encoder, always with ``token_type_ids`` marking the second
    text (1) against the first and the specials (0). BERT-style tokenizers return them already;
    RoBERTa/MPNet-style ones (``<s> a </s></s> b </s>``) do not, so they are built from the fast
    tokenizer's sequence ids: the network pools the two segments apart (``u``, ``v``)."""
    enc = tokenizer(
        list(firsts),
        [s or " " for s in seconds],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors=tensors,
    )
    if "token_type_ids" not in enc:
        if not getattr(tokenizer, "is_fast", False):
            raise InputError(f"{type(tokenizer).__name__} gives no segment ids; a fast tokenizer is needed")
        types = np.array(
            [[1 if sid == 1 else 0 for sid in enc.sequence_ids(i)] for i in range(len(enc["input_ids"]))],
            dtype=np.int64,
        )
        enc["token_type_ids"] = types if tensors == "np" else require_torch("pair encoding").from_numpy(types)
    return enc


def run_pairs(
    network: Any,
    tokenizer: Any,
    firsts: Sequence[str],
    seconds: Sequence[str],
    *,
    max_length: int,
    batch_size: int,
    device: str = "cpu",
) -> np.ndarray:
    """The network's outputs (scores ``(n,)`` or logits ``(n, k)``) for paired texts, in input order;
    ``network`` is a torch module or its int8 :class:`~factscout.nn.quantize.OnnxNetwork`.

    Batches are formed in order of length (less padding) and are deterministic.
    """
    if len(firsts) != len(seconds):
        raise InputError(f"{len(firsts)} first texts but {len(seconds)} second texts")
    order = sorted(range(len(seconds)), key=lambda i: (-len(seconds[i]) - len(firsts[i]), i))
    onnx = isinstance(network, OnnxNetwork)
    torch = None if onnx else require_torch("the cross-encoder re-ranker")
    out: np.ndarray | None = None
    with contextlib.nullcontext() if torch is None else torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = encode_pairs(
                tokenizer,
                [firsts[i] for i in idx],
                [seconds[i] for i in idx],
                max_length=max_length,
                tensors="np" if onnx else "pt",
            )
            if torch is None:
                values = network(enc).astype(np.float32)
            else:
                values = network(**{k: v.to(device) for k, v in enc.items()}).float().cpu().numpy()
            if out is None:
                out = np.zeros((len(order), *values.shape[1:]), dtype=np.float32)
            out[idx] = values
    return out if out is not None else np.zeros(0, dtype=np.float32)
