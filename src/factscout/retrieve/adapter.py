"""The fine-tuned dense encoder: all-MiniLM-L6-v2 plus factscout's shipped LoRA adapter.

``factscout train dense`` (:mod:`factscout.training.dense.trainer`) fine-tunes the offline
all-MiniLM-L6-v2 bi-encoder on claim -> evidence pairs with an in-batch sampled softmax (as
QR-BERT in Quin+, Samarinas et al. 2021) and ships only LoRA adapters (Hu et al. 2022) on the
attention projections, fp16 in ``models/dense_minilm_lora.npz`` (``models/MODEL_CARD.md``).

:class:`FineTunedEncoder` loads the base model and merges the adapters into its weights
(``W + (alpha / r) B A``), so encoding costs exactly what the base model costs. Its embedding
cache key includes the adapter file's sha256: base and fine-tuned embeddings never mix.

Users pick it with the encoder name ``minilm-ft`` (``DenseConfig(encoder="minilm-ft")``,
``factscout index --retriever dense --encoder minilm-ft``) or with ``DenseConfig(adapter=PATH)``
for an adapter file of their own; the index records the encoder name, the adapter path and its
sha256, and queries are encoded with the same encoder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.hashing import file_sha256
from factscout.nn.adapters import FORMAT_VERSION, read_lora_file, write_lora_arrays
from factscout.text.encoder import DEFAULT_ENCODER, Encoder

__all__ = [
    "FINETUNED_ENCODER",
    "FORMAT",
    "MODEL_FILE",
    "BadModel",
    "FineTunedEncoder",
    "ModelNotFound",
    "make_encoder",
    "read_adapter",
    "save_adapter",
]

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "dense_minilm_lora.npz"
FORMAT = "factscout-dense-lora"
FINETUNED_ENCODER = "minilm-ft"
INT8_ENCODER = "minilm-int8"


def save_adapter(path: str | Path, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Path:
    """Write LoRA arrays (fp16, no pickles) and ``config`` (``backbone``, ``rank``, ``alpha``...) to ``.npz``."""
    return write_lora_arrays(Path(path), arrays, {**config, "format": FORMAT, "format_version": FORMAT_VERSION})


def read_adapter(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray], str]:
    """(config, fp32 arrays, sha256) of an adapter file, with errors that name the file."""
    file = Path(path)
    hint = " (reinstall factscout, or train one: factscout train dense --out DIR)" if file == MODEL_FILE else ""
    config, arrays = read_lora_file(file, FORMAT, "dense encoder adapter", hint=hint)
    for key in ("rank", "alpha"):
        if not isinstance(config.get(key), (int, float)) or config[key] <= 0:
            raise BadModel(f"{file}: the adapter config has no valid {key!r}")
    return config, arrays, file_sha256(file)


def merge_adapter(transformer: Any, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray], source: str) -> int:
    """Add ``(alpha / rank) B A`` to each adapted linear layer of ``transformer``; returns how many."""
    import torch

    scaling = float(config["alpha"]) / float(config["rank"])
    names = sorted(k[: -len(".lora_a")] for k in arrays if k.endswith(".lora_a"))
    if not names or len(names) * 2 != len(arrays):
        raise BadModel(f"{source}: expected pairs of '<layer>.lora_a' / '<layer>.lora_b' arrays")
    with torch.no_grad():
        for name in names:
            a, b = arrays.get(f"{name}.lora_a"), arrays.get(f"{name}.lora_b")
            try:
                linear = transformer.get_submodule(name)
            except AttributeError:
                raise BadModel(f"{source}: the backbone has no layer {name!r}") from None
            weight = linear.weight
            if a is None or b is None or b.shape[1] != a.shape[0] or (b.shape[0], a.shape[1]) != tuple(weight.shape):
                shapes = (None if a is None else a.shape, None if b is None else b.shape)
                raise BadModel(f"{source}: adapter {name} has shapes {shapes}, the layer is {tuple(weight.shape)}")
            delta = torch.from_numpy(np.ascontiguousarray(b @ a, dtype=np.float32)) * scaling
            weight.add_(delta.to(device=weight.device, dtype=weight.dtype))
    return len(names)


class FineTunedEncoder(Encoder):
    """An :class:`Encoder` whose model has a LoRA adapter merged in (default: the shipped one).

    The adapter file is read (and checked) at construction, so a missing or corrupt file fails
    at once with a message naming it; the backbone loads lazily on the first encode.
    """

    def __init__(
        self,
        model: str = DEFAULT_ENCODER,
        *,
        adapter: str | Path | None = None,
        batch_size: int = 64,
        max_seq_length: int | None = 256,
    ) -> None:
        super().__init__(model, batch_size=batch_size, max_seq_length=max_seq_length)
        self.adapter_path = Path(adapter) if adapter is not None else MODEL_FILE
        self.adapter_config, self._arrays, self.adapter_sha256 = read_adapter(self.adapter_path)
        backbone = str(self.adapter_config.get("backbone", DEFAULT_ENCODER))
        if backbone != model:
            raise BadModel(f"{self.adapter_path} adapts encoder {backbone!r}, not {model!r}")

    @property
    def model(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            base = Encoder.model.fget(self)  # type: ignore[attr-defined]
            try:
                merge_adapter(base[0].auto_model, self.adapter_config, self._arrays, str(self.adapter_path))
            except BaseException:
                self._model = None
                raise
        return self._model

    def cache_identity(self) -> str:
        return f"{super().cache_identity()}adapter={self.adapter_sha256}\0"


def is_shipped(path: str | Path) -> bool:
    return Path(path).resolve() == MODEL_FILE.resolve()


def make_encoder(name: str, *, adapter: str | None = None, max_seq_length: int | None = 256) -> Encoder:
    """The encoder a dense config names: ``minilm-ft`` = minilm + the shipped adapter;
    ``minilm-int8`` = minilm dynamically quantised to int8 on ONNX Runtime (faster, near-equal)."""
    if name == INT8_ENCODER:
        if adapter is not None:
            raise InputError(f"the {INT8_ENCODER} encoder takes no adapter")
        from factscout.text.onnx_encoder import Int8Encoder

        return Int8Encoder(max_seq_length=max_seq_length or 256)
    if name == FINETUNED_ENCODER:
        return FineTunedEncoder(DEFAULT_ENCODER, adapter=adapter, max_seq_length=max_seq_length)
    if adapter is not None:
        return FineTunedEncoder(name, adapter=adapter, max_seq_length=max_seq_length)
    return Encoder(name, max_seq_length=max_seq_length)
