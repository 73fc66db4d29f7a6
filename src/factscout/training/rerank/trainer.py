"""Train, evaluate and ship factscout's cross-encoder re-ranker.

Usage (the shipped files were written by exactly this)::

    factscout train rerank --out src/factscout/rerank/models

One reproducible run, fixed seed, CPU only (2 cores):

1. **Split.** SciFact train claims (Wadden et al. 2020) minus the held-out claims of
   ``verify/models/scifact_heldout_ids.txt`` form the training part; a seeded tenth of it (claims
   citing a common abstract kept together) is a dev part that picks the interpolation weight.
   The held-out claims are only scored, never used for a choice.
2. **Pairs.** Each (claim, cited abstract) of the training part is a group with ``negatives``
   hard negatives drawn (afresh each epoch) from the top ``negative_pool`` BM25 hits of the claim
   (factscout's own bm25 retriever) that the claim does not cite.
3. **Model.** all-MiniLM-L6-v2 reads ``claim [SEP] title + text`` (truncated to ``max_length``
   tokens); LoRA adapters (Hu et al. 2022) on the attention projections and the score head of
   :func:`factscout.nn.backbone.build_network` are trained with listwise softmax
   cross-entropy over each group (the positive against its negatives; "localized contrastive
   estimation", Gao, Dai & Callan 2021, "Rethink Training of BERT Rerankers in Multi-Stage
   Retrieval Pipeline", ECIR).
4. **Evaluation.** On the held-out claims, corpus = the SciFact corpus: nDCG@10 and R@100 of BM25,
   hybrid (``build_retriever(corpus, "hybrid")``), hybrid top-``top_n`` re-ranked by the
   cross-encoder alone, and interpolated with the hybrid score (weight tuned on the dev part).

Writes ``reranker_minilm_lora.npz`` (fp16 adapters + head), ``metrics.json`` and ``MODEL_CARD.md``.
``--quick`` is a seconds-long smoke run on the ``scifact_mini`` fixture (BM25 first stage).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.errors import InputError
from factscout.formats.npz import save_npz
from factscout.hashing import file_sha256
from factscout.nn.backbone import build_network
from factscout.nn.pairs import encode_pairs
from factscout.records import Query, Ranking
from factscout.rerank.cross_encoder import MODEL_FILE, CrossEncoderReranker, rerank_with_scores
from factscout.training.cards import write_card, write_metrics
from factscout.training.loop import LoraTrainConfig, adamw_with_warmup, optimizer_step
from factscout.training.rerank.card import model_card
from factscout.training.splits import HELDOUT_FILE, positives, read_heldout_ids, split_dev

if TYPE_CHECKING:
    from factscout.datasets import Dataset

MEASURES = ("nDCG@10", "R@100")
WEIGHT_GRID = tuple(round(0.05 * i, 2) for i in range(21))

Say = Callable[[str], None]


@dataclass(frozen=True)
class TrainConfig(LoraTrainConfig):
    """Everything that decides the weights (stored in the model file and the card)."""

    init_scale: float = 20.0
    max_length: int = 128
    negatives: int = 3
    negative_pool: int = 30
    groups_per_step: int = 2
    epochs: float = 3.0
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup: float = 0.1
    dev_fraction: float = 0.1
    top_n: int = 50
    first_stage: str = "hybrid"
    dataset: str = "scifact"
    max_train_groups: int | None = None
    sources: tuple[str, ...] = field(default=("scifact",))


QUICK = TrainConfig(
    max_length=64,
    negatives=1,
    negative_pool=5,
    epochs=1.0,
    max_train_groups=4,
    top_n=10,
    first_stage="bm25",
    dataset="scifact_mini",
    dev_fraction=0.2,
)


# --- data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    claim: str
    positive: str
    pool: tuple[str, ...]


def training_groups(dataset: Dataset, claim_ids: Sequence[str], pool_size: int) -> list[Group]:
    """One group per (claim, cited abstract), with the claim's BM25 hard-negative pool."""
    from factscout.retrieve import build_retriever

    bm25 = build_retriever(dataset.corpus, "bm25")
    claims = {c.claim_id: c for c in dataset.claims}
    wanted = [c for c in claim_ids if positives(dataset.qrels, c)]
    queries = [Query.for_claim(claims[c]) for c in wanted]
    rankings = bm25.search(queries, pool_size + 10)
    groups: list[Group] = []
    for cid, ranking in zip(wanted, rankings, strict=True):
        pos = positives(dataset.qrels, cid)
        pool = tuple(p for p in ranking.passage_ids if p not in pos)[:pool_size]
        groups.extend(Group(claims[cid].text, p, pool) for p in pos if pool)
    return groups


# --- training --------------------------------------------------------------------------------


