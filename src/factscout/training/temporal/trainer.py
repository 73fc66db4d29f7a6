"""Training and evaluating the joint veracity + evidence-ranking models on MultiFC.

The recipe of MultiFC (Augenstein et al. 2019) and its time-aware extension (Allein et al.
2021): pre-train one model on all domains with balanced batches (each batch is drawn from one
domain, domains taken in turn at random with equal probability), then fine-tune a copy per
domain on that domain's training claims, and predict that domain's dev (or test) claims. The
ranking module is trained with ListMLE against the target ranking of the ``method``:

* ``base`` — no ranking loss (the ranking module learns only through veracity);
* ``search rank`` — the search engine's order of the snippets;
* ``random`` — random evidence weights, no ranking module (random-evidence baseline);
* one of the four temporal rankings (``factscout.temporal.rankings.METHODS``).

* ``delta-t`` — Δt features of each evidence item (:func:`factscout.temporal.mixture.delta_features`)
  in the joint representation, no ranking loss;
* ``time-aware`` — Δt features and a learned mixture of the four temporal rankings: the model's
  mixture weights ``π`` (softmax, learned through the veracity loss during pre-training and each
  domain's fine-tuning, so one ``π`` per domain) weight a temporal prior on the evidence weights
  and the ListMLE targets, ``Σ_k π_k ListMLE(r, target_k)`` with ``π`` held fixed in that term
  (:func:`mixture_rank_loss`; one-hot ``π`` gives the single ranking's loss).

``select_time_aware`` picks, per domain, the temporal ranking with the best micro-F1 on the split
it is given (the paper's per-domain choice); :mod:`factscout.training.temporal.protocol` makes
every such choice on a validation split of MultiFC train only.

Same seed, same model. Every training entry point (:func:`train_bilstm_encoders`,
:func:`pretrain`, :func:`finetune`, :func:`run_method`) runs inside
:class:`~factscout.training.loop.deterministic_training`: python, numpy and torch seeded, torch's
deterministic algorithms on, ``TrainSettings.threads`` torch threads (1 by default), and all of it
put back afterwards. Each stage takes its own seed from ``TrainSettings.seed`` through
:func:`~factscout.training.loop.derive_seed` (parameter initialisation, the encoders' and the
method's pre-training, each domain's fine-tuning, prediction), so no stage depends on what ran
before it in the process; the batches come from a seeded numpy ``Generator`` and the dropout
masks and random evidence weights from a seeded ``torch.Generator``, both passed explicitly.
Claims are sorted by ``claim_id`` (:func:`examples_from`), domains by name and the vocabulary by
(count, word), so nothing depends on file order, set iteration or ``PYTHONHASHSEED``.

What is not made deterministic, and why:

* Results are bitwise identical for one machine, torch build and thread count, not across them:
  MKL / oneDNN pick kernels by CPU (AVX2, AVX-512) and may split large reductions by thread,
  which changes the rounding of sums, and a few thousand optimizer steps can turn a last-bit
  difference into a different model. ``threads`` is part of the settings for that reason (on
  the 2-core x86_64 / AVX-512 development machine, 1 and 2 threads gave the same predictions
  for every MultiFC dev claim with the BiLSTM benchmark's sizes, whose tensors are small; that
  is an observation, not a guarantee).
* The MiniLM variant reads sentence embeddings computed by ONNX Runtime (int8) or
  sentence-transformers; those vectors are cached per text on first use
  (:mod:`factscout.temporal.embeddings`) and every later run reads the same float32 values, but a
  cache filled on another CPU or with another encoder build holds slightly different vectors.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from factscout.errors import InputError
from factscout.temporal.joint import BiLstmEncoder, FrozenEncoder, JointModel
from factscout.temporal.listmle import listmle_loss
from factscout.temporal.mixture import DELTA_FEATURES
from factscout.temporal.rankings import METHODS
from factscout.training.loop import derive_seed, deterministic_training, optimizer_step
from factscout.training.temporal.data import (
    ALL_METHODS as ALL_METHODS,
)
from factscout.training.temporal.data import (  # re-exported: the trainer's public names
    BASELINES as BASELINES,
)
from factscout.training.temporal.data import (
    MAX_EVIDENCE as MAX_EVIDENCE,
)
from factscout.training.temporal.data import (
    TIME_METHODS as TIME_METHODS,
)
from factscout.training.temporal.data import (
    Example as Example,
)
from factscout.training.temporal.data import (
    Featurizer as Featurizer,
)
from factscout.training.temporal.data import (
    LabelSpace as LabelSpace,
)
from factscout.training.temporal.data import (
    Tensors as Tensors,
)
from factscout.training.temporal.data import (
    build_vocab as build_vocab,
)
from factscout.training.temporal.data import (
    examples_from as examples_from,
)
from factscout.training.temporal.data import (
    token_ids as token_ids,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """Sizes and schedule; the defaults are what ``benchmarks/temporal.py`` runs on 2 CPU cores."""

    pretrain_epochs: int = 3
    finetune_epochs: int = 3
    batch_size: int = 32
    lr: float = 2e-3
    finetune_lr: float = 1e-3
    rank_weight: float = 1.0
    hidden: int = 128
    embedding_dim: int = 48
    lstm_hidden: int = 32
    dropout: float = 0.2
    encoder_epochs: int = 2
    seed: int = 13
    threads: int = 1  # torch threads while training: part of what makes a run reproducible


def _seeded(seed: int | None, build: Callable[[], JointModel]) -> JointModel:
    """``build()`` with torch's global generator seeded to ``seed`` (parameter initialisation),
    leaving the caller's generator state as it was; ``None``: the global generator as it is."""
    if seed is None:
        return build()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def build_model(
    input_dim: int, featurizer: Featurizer, method: str, settings: TrainSettings, *, init_seed: int | None = None
) -> JointModel:
    """The joint model over fixed text vectors of size ``input_dim`` (MiniLM, or the BiLSTM's),
    initialised from ``init_seed`` (or from torch's global generator when it is ``None``)."""
    return _seeded(
        init_seed,
        lambda: JointModel(
            FrozenEncoder(input_dim, settings.hidden),
            FrozenEncoder(input_dim, settings.hidden),
            n_labels=len(featurizer.labels.labels),
            meta_vocab=len(featurizer.meta_vocab) + 1,
            hidden=settings.hidden,
            dropout=settings.dropout,
            weighting="random" if method == "random" else "learned",
            time_dim=len(DELTA_FEATURES) if method in TIME_METHODS else 0,
            mixture=method == "time-aware",
            n_rankings=len(METHODS),
        ),
    )


