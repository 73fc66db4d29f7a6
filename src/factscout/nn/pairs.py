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


ONNX_PAIRS_PER_CALL = 1  # on the int8 ONNX network (run_pairs' docstring)


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

    Batches are formed in order of length (less padding) and are deterministic. On the int8 ONNX
    network each pair runs alone: its activations are quantised with one scale per call, so in a
    batch a pair's output would depend on the pairs beside it (stance probabilities moved by up to
    0.25 and 1.5% of labels flipped on SciFact pairs); one pair per call is as fast on 2 cores
    (254 against 247 pairs/s: no padding) and gives each pair one answer.
    """
    if len(firsts) != len(seconds):
        raise InputError(f"{len(firsts)} first texts but {len(seconds)} second texts")
    order = sorted(range(len(seconds)), key=lambda i: (-len(seconds[i]) - len(firsts[i]), i))
    onnx = isinstance(network, OnnxNetwork)
    torch = None if onnx else require_torch("the cross-encoder re-ranker")
    step = ONNX_PAIRS_PER_CALL if onnx else batch_size  # int8: one pair per call (docstring)
    out: np.ndarray | None = None
    with contextlib.nullcontext() if torch is None else torch.inference_mode():
        for start in range(0, len(order), step):
            idx = order[start : start + step]
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


class PairTokenizer:
    """A BERT-style backbone's fast tokenizer read straight from its ``tokenizer.json`` with the
    ``tokenizers`` library, called like transformers' (``tok(firsts, seconds, truncation=
    "longest_first", max_length=..., padding=True, return_tensors="np")``) for the int8 ONNX path.

    transformers' fast tokenizers run this same Rust tokenizer, so the ids are the same (a test
    compares them on real pairs); what is saved is importing transformers and torch, most of a
    cold ``check``'s start-up. Only for backbones whose file pads with ``[PAD]`` (id 0, type 0),
    as transformers' BERT tokenizers do: :meth:`for_backbone` returns ``None`` for any other.
    """

    is_fast = True

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._max_length: int | None = None

    @classmethod
    def for_backbone(cls, folder: str) -> PairTokenizer | None:
        """The tokenizer of the backbone in ``folder``, or ``None`` when it is not a BERT-style one."""
        import json
        from pathlib import Path

        file = Path(folder) / "tokenizer.json"
        if not file.is_file():
            return None
        try:
            from tokenizers import Tokenizer

            spec = json.loads(file.read_text(encoding="utf-8"))
            tokenizer = Tokenizer.from_str(json.dumps({**spec, "truncation": None, "padding": None}))
        except (ImportError, ValueError, OSError):
            return None
        if (
            tokenizer.token_to_id("[PAD]") != 0
            or (spec.get("post_processor") or {}).get("type") != "TemplateProcessing"
        ):
            return None
        return cls(tokenizer)

    def __call__(
        self,
        firsts: Sequence[str],
        seconds: Sequence[str],
        *,
        truncation: str = "longest_first",
        max_length: int,
        padding: bool = True,
        return_tensors: str = "np",
    ) -> dict[str, np.ndarray]:
        if truncation != "longest_first" or not padding or return_tensors != "np":
            raise InputError("PairTokenizer pads, truncates longest first and returns numpy arrays only")
        if self._max_length != max_length:
            self._tokenizer.enable_truncation(max_length, strategy="longest_first")
            self._tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
            self._max_length = max_length
        batch = self._tokenizer.encode_batch(list(zip(firsts, seconds, strict=True)))
        return {
            "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
        }