def train_network(
    groups: Sequence[Group],
    texts: Mapping[str, str],
    config: TrainConfig,
    say: Say,
    *,
    device: str = "cpu",
    backbone: str | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """Train adapters + head with listwise softmax cross-entropy; returns (network, tokenizer, log)."""
    import torch
    from transformers import AutoTokenizer

    from factscout.nn.backbone import backbone_path

    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    net_config = {k: getattr(config, k) for k in ("backbone", "rank", "alpha", "dropout", "targets", "init_scale")}
    if backbone is not None:
        net_config["backbone"] = backbone
    network = build_network(net_config).to(device)
    tokenizer = AutoTokenizer.from_pretrained(backbone_path(str(net_config["backbone"])))
    params = [p for p in network.parameters() if p.requires_grad]
    n_groups = round(config.epochs * len(groups))
    if config.max_train_groups is not None:
        n_groups = min(n_groups, config.max_train_groups)
    order: list[int] = []
    while len(order) < n_groups:
        order.extend(int(i) for i in rng.permutation(len(groups)))
    order = order[:n_groups]
    steps = math.ceil(n_groups / config.groups_per_step)
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.lr, weight_decay=config.weight_decay, steps=steps, warmup=config.warmup
    )
    network.train()
    losses: list[float] = []
    started = time.perf_counter()
    for step in range(steps):
        batch = [groups[i] for i in order[step * config.groups_per_step : (step + 1) * config.groups_per_step]]
        claims, passages = [], []
        for g in batch:
            k = min(config.negatives, len(g.pool))
            negs = [g.pool[int(i)] for i in sorted(rng.choice(len(g.pool), size=k, replace=False))]
            # pad short pools by repeating, so every group has the same width
            negs += [negs[i % len(negs)] for i in range(config.negatives - k)]
            for pid in (g.positive, *negs):
                claims.append(g.claim)
                passages.append(texts[pid])
        enc = encode_pairs(tokenizer, claims, passages, max_length=config.max_length)
        scores = network(**{k: v.to(device) for k, v in enc.items()}).view(len(batch), 1 + config.negatives)
        loss = torch.nn.functional.cross_entropy(scores, torch.zeros(len(batch), dtype=torch.long, device=device))
        optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
        losses.append(float(loss.detach()))
        if (step + 1) % 25 == 0 or step + 1 == steps:
            say(
                f"step {step + 1}/{steps} loss {np.mean(losses[-25:]):.4f} "
                f"({time.perf_counter() - started:.0f} s, scale {float(network.head_scale.detach()):.2f})"
            )
    network.eval()
    if device != "cpu":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    log = {
        "steps": steps,
        "groups": n_groups,
        "pairs": n_groups * (1 + config.negatives),
        "train_seconds": round(seconds, 1),
        "loss_first_25": round(float(np.mean(losses[:25])), 4),
        "loss_last_25": round(float(np.mean(losses[-25:])), 4),
        "trainable_parameters": int(sum(p.numel() for p in params)),
    }
    return network, tokenizer, log


# --- the stages ------------------------------------------------------------------------------
#
# prepare (needs the datasets and retrievers) -> fit (torch only) -> score (torch only) -> report
# (needs the evaluation library). ``run`` chains all four in one process; the stage flags of the
# CLI run one at a time through a bundle file, so that fit and score can run on another machine.