def train_bilstm_encoders(featurizer: Featurizer, train: Tensors, settings: TrainSettings) -> JointModel:
    """Stage 1 of the BiLSTM variant: claim and evidence BiLSTMs trained from scratch inside the
    joint model on all domains (balanced batches, veracity loss only). They are then frozen and
    every method's model reads their vectors (:func:`bilstm_vectors`); on 2 CPU cores training
    them again for every method and domain would take hours."""
    if featurizer.vocab is None:
        raise InputError("train_bilstm_encoders needs a 'bilstm' featurizer")
    size = len(featurizer.vocab) + 2
    with deterministic_training(settings.seed, threads=settings.threads):
        model = _seeded(
            derive_seed(settings.seed, "encoders", "init"),
            lambda: JointModel(
                BiLstmEncoder(size, settings.embedding_dim, settings.lstm_hidden),
                BiLstmEncoder(size, settings.embedding_dim, settings.lstm_hidden),
                n_labels=len(featurizer.labels.labels),
                meta_vocab=len(featurizer.meta_vocab) + 1,
                hidden=settings.hidden,
                dropout=settings.dropout,
            ),
        )
        pretrain(
            model,
            train,
            "base",
            settings,
            epochs=settings.encoder_epochs,
            seed=derive_seed(settings.seed, "encoders", "pretrain"),
        )
    return model


def bilstm_vectors(model: JointModel, data: Tensors, *, batch_size: int = 256, threads: int = 1) -> Tensors:
    """``data`` with its token ids replaced by the trained BiLSTMs' claim and evidence vectors
    (computed on ``threads`` torch threads, as in training, so the vectors are reproducible)."""
    model.eval()
    claims, evidence = [], []
    with deterministic_training(0, threads=threads), torch.no_grad():
        for start in range(0, len(data.examples), batch_size):
            claims.append(model.claim_encoder(data.claim[start : start + batch_size]))
            evidence.append(model.evidence_encoder(data.evidence[start : start + batch_size]))
    return dataclasses.replace(data, claim=torch.cat(claims), evidence=torch.cat(evidence))


def _loss(
    model: JointModel, data: Tensors, batch: dict[str, Any], method: str, settings: TrainSettings
) -> torch.Tensor:
    logits, ranking = model(batch)
    labelled = batch["labels"] >= 0
    loss = (
        nn.functional.cross_entropy(logits[labelled], batch["labels"][labelled]) if labelled.any() else logits.sum() * 0
    )
    rows = batch["rows"]
    if method == "time-aware" and model.mixture_logits is not None:
        weights = torch.softmax(model.mixture_logits.detach(), dim=0)
        loss = loss + settings.rank_weight * mixture_rank_loss(ranking, data.targets, rows, weights)
    elif method in data.targets and method not in ("base", "random"):
        target, mask = data.targets[method]
        loss = loss + settings.rank_weight * listmle_loss(ranking, target[rows], mask[rows])
    return loss


