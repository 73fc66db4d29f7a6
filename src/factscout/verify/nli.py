"""Stance from any NLI cross-encoder: ``--stance nli:<hub model id or local folder>``.

Natural language inference models read a premise and a hypothesis together and say whether the
premise entails the hypothesis, contradicts it, or neither (Bowman et al. 2015, SNLI; Williams et
al. 2018, MultiNLI). Quin+ (Samarinas, Hsu & Lee 2021) classifies evidence stance exactly so, with
the evidence sentence as the premise and the claim as the hypothesis: entailment -> supports,
contradiction -> refutes, neutral -> not enough info. :class:`NliStanceModel` does the same with
any sentence-transformers ``CrossEncoder`` NLI model (``cross-encoder/nli-deberta-v3-small``,
a fine-tuned folder of your own...).

Models order their classes differently, so the order is read from the model config's
``id2label``, names matched case-insensitively (:data:`NLI_LABELS`); a model whose labels do not
map onto the three stances is refused with its labels named. Hub ids download through
``huggingface_hub`` as usual: factscout's offline defaults load from package paths, and nothing
here sets ``HF_HUB_OFFLINE`` (set it yourself to stay offline; a model already in the hub cache
still loads then). For users with internet; defaults, tests and benchmarks stay offline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.errors import BadModel, InputError, MissingDependency, ModelNotFound
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, StanceLabel
from factscout.verify.base import STANCE_MODELS
from factscout.verify.stance import PairwiseStance

if TYPE_CHECKING:
    pass

NLI_LABELS: Mapping[str, StanceLabel] = {
    "entailment": SUPPORTS,
    "contradiction": REFUTES,
    "neutral": NOT_ENOUGH_INFO,
    # FEVER-style models name the stances themselves
    SUPPORTS: SUPPORTS,
    REFUTES: REFUTES,
    NOT_ENOUGH_INFO: NOT_ENOUGH_INFO,
}
"""Model label names (lower-cased) -> stance; any other name makes the model unusable here."""

DEVICES = ("cpu", "cuda", "mps")
_INSTALL_HINT = "pip install sentence-transformers torch"


def stance_order(id2label: Mapping[Any, str], *, model: str = "the model") -> tuple[int, int, int]:
    """The model output indices of supports, refutes and not enough info, from ``id2label``.

    ``{0: "contradiction", 1: "entailment", 2: "neutral"}`` gives ``(1, 0, 2)``. Keys may be ints
    or their strings (as in a ``config.json``). Raises :class:`~factscout.errors.BadModel`
    naming the labels when they are not exactly the three NLI classes.
    """
    try:
        labels = {int(k): str(v) for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise BadModel(f"{model}: id2label {dict(id2label)!r} does not map class indices to names") from None
    stance_of = {i: NLI_LABELS.get(name.strip().lower()) for i, name in labels.items()}
    if sorted(labels) != [0, 1, 2] or sorted(s for s in stance_of.values() if s) != sorted(STANCE_LABELS):
        shown = ", ".join(f"{i}: {labels[i]}" for i in sorted(labels))
        raise BadModel(
            f"{model}: its labels ({shown}) are not the three NLI classes"
            " entailment / contradiction / neutral, so they cannot be read as supports / refutes / not enough info"
        )
    index = {stance: i for i, stance in stance_of.items()}
    return index[SUPPORTS], index[REFUTES], index[NOT_ENOUGH_INFO]


def check_device(device: str) -> str:
    """``cpu``, ``cuda``, ``cuda:N`` or ``mps``, and available to torch; else an InputError."""
    kind, _, number = str(device).partition(":")
    if kind not in DEVICES or (number and (kind != "cuda" or not number.isdigit())):
        raise InputError(f"device must be one of {', '.join(DEVICES)} (or cuda:N), got {device!r}")
    if kind == "cpu":
        return device
    import torch

    if kind == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r}: torch sees no CUDA GPU here (use --device cpu)")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"device {device!r}: torch has no Apple MPS backend here (use --device cpu)")
    return device


class NliStanceModel(PairwiseStance):
    """Three-way stance (:data:`STANCE_LABELS`) from an NLI ``CrossEncoder``.

    ``predict(claim, sentences) -> [Stance]`` like every stance model; ``predict_pairs(claims,
    sentences) -> (n, 3)`` probabilities for paired texts. Each pair is read as (premise =
    evidence sentence, hypothesis = claim). ``order`` holds the model's output indices of
    supports, refutes and not enough info (:func:`stance_order`).
    """

    def __init__(
        self,
        cross_encoder: Any,
        order: Sequence[int],
        *,
        batch_size: int = 32,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        if sorted(order) != [0, 1, 2]:
            raise InputError(f"order must be a permutation of 0, 1, 2, got {tuple(order)!r}")
        self.cross_encoder = cross_encoder
        self.order = tuple(int(i) for i in order)
        self.batch_size = batch_size
        self.info = dict(info or {})

    @classmethod
    def load(
        cls, model: str | Path, *, device: str = "cpu", batch_size: int = 32, max_length: int | None = None
    ) -> NliStanceModel:
        """Load a ``CrossEncoder`` from a hub id or a local folder (``device``: cpu, cuda, mps)."""
        name = str(model).strip()
        if not name:
            raise InputError("an NLI stance model needs a hub model id or a local folder")
        check_device(device)
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise MissingDependency(f"NLI stance models need sentence-transformers: {_INSTALL_HINT}") from None
        local = Path(name).expanduser()
        source = str(local) if local.is_dir() else name
        try:
            cross_encoder = CrossEncoder(source, device=device, max_length=max_length)
        except (OSError, ValueError) as exc:
            if local.is_dir():
                raise BadModel(f"{local} is not a sentence-transformers CrossEncoder folder: {exc}") from None
            offline = " (HF_HUB_OFFLINE is set: only models already in the hub cache load)"
            hint = offline if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"} else ""
            raise ModelNotFound(
                f"no NLI model {name!r}: not a local folder, and the hub did not give it{hint}: {exc}"
            ) from None
        # the wrapped transformers config; a model without id2label is refused by stance_order
        id2label = getattr(getattr(cross_encoder, "config", None), "id2label", None) or {}
        order = stance_order(id2label, model=name)
        labels = [str(id2label[i]) for i in sorted(id2label)]
        return cls(cross_encoder, order, batch_size=batch_size, info={"model": name, "labels": ", ".join(labels)})

    # -- inference --

    def predict_pairs(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        """Class probabilities ``(n, 3)`` (order of :data:`STANCE_LABELS`) for paired texts."""
        if len(claims) != len(sentences):
            raise InputError(f"{len(claims)} claims but {len(sentences)} sentences")
        if not claims:
            return np.zeros((0, len(STANCE_LABELS)), dtype=np.float32)
        probs = self.cross_encoder.predict(
            [(s, c) for c, s in zip(claims, sentences, strict=True)],  # (premise, hypothesis)
            batch_size=self.batch_size,
            apply_softmax=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        probs = np.asarray(probs, dtype=np.float32).reshape(len(claims), -1)
        if probs.shape[1] != len(STANCE_LABELS):
            raise BadModel(f"{self.info.get('model', 'the NLI model')} gives {probs.shape[1]} scores per pair, not 3")
        out: np.ndarray = probs[:, list(self.order)]
        return out


@STANCE_MODELS.register("nli")
def _nli_stance(
    encoder: Any = None, arg: str = "", device: str = "cpu", batch_size: int = 32, max_length: int | None = None
) -> NliStanceModel:
    """``nli:<arg>``: ``arg`` is a hub model id or a local folder (the shared ``encoder`` is not used)."""
    return NliStanceModel.load(arg, device=device, batch_size=batch_size, max_length=max_length)


__all__ = ["DEVICES", "NLI_LABELS", "NliStanceModel", "check_device", "stance_order"]
