"""Stance as a cross-encoder: the claim and an evidence sentence read together (NLI style).

The SBERT-style head (:class:`~factscout.verify.stance.StanceHead`) compares two separately
pooled embeddings, so it barely sees a "not" or a swapped quantity; a cross-encoder lets every
claim token attend to every sentence token, the way NLI models read a premise and a hypothesis
(the MNLI-trained RoBERTa that Quin+ uses; Samarinas et al. 2021). No NLI model loads offline
here, so factscout trains its own over the offline all-MiniLM-L6-v2 backbone (``factscout
train stance-cross --out DIR``) and ships only what differs from it in
``models/stance_cross_minilm.npz``: LoRA adapters on every layer's attention (fp16), or
(``--finetune full``) every weight but the vocabulary table (as int4 differences from the
backbone), and a linear 3-class head over the joint
encoding (the network is :func:`factscout.nn.backbone.build_network` with ``num_labels=3``).
Probabilities are ``softmax(logits / temperature)``, the temperature fitted on dev pairs.

The model file also carries the count-rule thresholds tuned for its probabilities
(:attr:`CrossStanceModel.rule_thresholds`), since a better-calibrated stance model wants
different ones from the head's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.errors import BadModel, InputError
from factscout.nn.activations import softmax
from factscout.nn.adapters import FORMAT_VERSION, read_lora_config, read_lora_file, write_lora_file
from factscout.nn.backbone import backbone_weights, network_from_state
from factscout.nn.encoding import VectorCache
from factscout.nn.pairs import check_batching, run_pairs
from factscout.records import STANCE_LABELS
from factscout.verify.base import STANCE_MODELS
from factscout.verify.stance import PairwiseStance
from factscout.verify.verdict import DEFAULT_MIN_SHARE

if TYPE_CHECKING:
    pass

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "stance_cross_minilm.npz"
FORMAT = "factscout-stance-cross-lora"


class CrossStanceModel(PairwiseStance):
    """Three-way stance (:data:`STANCE_LABELS`) of evidence sentences from a cross-encoder.

    Same interface as :class:`~factscout.verify.stance.StanceHead`: ``predict(claim, sentences)
    -> [Stance]``; ``predict_pairs(claims, sentences) -> (n, 3)`` probabilities for paired texts.
    """

    def __init__(
        self,
        network: Any,
        tokenizer: Any,
        *,
        max_length: int = 128,
        batch_size: int = 32,
        info: Mapping[str, Any] | None = None,
        rule: Mapping[str, Any] | None = None,
        device: str = "cpu",
        cache_size: int = 20_000,
        temperature: float = 1.0,
    ) -> None:
        check_batching(max_length, batch_size)
        self.network = network
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.info = dict(info or {})
        self.rule = dict(rule or {})
        self.device = device
        self.cache_size = cache_size
        if not temperature > 0:
            raise BadModel(f"temperature must be > 0, got {temperature!r}")
        self.temperature = float(temperature)
        self._cache: VectorCache[tuple[str, str]] = VectorCache(cache_size)
        network.eval()

    @property
    def rule_thresholds(self) -> tuple[int, float, float] | None:
        """``(min_evidence, min_confidence, min_share)`` of the count rule tuned for this model, if
        stored (a file without ``min_share`` has Quin+'s 0.5)."""
        if "min_evidence" in self.rule and "min_confidence" in self.rule:
            share = float(self.rule.get("min_share", DEFAULT_MIN_SHARE))
            return int(self.rule["min_evidence"]), float(self.rule["min_confidence"]), share
        return None

    # -- persistence --

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, batch_size: int = 32, device: str = "cpu", backbone: str | None = None
    ) -> CrossStanceModel:
        """Load weights saved by :meth:`save`; by default the ones shipped with factscout (offline).
        ``backbone`` overrides where the backbone is read from (a folder holding the same model)."""
        file = Path(path) if path is not None else MODEL_FILE
        hint = " (reinstall factscout, or train one: factscout train stance-cross --out DIR)" if path is None else ""
        config, arrays = read_lora_file(file, FORMAT, "stance cross-encoder", hint=hint)
        if int(config.get("num_labels", 0)) != len(STANCE_LABELS) or tuple(config.get("labels", ())) != STANCE_LABELS:
            raise BadModel(f"{file}: labels {config.get('labels')} differ from {STANCE_LABELS}")
        if backbone is not None:
            config = {**config, "backbone": backbone}
        network, tokenizer = network_from_state(config, arrays, str(file))
        return cls(
            network.to(device),
            tokenizer,
            max_length=int(config.get("max_length", 128)),
            batch_size=batch_size,
            info=config.get("info", {}),
            rule=config.get("rule", {}),
            device=device,
            temperature=float(config.get("temperature", 1.0)),
        )

    @classmethod
    def load_int8(
        cls, path: str | Path | None = None, *, batch_size: int = 32, device: str = "cpu", backbone: str | None = None
    ) -> CrossStanceModel:
        """:meth:`load` then :meth:`int8`, without torch or transformers once the int8 file is cached:
        the cache is keyed by the model file's and the backbone weights' sha256 (the network is
        built, in torch, only to export it the first time), the pairs are tokenised by
        :class:`~factscout.nn.pairs.PairTokenizer`. A cold ``check`` saves seconds of imports."""
        from factscout.nn.backbone import backbone_path, moved_backbone
        from factscout.nn.pairs import PairTokenizer
        from factscout.nn.quantize import OnnxNetwork, cached_file, file_digest, quantized_file

        if device != "cpu":
            raise InputError(f"the int8 stance model runs on the CPU, not {device!r}")
        file = Path(path) if path is not None else MODEL_FILE
        config = read_lora_config(file, FORMAT, "stance cross-encoder")  # the arrays only if it must export
        folder = backbone_path(moved_backbone(str(backbone or config.get("backbone", "minilm")), str(file)))
        weights = Path(folder) / "model.safetensors"
        tokenizer = PairTokenizer.for_backbone(folder)
        if tokenizer is None or not weights.is_file():  # another kind of backbone: the torch route
            return cls.load(path, batch_size=batch_size, backbone=backbone).int8()
        key = f"file:{file_digest(file)}:{file_digest(weights)}"
        if not cached_file("stance-cross", key).is_file():
            fp32 = cls.load(path, batch_size=batch_size, backbone=backbone)
            quantized_file("stance-cross", key, lambda: fp32.network, output_axes={0: "batch"})
        return cls(
            OnnxNetwork(cached_file("stance-cross", key)),
            tokenizer,
            max_length=int(config.get("max_length", 128)),
            batch_size=batch_size,
            info=config.get("info", {}),
            rule=config.get("rule", {}),
            temperature=float(config.get("temperature", 1.0)),
        )

    def save(self, path: str | Path, *, config: Mapping[str, Any], backbone: str | None = None) -> Path:
        """Write the adapters and head (fp16) with ``config``, the rule thresholds and info; fully
        fine-tuned weights as int4 differences from the backbone, one scale per 64 values
        (:mod:`factscout.nn.adapters`; ``backbone``: the folder it was read from, default the config's)."""
        full = {
            **config,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "num_labels": len(STANCE_LABELS),
            "labels": list(STANCE_LABELS),
            "max_length": self.max_length,
            "info": self.info,
            "rule": self.rule,
            "temperature": self.temperature,
        }
        base = None
        if full.get("finetune") == "full":
            base = backbone_weights(self.network, backbone or str(full["backbone"]))
        return write_lora_file(Path(path), self.network, full, base=base, delta_bits=4)

    def int8(self) -> CrossStanceModel:
        """The same model on ONNX Runtime, its weight matrices dynamically quantised to int8
        (:mod:`factscout.nn.quantize`; exported once, then cached): about 3x faster on a CPU,
        probabilities a little off fp32's (``benchmarks/fast_stance.py`` measures by how much)."""
        from factscout.nn.quantize import OnnxNetwork, quantized_file, weights_key

        if isinstance(self.network, OnnxNetwork):
            return self
        path = quantized_file("stance-cross", weights_key(self.network), lambda: self.network, output_axes={0: "batch"})
        fast = copy.copy(self)  # the same tokenizer, rule, temperature and settings
        fast.network, fast._cache = OnnxNetwork(path), VectorCache(self.cache_size)
        return fast

    # -- inference --

    def logits(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        """Raw ``(n, 3)`` logits for paired claim and sentence texts (before the temperature)."""
        out = run_pairs(
            self.network,
            self.tokenizer,
            claims,
            sentences,
            max_length=self.max_length,
            batch_size=self.batch_size,
            device=self.device,
        )
        return out.reshape(-1, len(STANCE_LABELS))

    def clear_cache(self) -> None:
        """Forget remembered predictions (after the weights change)."""
        self._cache.clear()

    def predict_pairs(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        """Class probabilities ``(n, 3)`` (order of :data:`STANCE_LABELS`) for paired texts.

        The last ``cache_size`` pairs are remembered: a sentence read again for the same claim
        (another ``k``, a re-run in the service) is not scored twice.
        """
        if len(claims) != len(sentences):
            raise InputError(f"{len(claims)} claims but {len(sentences)} sentences")
        keys = list(zip(claims, sentences, strict=True))
        rows = self._cache.lookup(
            keys, lambda todo: softmax(self.logits([k[0] for k in todo], [k[1] for k in todo]) / self.temperature)
        )
        return np.stack(rows) if rows else np.zeros((0, len(STANCE_LABELS)), dtype=np.float32)


class _CrossFactory:
    """The shipped model, or ``cross:<file>`` one trained by ``factscout train stance-cross`` (it
    reads claim and sentence together: the shared ``encoder`` is not used). Its int8 form is the
    ``cross-int8`` entry (:class:`~factscout.verify.base.HasInt8Form`)."""

    int8 = "cross-int8"

    def __call__(self, encoder: Any = None, arg: str | None = None, **options: Any) -> CrossStanceModel:
        return CrossStanceModel.load(arg, **options)


STANCE_MODELS.register("cross")(_CrossFactory())


@STANCE_MODELS.register("cross-int8")
def _cross_stance_int8(encoder: Any = None, arg: str | None = None, **options: Any) -> CrossStanceModel:
    """``cross`` (or ``cross-int8:<file>``) dynamically quantised to int8 on ONNX Runtime (faster; see ``int8``)."""
    return CrossStanceModel.load_int8(arg, **options)
