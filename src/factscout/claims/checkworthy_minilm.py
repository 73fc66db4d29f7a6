"""The fine-tuned MiniLM check-worthiness model (:class:`MinilmCheckworthy`).

all-MiniLM-L6-v2 with LoRA adapters (or every weight but the vocabulary, ``finetune: full``) and
a three-way head over the joint encoding (:func:`factscout.nn.backbone.build_network` with
``num_labels=3``; the sentence is the only segment, so the head reads ``[CLS]``, the sentence's
mean-pooled tokens and the empty second segment's ``[SEP]``). The ``.npz`` holds only what differs
from the installed backbone (:mod:`factscout.nn.adapters`). Probabilities are
``softmax(logits / temperature)`` in the order of
:data:`~factscout.datasets.checkworthy.CHECKWORTHY_LABELS`, the temperature fitted on dev.

:meth:`MinilmCheckworthy.load_int8` (what :func:`~factscout.claims.checkworthy.load_checkworthy`
uses) runs the network dynamically quantised to int8 on ONNX Runtime, one text per call as every
int8 network in factscout does (:mod:`factscout.nn.pairs`), exported once and cached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.claims.scores import MINILM_FORMAT, Scoring, checked_threshold
from factscout.datasets.checkworthy import CHECKWORTHY_LABELS
from factscout.errors import BadModel, InputError
from factscout.nn.activations import softmax
from factscout.nn.adapters import FORMAT_VERSION, read_lora_config, read_lora_file, write_lora_file
from factscout.nn.pairs import check_batching, run_pairs


class MinilmCheckworthy(Scoring):
    """Three-way check-worthiness from a fine-tuned MiniLM (module docstring)."""

    def __init__(
        self,
        network: Any,
        tokenizer: Any,
        *,
        threshold: float = 0.5,
        temperature: float = 1.0,
        max_length: int = 96,
        batch_size: int = 32,
        info: Mapping[str, Any] | None = None,
        device: str = "cpu",
    ) -> None:
        check_batching(max_length, batch_size)
        if not temperature > 0:
            raise BadModel(f"temperature must be > 0, got {temperature!r}")
        self.network, self.tokenizer = network, tokenizer
        self.threshold = checked_threshold(threshold, "MiniLM check-worthiness model")
        self.temperature = float(temperature)
        self.max_length, self.batch_size, self.device = max_length, batch_size, device
        self.info = dict(info or {})
        self.labels: tuple[str, ...] = tuple(CHECKWORTHY_LABELS)
        network.eval()

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """Raw ``(n, 3)`` logits (before the temperature)."""
        out = run_pairs(
            self.network,
            self.tokenizer,
            [t if t.strip() else " " for t in texts],
            [""] * len(texts),
            max_length=self.max_length,
            batch_size=self.batch_size,
            device=self.device,
        )
        return out.reshape(-1, len(CHECKWORTHY_LABELS))

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(softmax(self.logits(texts) / self.temperature), dtype=np.float64)

    # -- persistence --

    def save(self, path: str | Path, *, config: Mapping[str, Any], backbone: str | None = None) -> Path:
        """Write the adapters and head (fp16), or a full fine-tune's weights as int4 differences
        from the backbone, with the threshold, temperature and ``config``."""
        from factscout.nn.backbone import backbone_weights

        full = {
            **config,
            "format": MINILM_FORMAT,
            "format_version": FORMAT_VERSION,
            "num_labels": len(CHECKWORTHY_LABELS),
            "labels": list(CHECKWORTHY_LABELS),
            "max_length": self.max_length,
            "threshold": self.threshold,
            "temperature": self.temperature,
            "info": self.info,
        }
        base = (
            backbone_weights(self.network, backbone or str(full["backbone"]))
            if full.get("finetune") == "full"
            else None
        )
        return write_lora_file(Path(path), self.network, full, base=base, delta_bits=4)

    @staticmethod
    def _config(file: Path) -> dict[str, Any]:
        config = read_lora_config(file, MINILM_FORMAT, "check-worthiness model")
        if tuple(config.get("labels", ())) != CHECKWORTHY_LABELS:
            raise BadModel(f"{file}: labels {config.get('labels')} differ from {CHECKWORTHY_LABELS}")
        return config

    @classmethod
    def load(cls, path: str | Path, *, device: str = "cpu", backbone: str | None = None) -> MinilmCheckworthy:
        """The fp32 torch model of a file written by :meth:`save`."""
        from factscout.nn.backbone import network_from_state

        file = Path(path)
        cls._config(file)
        config, arrays = read_lora_file(file, MINILM_FORMAT, "check-worthiness model")
        if backbone is not None:
            config = {**config, "backbone": backbone}
        network, tokenizer = network_from_state(config, arrays, str(file))
        return cls(
            network.to(device),
            tokenizer,
            threshold=checked_threshold(config.get("threshold"), str(file)),
            temperature=float(config.get("temperature", 1.0)),
            max_length=int(config.get("max_length", 96)),
            info=config.get("info", {}),
            device=device,
        )

    @classmethod
    def load_int8(cls, path: str | Path, *, backbone: str | None = None) -> MinilmCheckworthy:
        """:meth:`load` as int8 on ONNX Runtime; without torch once the int8 file is cached (keyed
        by the model file's and the backbone weights' sha256)."""
        from factscout.nn.backbone import backbone_path, moved_backbone
        from factscout.nn.pairs import PairTokenizer
        from factscout.nn.quantize import OnnxNetwork, cached_file, file_digest, quantized_file

        file = Path(path)
        config = cls._config(file)
        folder = backbone_path(moved_backbone(str(backbone or config.get("backbone", "minilm")), str(file)))
        weights = Path(folder) / "model.safetensors"
        tokenizer = PairTokenizer.for_backbone(folder)
        if tokenizer is None or not weights.is_file():
            raise InputError(f"{file}: the int8 path needs a BERT-style backbone folder with model.safetensors")
        key = f"file:{file_digest(file)}:{file_digest(weights)}"
        if not cached_file("checkworthy", key).is_file():
            fp32 = cls.load(file, backbone=backbone)
            quantized_file("checkworthy", key, lambda: fp32.network, output_axes={0: "batch"})
        return cls(
            OnnxNetwork(cached_file("checkworthy", key)),
            tokenizer,
            threshold=checked_threshold(config.get("threshold"), str(file)),
            temperature=float(config.get("temperature", 1.0)),
            max_length=int(config.get("max_length", 96)),
            info=config.get("info", {}),
        )
