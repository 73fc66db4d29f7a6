"""Adapter files: the parameters that differ from a frozen backbone (LoRA adapters and heads),
stored as fp16 arrays plus a JSON config in one ``.npz`` without pickles.

The re-ranker, the stance cross-encoder and the dense encoder adapter each write their own
``format`` name into the config; :func:`read_lora_file` checks it and the format version.

Fully fine-tuned backbone weights are stored as their difference from the backbone they started
from, quantised to int8 with one fp32 scale per row (``delta/NAME`` and ``scale/NAME``; their
names listed in the config's ``delta_params``): fine-tuning moves each weight by about 1/60 of its
size, so the int8 step (the row's largest change / 127) is smaller than the rounding of the weight
itself to fp16, at half the bytes. The loader adds them back onto the backbone
(:func:`factscout.nn.backbone.assign_state`).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, ModelNotFound

FORMAT_VERSION = 1


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
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise BadModel(f"{file} is not a factscout {what}: {exc}") from None
    if not isinstance(config, dict) or config.get("format") != fmt:
        found = config.get("format") if isinstance(config, dict) else "?"
        raise BadModel(f"{file} is not a factscout {what} (format {found!r}, expected {fmt!r})")
    if config.get("format_version") != FORMAT_VERSION:
        raise BadModel(
            f"{file} has format version {config.get('format_version')}, this factscout reads {FORMAT_VERSION}"
        )
    return config, arrays


def write_lora_arrays(
    file: Path,
    arrays: Mapping[str, np.ndarray],
    config: Mapping[str, Any],
    *,
    base: Mapping[str, np.ndarray] | None = None,
) -> Path:
    """Write ``config`` and adapter/head ``arrays`` (fp16, no pickles) to a ``.npz`` file; the
    arrays named in ``base`` as int8 differences from it (see the module docstring)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    deltas = sorted(set(arrays) & set(base or {}))
    out: dict[str, np.ndarray] = {
        "config": np.array(json.dumps({**dict(config), "delta_params": deltas}, sort_keys=True))
    }
    for name, value in sorted(arrays.items()):
        if name in deltas:
            assert base is not None
            delta = np.asarray(value, dtype=np.float32) - np.asarray(base[name], dtype=np.float32)
            peak = np.abs(delta).max(axis=-1, keepdims=True) if delta.ndim > 1 else np.abs(delta).max(keepdims=True)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            out[f"delta/{name}"] = np.round(delta / scale).astype(np.int8)
            out[f"scale/{name}"] = scale
        else:
            out[f"param/{name}"] = np.asarray(value, dtype=np.float16)
    with open(file, "wb") as f:
        np.savez_compressed(f, **out)  # type: ignore[arg-type]
    return file


def write_lora_file(
    file: Path, network: Any, config: Mapping[str, Any], *, base: Mapping[str, np.ndarray] | None = None
) -> Path:
    """Write ``config`` and the network's trainable arrays to a ``.npz`` file (:func:`write_lora_arrays`)."""
    return write_lora_arrays(file, trainable_state(network), config, base=base)
