"""Adapter files: the parameters that differ from a frozen backbone (LoRA adapters and heads),
stored as fp16 arrays plus a JSON config in one ``.npz`` without pickles.

The re-ranker, the stance cross-encoder and the dense encoder adapter each write their own
``format`` name into the config; :func:`read_lora_file` checks it and the format version.

Fully fine-tuned backbone weights are stored as their difference from the backbone they started
from (their names listed in the config's ``delta_params``); the loader adds them back onto the
backbone (:func:`factscout.nn.backbone.assign_state`). Two precisions:

- ``delta_bits=8``: int8 with one fp32 scale per row (``delta/NAME`` and ``scale/NAME``).
  Fine-tuning moves each weight by about 1/60 of its size, so the int8 step (the row's largest
  change / 127) is smaller than the rounding of the weight itself to fp16, at half the bytes.
- ``delta_bits=4``: matrices whose rows split into groups of ``DELTA_GROUP`` values as int4, two
  to a byte (``delta4/NAME``), with one fp16 scale per group (the group's largest change / 7;
  ``scale/NAME`` of shape (rows, groups)); vectors and other shapes stay int8. About 0.53 bytes
  per weight instead of 1.0. Why groups: one scale per 384-wide row lets a few large changes set
  the step for the whole row; per 64 values the step follows them locally (measured on the stance
  cross-encoder: 99.8 % of dev predictions unchanged against int8, largest probability change
  0.008; with one scale per row 99.6 % and 0.017).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, ModelNotFound
from factscout.formats.npz import save_npz

FORMAT_VERSION = 1
DELTA_GROUP = 64  # values per fp16 scale of int4 deltas
DELTA_BITS = (8, 4)


def trainable_state(network: Any) -> dict[str, np.ndarray]:
    """The parameters that differ from the backbone (LoRA adapters and head), as fp32 arrays."""
    return {
        name: p.detach().cpu().numpy().astype(np.float32)
        for name, p in network.named_parameters()
        if p.requires_grad or name.startswith("head_") or ".lora_" in name
    }


def read_lora_file(file: Path, fmt: str, what: str, *, hint: str = "") -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(config, adapter/head arrays) of a ``.npz`` written by :func:`write_lora_file` in format ``fmt``;
    errors name the file and ``what`` it should be (``hint`` follows the missing-file message)."""
    if not file.is_file():
        raise ModelNotFound(f"no {what} at {file}{hint}")
    try:
        with np.load(file, allow_pickle=False) as data:
            config = json.loads(str(data["config"]))
            arrays = {k[len("param/") :]: np.asarray(data[k], dtype=np.float32) for k in data if k.startswith("param/")}
            for key in data:
                if key.startswith("delta/"):
                    name = key[len("delta/") :]
                    arrays[name] = np.asarray(data[key], dtype=np.float32) * np.asarray(data[f"scale/{name}"])
                elif key.startswith("delta4/"):
                    name = key[len("delta4/") :]
                    arrays[name] = _unpack_int4(data[key], np.asarray(data[f"scale/{name}"], dtype=np.float32))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise BadModel(f"{file} is not a factscout {what}: {exc}") from None
    return _checked_config(config, file, fmt, what), arrays