def prepare(config: TrainConfig, say: Say) -> dict[str, Any]:
    """Split the claims, build the BM25 negative pools and the first-stage rankings (a JSON bundle)."""
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_retriever

    dataset = load_dataset(config.dataset, "train")
    all_ids = [c.claim_id for c in dataset.claims]
    heldout_file_ids = read_heldout_ids()
    heldout = [c for c in all_ids if c in heldout_file_ids and positives(dataset.qrels, c)]
    if not heldout:
        raise InputError(f"{config.dataset}: none of its claims is in the held-out list {HELDOUT_FILE}")
    part = [c for c in all_ids if c not in heldout_file_ids]
    train_ids, dev_ids = split_dev(dataset.qrels, part, config.dev_fraction, config.seed)
    dev_ids = [c for c in dev_ids if positives(dataset.qrels, c)]
    say(f"{config.dataset}: {len(train_ids)} training claims, {len(dev_ids)} dev, {len(heldout)} held out")
    groups = training_groups(dataset, train_ids, config.negative_pool)
    say(f"{len(groups)} training groups; building the {config.first_stage} and bm25 first stages")
    first_stage = build_retriever(dataset.corpus, config.first_stage)
    bm25 = first_stage if config.first_stage == "bm25" else build_retriever(dataset.corpus, "bm25")
    claims = {c.claim_id: c for c in dataset.claims}

    def rankings(retriever: Any, ids: Sequence[str]) -> dict[str, list[list[Any]]]:
        found = retriever.search([Query.for_claim(claims[c]) for c in ids], 100)
        return {
            c: [[pid, float(s)] for pid, s in zip(r.passage_ids, r.scores().values(), strict=True)]
            for c, r in zip(ids, found, strict=True)
        }

    splits = {
        "dev": {"first": rankings(first_stage, dev_ids)},
        "heldout": {"first": rankings(first_stage, heldout), "bm25": rankings(bm25, heldout)},
    }
    used = {g.positive for g in groups} | {p for g in groups for p in g.pool}
    used |= {pid for split in splits.values() for rs in split.values() for r in rs.values() for pid, _ in r}
    return {
        "format": "factscout-rerank-bundle",
        "dataset": config.dataset,
        "claims": {c: claims[c].text for c in [*dev_ids, *heldout]},
        "dev_ids": dev_ids,
        "heldout_ids": heldout,
        "qrels": {c: dict(dataset.qrels[c]) for c in [*dev_ids, *heldout]},
        "groups": [[g.claim, g.positive, list(g.pool)] for g in groups],
        "splits": splits,
        "texts": {p.passage_id: p.contents for p in dataset.corpus if p.passage_id in used},
        "counts": {
            "train_claims": len(train_ids),
            "dev_claims": len(dev_ids),
            "heldout_claims": len(heldout),
            "train_groups": len(groups),
            "corpus": len(dataset.corpus),
        },
    }


def fit(
    bundle: Mapping[str, Any],
    config: TrainConfig,
    out: Path,
    say: Say,
    *,
    device: str = "cpu",
    backbone: str | None = None,
) -> Path:
    """Train on the bundle's groups and write the weights file (interpolation weight not yet tuned)."""
    groups = [Group(c, p, tuple(pool)) for c, p, pool in bundle["groups"]]
    network, tokenizer, train_log = train_network(
        groups, bundle["texts"], config, say, device=device, backbone=backbone
    )
    reranker = CrossEncoderReranker(network, tokenizer, max_length=config.max_length, device=device)
    reranker.info = {"trained_on": f"{config.dataset} train minus held-out claims", "seed": str(config.seed)}
    net_config = {k: getattr(config, k) for k in ("backbone", "rank", "alpha", "dropout", "init_scale")}
    out.mkdir(parents=True, exist_ok=True)
    file = out / MODEL_FILE.name
    reranker.save(
        file,
        interpolation=1.0,
        config={
            **net_config,
            "targets": list(config.targets),
            "train_config": {**asdict(config), "targets": list(config.targets), "sources": list(config.sources)},
            "train_log": {**train_log, "device": device},
        },
    )
    return file


def score(
    bundle: Mapping[str, Any],
    weights: Path,
    top_n: int,
    say: Say,
    *,
    splits: Sequence[str] = ("dev", "heldout"),
    device: str = "cpu",
    backbone: str | None = None,
) -> dict[str, np.ndarray]:
    """Cross-encoder scores of the top ``top_n`` first-stage hits, keyed ``split/claim_id``."""
    reranker = CrossEncoderReranker.load(weights, device=device, backbone=backbone)
    texts = bundle["texts"]
    out: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    for split in splits:
        for i, cid in enumerate(bundle[f"{split}_ids"], 1):
            head = [pid for pid, _ in bundle["splits"][split]["first"][cid][:top_n]]
            out[f"{split}/{cid}"] = reranker.score(bundle["claims"][cid], [texts[p] for p in head])
            if i % 25 == 0:
                say(f"{split}: scored {i}/{len(bundle[f'{split}_ids'])} claims ({time.perf_counter() - started:.0f} s)")
    return out


def _ranking(cid: str, pairs: Sequence[Sequence[Any]]) -> Ranking:
    return Ranking.from_sorted(cid, [p for p, _ in pairs], [float(s) for _, s in pairs], (cid,))


def reranked(
    rankings: Sequence[Ranking], scores: Sequence[np.ndarray], top_n: int, weight: float | None
) -> list[Ranking]:
    return [rerank_with_scores(r, s, top_n, weight) for r, s in zip(rankings, scores, strict=True)]


def tune_weight(
    rankings: Sequence[Ranking], scores: Sequence[np.ndarray], qrels: Mapping[str, Mapping[str, int]], top_n: int
) -> tuple[float, dict[str, float]]:
    """The cross-encoder weight in [0, 1] with the best mean nDCG@10 (ties: the larger weight)."""
    from factscout.evaluate import evaluate

    table = {
        str(w): evaluate(qrels, reranked(rankings, scores, top_n, w), ["nDCG@10"]).mean("nDCG@10") for w in WEIGHT_GRID
    }
    best = max(WEIGHT_GRID, key=lambda w: (round(table[str(w)], 6), w))
    return float(best), {k: round(v, 4) for k, v in table.items()}