def mixture_rank_loss(
    ranking: torch.Tensor,
    targets: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
    rows: torch.Tensor,
    weights: torch.Tensor,
) -> torch.Tensor:
    """``Σ_k weights_k · ListMLE(ranking, target_k)`` over the four temporal rankings (``METHODS``
    order); one-hot ``weights`` give exactly that ranking's ListMLE loss."""
    if weights.shape != (len(METHODS),):
        raise InputError(
            f"mixture weights need one value per temporal ranking ({len(METHODS)}), got {tuple(weights.shape)}"
        )
    total = ranking.sum() * 0.0
    for w, method in zip(weights, METHODS, strict=True):
        if float(w) != 0.0:
            target, mask = targets[method]
            total = total + w * listmle_loss(ranking, target[rows], mask[rows])
    return total


def _steps(
    model: JointModel,
    data: Tensors,
    batches: Sequence[np.ndarray],
    method: str,
    settings: TrainSettings,
    lr: float,
    generator: torch.Generator,
) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    total = 0.0
    for rows in batches:
        batch = data.batch(rows)
        batch["generator"] = generator
        loss = _loss(model, data, batch, method, settings)
        optimizer_step(loss, opt, clip=model.parameters(), max_norm=5.0)
        total += float(loss.detach())
    return total / max(len(batches), 1)