def read_lora_config(file: Path, fmt: str, what: str, *, hint: str = "") -> dict[str, Any]:
    """The config of a ``.npz`` written by :func:`write_lora_file`, checked as :func:`read_lora_file`
    checks it, without reading (and dequantising) its arrays."""
    if not file.is_file():
        raise ModelNotFound(f"no {what} at {file}{hint}")
    try:
        with np.load(file, allow_pickle=False) as data:
            config = json.loads(str(data["config"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise BadModel(f"{file} is not a factscout {what}: {exc}") from None
    return _checked_config(config, file, fmt, what)


def _checked_config(config: Any, file: Path, fmt: str, what: str) -> dict[str, Any]:
    if not isinstance(config, dict) or config.get("format") != fmt:
        found = config.get("format") if isinstance(config, dict) else "?"
        raise BadModel(f"{file} is not a factscout {what} (format {found!r}, expected {fmt!r})")
    if config.get("format_version") != FORMAT_VERSION:
        raise BadModel(
            f"{file} has format version {config.get('format_version')}, this factscout reads {FORMAT_VERSION}"
        )
    return config


def write_lora_arrays(
    file: Path,
    arrays: Mapping[str, np.ndarray],
    config: Mapping[str, Any],
    *,
    base: Mapping[str, np.ndarray] | None = None,
    delta_bits: int = 8,
) -> Path:
    """Write ``config`` and adapter/head ``arrays`` (fp16, no pickles) to a ``.npz`` file; the
    arrays named in ``base`` as int8 or int4 (``delta_bits``) differences from it (see the module
    docstring)."""
    if delta_bits not in DELTA_BITS:
        raise ValueError(f"delta_bits must be one of {DELTA_BITS}, not {delta_bits}")
    file.parent.mkdir(parents=True, exist_ok=True)
    deltas = sorted(set(arrays) & set(base or {}))
    out: dict[str, np.ndarray] = {
        "config": np.array(json.dumps({**dict(config), "delta_params": deltas}, sort_keys=True))
    }
    for name, value in sorted(arrays.items()):
        if name in deltas:
            assert base is not None
            delta = np.asarray(value, dtype=np.float32) - np.asarray(base[name], dtype=np.float32)
            if delta_bits == 4 and delta.ndim == 2 and delta.shape[1] % DELTA_GROUP == 0:
                out[f"delta4/{name}"], out[f"scale/{name}"] = _pack_int4(delta)
                continue
            peak = np.abs(delta).max(axis=-1, keepdims=True) if delta.ndim > 1 else np.abs(delta).max(keepdims=True)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            out[f"delta/{name}"] = np.round(delta / scale).astype(np.int8)
            out[f"scale/{name}"] = scale
        else:
            out[f"param/{name}"] = np.asarray(value, dtype=np.float16)
    save_npz(file, out)
    return file


def write_lora_file(
    file: Path,
    network: Any,
    config: Mapping[str, Any],
    *,
    base: Mapping[str, np.ndarray] | None = None,
    delta_bits: int = 8,
) -> Path:
    """Write ``config`` and the network's trainable arrays to a ``.npz`` file (:func:`write_lora_arrays`)."""
    return write_lora_arrays(file, trainable_state(network), config, base=base, delta_bits=delta_bits)


def _pack_int4(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A (rows, cols) matrix as int4 values two to a byte (low nibble first) and one fp16 scale per
    ``DELTA_GROUP`` values of a row (shape (rows, cols / DELTA_GROUP))."""
    rows, cols = delta.shape
    groups = delta.reshape(rows, cols // DELTA_GROUP, DELTA_GROUP)
    peak = np.abs(groups).max(axis=-1, keepdims=True)
    scale = np.maximum(peak / 7.0, 2.0**-24).astype(np.float16)  # never below fp16's smallest step (never 0)
    q = np.clip(np.round(groups / scale.astype(np.float32)), -8, 7).astype(np.int8).reshape(-1)
    nibbles = (q & 0x0F).astype(np.uint8)
    return nibbles[0::2] | (nibbles[1::2] << 4), scale[..., 0]


def _unpack_int4(packed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The fp32 matrix that :func:`_pack_int4` packed."""
    rows, n_groups = scale.shape
    nibbles = np.empty(packed.size * 2, dtype=np.int8)
    nibbles[0::2], nibbles[1::2] = packed & 0x0F, packed >> 4
    values = np.where(nibbles > 7, nibbles - 16, nibbles).astype(np.float32)
    return (values.reshape(rows, n_groups, DELTA_GROUP) * scale[..., None]).reshape(rows, n_groups * DELTA_GROUP)
