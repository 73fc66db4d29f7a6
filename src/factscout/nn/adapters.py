"""Adapter files: the parameters that differ from a frozen backbone (LoRA adapters and heads),
stored as fp16 arrays plus a JSON config in one ``.npz`` without pickles.

The re-ranker, the stance cross-encoder and the dense encoder adapter each write their own
``format`` name into the config; :func:`read_lora_file` checks it and the format version.
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


def write_lora_arrays(file: Path, arrays: Mapping[str, np.ndarray], config: Mapping[str, Any]) -> Path:
    """Write ``config`` and adapter/head ``arrays`` (fp16, no pickles) to a ``.npz`` file."""
    file.parent.mkdir(parents=True, exist_ok=True)
    out: dict[str, np.ndarray] = {"config": np.array(json.dumps(dict(config), sort_keys=True))}
    for name, value in sorted(arrays.items()):
        out[f"param/{name}"] = np.asarray(value, dtype=np.float16)
    with open(file, "wb") as f:
        np.savez_compressed(f, **out)  # type: ignore[arg-type]
    return file


def write_lora_file(file: Path, network: Any, config: Mapping[str, Any]) -> Path:
    """Write ``config`` and the network's trainable arrays to a ``.npz`` file (:func:`write_lora_arrays`)."""
    return write_lora_arrays(file, trainable_state(network), config)