def pretrain(
    model: JointModel,
    data: Tensors,
    method: str,
    settings: TrainSettings,
    *,
    epochs: int | None = None,
    seed: int | None = None,
) -> None:
    """Balanced batches: each batch from one domain, the domain drawn uniformly at random.

    The batches come from a numpy ``Generator`` and the dropout masks (and random evidence
    weights) from a ``torch.Generator``, both seeded with ``seed`` (default ``settings.seed``)."""
    seed = settings.seed if seed is None else seed
    with deterministic_training(seed, threads=settings.threads):
        rng = np.random.default_rng(seed)
        gen = torch.Generator().manual_seed(seed)
        by_domain: dict[str, list[int]] = {}
        for i, e in enumerate(data.examples):
            by_domain.setdefault(e.domain, []).append(i)
        domains = sorted(by_domain)
        steps = max(len(data.examples) // settings.batch_size, 1)
        for epoch in range(settings.pretrain_epochs if epochs is None else epochs):
            batches = []
            for _ in range(steps):
                rows = by_domain[domains[rng.integers(len(domains))]]
                batches.append(rng.choice(rows, size=min(settings.batch_size, len(rows)), replace=False))
            loss = _steps(model, data, batches, method, settings, settings.lr, gen)
            log.info("pretrain %s epoch %d loss %.4f", method, epoch, loss)


def finetune(
    model: JointModel, data: Tensors, rows: Sequence[int], method: str, settings: TrainSettings, seed: int
) -> None:
    """``settings.finetune_epochs`` passes over ``rows`` in an order shuffled by ``seed``, which
    also seeds the dropout masks."""
    with deterministic_training(seed, threads=settings.threads):
        rng = np.random.default_rng(seed)
        gen = torch.Generator().manual_seed(seed)
        rows_arr = np.asarray(rows)
        for _ in range(settings.finetune_epochs):
            order = rng.permutation(rows_arr)
            batches = [order[i : i + settings.batch_size] for i in range(0, len(order), settings.batch_size)]
            _steps(model, data, batches, method, settings, settings.finetune_lr, gen)


def predict_proba(
    model: JointModel, data: Tensors, rows: Sequence[int], *, seed: int = 0, threads: int = 1
) -> np.ndarray:
    """(len(rows), n_labels) label probabilities, 0 outside each claim's domain's labels (all 0
    for a domain without labels); ``seed`` seeds the random evidence weights of ``random``."""
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    out = []
    with deterministic_training(seed, threads=threads), torch.no_grad():
        for start in range(0, len(rows), 256):
            batch = data.batch(list(rows[start : start + 256]))
            batch["generator"] = gen
            logits, _ = model(batch)
            proba = torch.softmax(logits, dim=1).masked_fill(~batch["label_mask"], 0.0)
            out.append(proba.numpy())
    return np.concatenate(out) if out else np.zeros((0, data.label_mask.shape[1]), dtype=np.float32)


def labels_of(proba: np.ndarray, labels: LabelSpace) -> list[str]:
    """Argmax label strings of :func:`predict_proba` rows ('' where a row is all 0)."""
    return [labels.labels[int(np.argmax(p))][1] if p.any() else "" for p in proba]


def predict(
    model: JointModel, data: Tensors, rows: Sequence[int], labels: LabelSpace, *, seed: int = 0, threads: int = 1
) -> list[str]:
    """Predicted label strings (argmax over the claim's domain's labels); ``seed`` seeds the
    random evidence weights of the ``random`` baseline."""
    return labels_of(predict_proba(model, data, rows, seed=seed, threads=threads), labels)


def f1_scores(gold: Sequence[str | None], predicted: Sequence[str]) -> tuple[float, float]:
    """(micro-F1, macro-F1) of single-label predictions; macro over the labels in gold or predicted.
    Micro-F1 of single-label multi-class predictions equals accuracy."""
    if not gold:
        return 0.0, 0.0
    micro = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
    labels = sorted({g for g in gold if g is not None} | set(predicted))
    f1s = []
    for lab in labels:
        tp = sum(g == lab and p == lab for g, p in zip(gold, predicted, strict=True))
        fp = sum(g != lab and p == lab for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == lab and p != lab for g, p in zip(gold, predicted, strict=True))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return micro, sum(f1s) / len(f1s)


@dataclass
class DomainResult:
    domain: str
    micro_f1: float
    macro_f1: float
    n: int
    claim_ids: tuple[str, ...] = ()  # the scored claims, in order
    predicted: tuple[str, ...] = ()  # their predicted labels
    gold: tuple[str | None, ...] = ()  # their gold labels
    proba: np.ndarray | None = field(
        default=None, compare=False, repr=False
    )  # their label probabilities (predict_proba), for seed ensembles
    mixture: tuple[float, ...] = ()  # the fine-tuned model's π over METHODS (time-aware only)


def run_method(
    featurizer: Featurizer,
    method: str,
    train: Tensors,
    evals: Mapping[str, Tensors],
    settings: TrainSettings,
) -> dict[str, dict[str, DomainResult]]:
    """Pre-train on all domains, fine-tune per domain, score every eval split per domain.

    Returns ``{split: {domain: DomainResult}}``."""
    if method not in ALL_METHODS:
        raise InputError(f"no joint-model method {method!r}; known: {', '.join(ALL_METHODS)}")
    seed = settings.seed
    with deterministic_training(seed, threads=settings.threads):
        # every method starts from the same initial weights and sees the same batches
        model = build_model(
            int(train.claim.shape[1]), featurizer, method, settings, init_seed=derive_seed(seed, "init")
        )
        start = time.perf_counter()
        pretrain(model, train, method, settings, seed=derive_seed(seed, "pretrain"))
        log.info("%s: pretrained in %.1f s", method, time.perf_counter() - start)
        state = copy.deepcopy(model.state_dict())
        train_rows: dict[str, list[int]] = {}
        for i, e in enumerate(train.examples):
            train_rows.setdefault(e.domain, []).append(i)
        results: dict[str, dict[str, DomainResult]] = {name: {} for name in evals}
        for domain in sorted(train_rows):
            model.load_state_dict(state)
            finetune(model, train, train_rows[domain], method, settings, derive_seed(seed, "finetune", domain))
            for name in sorted(evals):
                data = evals[name]
                rows = [i for i, e in enumerate(data.examples) if e.domain == domain]
                if not rows:
                    continue
                proba = predict_proba(
                    model, data, rows, seed=derive_seed(seed, "predict", domain), threads=settings.threads
                )
                predicted = labels_of(proba, featurizer.labels)
                gold = tuple(data.examples[i].label for i in rows)
                micro, macro = f1_scores(gold, predicted)
                ids = tuple(data.examples[i].claim_id for i in rows)
                mix = tuple(model.mixture_weights())
                results[name][domain] = DomainResult(
                    domain, micro, macro, len(rows), ids, tuple(predicted), gold, proba, mix
                )
    return {name: results[name] for name in evals}


def select_time_aware(dev: Mapping[str, Mapping[str, DomainResult]]) -> dict[str, str]:
    """Per domain, the temporal ranking with the best dev micro-F1 (then macro-F1, then the order
    of ``METHODS``)."""
    domains = sorted({d for m in METHODS for d in dev.get(m, {})})
    choice = {}
    for domain in domains:
        scored = [
            (dev[m][domain].micro_f1, dev[m][domain].macro_f1, -i, m)
            for i, m in enumerate(METHODS)
            if domain in dev.get(m, {})
        ]
        choice[domain] = max(scored)[3]
    return choice