def report(
    bundle: Mapping[str, Any],
    weights: Path,
    scores: Mapping[str, np.ndarray],
    out: Path,
    *,
    command: str,
    say: Say,
    total_seconds: float | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Tune the interpolation weight on dev, evaluate on the held-out claims, write card and metrics."""
    from factscout.evaluate import compare, evaluate

    with np.load(weights, allow_pickle=False) as data:
        arrays = {k: np.asarray(data[k]) for k in data}
    model_config = json.loads(str(arrays["config"]))
    cfg = model_config["train_config"]
    top_n, first_name = int(cfg["top_n"]), str(cfg["first_stage"])
    dev_ids, held_ids = bundle["dev_ids"], bundle["heldout_ids"]
    dev_first = [_ranking(c, bundle["splits"]["dev"]["first"][c]) for c in dev_ids]
    dev_scores = [scores[f"dev/{c}"] for c in dev_ids]
    dev_qrels = {c: bundle["qrels"][c] for c in dev_ids}
    weight, weight_table = tune_weight(dev_first, dev_scores, dev_qrels, top_n)
    dev_pure = evaluate(dev_qrels, reranked(dev_first, dev_scores, top_n, None), ["nDCG@10"]).mean("nDCG@10")
    dev_base = evaluate(dev_qrels, dev_first, ["nDCG@10"]).mean("nDCG@10")
    say(f"dev nDCG@10: {first_name} {dev_base:.4f}, re-ranked {dev_pure:.4f}; tuned weight {weight}")

    model_config["interpolation"] = weight
    arrays["config"] = np.array(json.dumps(model_config, sort_keys=True))
    out.mkdir(parents=True, exist_ok=True)
    weights_file = out / MODEL_FILE.name
    save_npz(weights_file, arrays)

    held_first = [_ranking(c, bundle["splits"]["heldout"]["first"][c]) for c in held_ids]
    held_scores = [scores[f"heldout/{c}"] for c in held_ids]
    qrels = {c: bundle["qrels"][c] for c in held_ids}
    runs = {
        "BM25": [_ranking(c, bundle["splits"]["heldout"]["bm25"][c]) for c in held_ids],
        first_name: held_first,
        f"{first_name} top-{top_n} re-ranked (cross-encoder only)": reranked(held_first, held_scores, top_n, None),
        f"{first_name} top-{top_n} re-ranked, interpolated (w={weight})": reranked(
            held_first, held_scores, top_n, weight
        ),
    }
    evaluations = {name: evaluate(qrels, rankings, list(MEASURES)) for name, rankings in runs.items()}
    table = {name: {m: round(e.mean(m), 4) for m in MEASURES} for name, e in evaluations.items()}
    tests = {}
    for name, e in list(evaluations.items())[2:]:
        cmp = compare(evaluations[first_name], e, "nDCG@10", seed=int(cfg["seed"]))
        tests[name] = {
            "delta": round(cmp.delta, 4),
            "t_test_p": round(cmp.t_test_p, 4),
            "randomization_p": round(cmp.randomization_p, 4),
        }
    for name, row in table.items():
        say(f"held-out {name}: " + ", ".join(f"{m} {v:.4f}" for m, v in row.items()))
    metrics = {
        "command": command,
        "config": cfg,
        "counts": bundle["counts"],
        "training": model_config["train_log"],
        "dev": {
            "first_stage_ndcg10": round(dev_base, 4),
            "reranked_ndcg10": round(dev_pure, 4),
            "weight": weight,
            "weight_grid_ndcg10": weight_table,
        },
        "heldout": table,
        "heldout_vs_first_stage_ndcg10": tests,
        "weights": {
            "file": weights_file.name,
            "bytes": weights_file.stat().st_size,
            "sha256": file_sha256(weights_file),
        },
        "total_seconds": None if total_seconds is None else round(total_seconds, 1),
        "note": note,
    }
    write_metrics(out / "metrics.json", metrics, indent=1)
    write_card(out / "MODEL_CARD.md", model_card(metrics))
    say(f"wrote {weights_file}, metrics.json and MODEL_CARD.md to {out}")
    return metrics


def run(out: Path, config: TrainConfig, *, say: Say, command: str) -> dict[str, Any]:
    """All four stages in one process, on the CPU."""
    import torch

    torch.set_num_threads(2)
    started = time.perf_counter()
    bundle = prepare(config, say)
    weights = fit(bundle, config, out, say)
    scores = score(bundle, weights, config.top_n, say)
    return report(bundle, weights, scores, out, command=command, say=say, total_seconds=time.perf_counter() - started)
