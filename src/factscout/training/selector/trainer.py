"""Train, evaluate and ship factscout's Quin+ BIO evidence tagger.

Usage (the shipped files were written by exactly this)::

    factscout train selector --out src/factscout/select/models

One reproducible CPU run with a fixed seed (``--quick``: a small smoke run, not for shipping):

1. **Data.** SciFact train claims (Wadden et al. 2020; claims CC BY 4.0, abstracts ODC-By 1.0)
   minus the 202 held-out claims of ``factscout/verify/models/scifact_heldout_ids.txt``. Every
   abstract a claim cites is one example: rationale sentences are tagged B I I ..., all other
   pieces O; abstracts cited by NEI claims (no rationale) are all-O examples.
2. **Features.** The frozen offline MiniLM reads ``claim [SEP] window of sentences`` (see
   :mod:`factscout.select.tagger`); states are cached under ``$FACTSCOUT_CACHE/tagger``.
3. **Model selection on the training part only.** One fold (20 %) of the training claims (whole
   claim groups, :func:`factscout.training.splits.folds_of`) is held back; the head trains on
   the rest and the epoch count and the decoding ``bias`` are picked for sentence F1 on that fold.
   The head is then retrained on the whole training part with those settings.
4. **Held-out evaluation.** Sentence- and token-level P/R/F1 on the cited abstracts of the
   held-out claims, against the Quin+ threshold selector with its threshold tuned on the
   training part (:func:`factscout.select.threshold.best_threshold`).

Writes ``bio_tagger_minilm.npz`` (fp16 head), ``MODEL_CARD.md`` and ``metrics.json`` to ``--out``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.nn.encoding import CachingEncoder
from factscout.records import Claim
from factscout.select.tagger import (
    MODEL_FILE,
    BioTagger,
    PreparedPassage,
    TaggedPassage,
    backbone_states,
    bio_tags,
    build_head,
    combine,
    head_probs,
    pad_batch,
    prepare,
    token_prf,
    window_features,
    window_tags,
)
from factscout.select.threshold import (
    PRF,
    ScoredAbstract,
    best_threshold,
    cross_validate_threshold,
    sentence_prf,
)
from factscout.training.base import described
from factscout.training.cards import licence_of, write_card, write_metrics
from factscout.training.loop import optimizer_step
from factscout.training.selector.card import model_card
from factscout.training.splits import SEED, folds_of, read_heldout_ids

log = logging.getLogger(__name__)

MAX_EPOCHS = 8
BIAS_GRID: tuple[float, ...] = tuple(round(-2.0 + 0.25 * i, 2) for i in range(17))  # -2 .. 2

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Hyper-parameters of the head (fixed before looking at held-out claims)."""

    seed: int = SEED
    proj: int = 64
    hidden: int = 64
    dropout: float = 0.2
    max_epochs: int = described(MAX_EPOCHS, "maximum epochs for model selection")
    lr: float = 2e-3
    weight_decay: float = 1e-4
    batch_size: int = 16


@dataclass(frozen=True, slots=True)
class Example:
    """One (claim, cited abstract) pair with its prepared windows and head inputs."""

    claim_id: str
    doc_id: str
    gold: frozenset[int]
    prepared: PreparedPassage
    cosines: tuple[float, ...]
    features: tuple[np.ndarray, ...]
    targets: tuple[np.ndarray, ...]


def cited_pairs(claims: Sequence[Claim]) -> list[tuple[Claim, str, frozenset[int]]]:
    """(claim, cited doc id, gold rationale sentence indices) for every abstract each claim cites."""
    out = []
    for c in claims:
        evidence = c.meta.get("evidence") or {}
        for doc_id in dict.fromkeys([*c.meta.get("cited_doc_ids", []), *evidence]):
            gold = frozenset(int(i) for ev in evidence.get(doc_id, []) for i in ev["sentences"])
            out.append((c, doc_id, gold))
    return out


def _states_cached(model: Any, windows: Sequence[Any], say: Say) -> list[np.ndarray]:
    from factscout.nn.backend import cache_dir

    digest = hashlib.sha256(b"bio-tagger-minilm-v1\0")
    for w in windows:
        digest.update(np.asarray(w.input_ids, dtype=np.int32).tobytes() + b"|")
    path = cache_dir() / "tagger" / f"{digest.hexdigest()}.npz"
    if path.is_file():
        try:
            with np.load(path) as data:
                flat, lengths = data["states"], data["lengths"]
            if len(lengths) == len(windows):
                say(f"backbone states of {len(windows)} windows read from {path}")
                return list(np.split(flat.astype(np.float32), np.cumsum(lengths)[:-1]))
        except (OSError, ValueError, KeyError):
            log.warning("ignoring unreadable tagger cache %s", path)
    t0 = time.perf_counter()
    states = backbone_states(model, windows)
    say(f"backbone over {len(windows)} windows: {time.perf_counter() - t0:.0f} s")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.savez(f, states=np.concatenate(states).astype(np.float16), lengths=np.array([len(s) for s in states]))
    return states


def build_examples(
    pairs: Sequence[tuple[Claim, str, frozenset[int]]],
    abstracts: Mapping[str, Sequence[str]],
    encoder: Any,
    say: Say,
) -> list[Example]:
    """Tokenise, window, run the backbone (cached) and build head inputs for every pair."""
    model = encoder.model
    texts = list(dict.fromkeys([c.text for c, _, _ in pairs] + [s for _, d, _ in pairs for s in abstracts[d]]))
    encode = encoder.encode_cached if isinstance(encoder, CachingEncoder) else encoder.encode
    vectors = np.asarray(encode(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {t: i for i, t in enumerate(texts)}
    prepared = [prepare(model.tokenizer, c.text, abstracts[d]) for c, d, _ in pairs]
    windows = [w for p in prepared for w in p.windows]
    states = _states_cached(model, windows, say)
    out, k = [], 0
    for (c, d, gold), prep in zip(pairs, prepared, strict=True):
        sents = abstracts[d]
        cos = vectors[[row[s] for s in sents]] @ vectors[row[c.text]] if sents else np.zeros(0)
        feats = tuple(window_features(states[k + j], w, cos).astype(np.float16) for j, w in enumerate(prep.windows))
        targets = tuple(window_tags(w, gold) for w in prep.windows)
        k += len(prep.windows)
        out.append(Example(c.claim_id, d, gold, prep, tuple(float(x) for x in cos), feats, targets))
    return out


# --- training ---------------------------------------------------------------------------------------------


def train_head(
    examples: Sequence[Example],
    config: TrainConfig,
    *,
    epochs: int,
    on_epoch: Callable[[int, Any], None] | None = None,
) -> Any:
    """Train a fresh head on the windows of ``examples`` (cross-entropy, Adam, seeded)."""
    import torch

    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    head = build_head(proj=config.proj, hidden=config.hidden, dropout=config.dropout)
    opt = torch.optim.Adam(head.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    items = [(f, t) for e in examples for f, t in zip(e.features, e.targets, strict=True) if len(t)]
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-1)
    for epoch in range(1, epochs + 1):
        head.train()
        rng.shuffle(items)
        # batches of similar length (shuffled buckets) keep padding small
        buckets = sorted(range(len(items)), key=lambda i: (len(items[i][1]), rng.random()))
        batches = [buckets[s : s + config.batch_size] for s in range(0, len(buckets), config.batch_size)]
        rng.shuffle(batches)
        for batch in batches:
            x, lengths = pad_batch([items[i][0].astype(np.float32) for i in batch])
            y = torch.full(x.shape[:2], -1, dtype=torch.int64)
            for r, i in enumerate(batch):
                y[r, : len(items[i][1])] = torch.from_numpy(items[i][1])
            logits = head(x, lengths)
            loss = loss_fn(logits.reshape(-1, 3), y.reshape(-1))
            optimizer_step(loss, opt, clip=head.parameters(), max_norm=5.0)
        if on_epoch is not None:
            on_epoch(epoch, head)
    head.eval()
    return head


def predict(head: Any, examples: Sequence[Example], bias: float) -> list[TaggedPassage]:
    probs = head_probs(head, [f.astype(np.float32) for e in examples for f in e.features])
    out, k = [], 0
    for e in examples:
        n = len(e.prepared.windows)
        out.append(combine(e.prepared, probs[k : k + n], bias))
        k += n
    return out


def predict_probs(head: Any, examples: Sequence[Example]) -> list[list[np.ndarray]]:
    probs = head_probs(head, [f.astype(np.float32) for e in examples for f in e.features])
    out, k = [], 0
    for e in examples:
        n = len(e.prepared.windows)
        out.append(probs[k : k + n])
        k += n
    return out


@dataclass(frozen=True, slots=True)
class Scores:
    sentence: PRF
    token: PRF
    n_selected: int


def score_tagged(examples: Sequence[Example], tagged: Sequence[TaggedPassage]) -> Scores:
    pred = [(e.claim_id, e.doc_id, i) for e, t in zip(examples, tagged, strict=True) for i in t.selected]
    gold = [(e.claim_id, e.doc_id, i) for e in examples for i in e.gold]
    p_tags = [seq for t in tagged for seq in t.tags]
    g_tags = [seq for e in examples for seq in bio_tags(e.prepared.full_lengths, e.gold)]
    return Scores(sentence_prf(pred, gold), token_prf(p_tags, g_tags), len(pred))


def score_selection(examples: Sequence[Example], selected: Sequence[Sequence[int]]) -> Scores:
    """Scores of a sentence selection (e.g. the threshold selector's): token level counts every
    piece of a selected sentence as evidence."""
    pred = [(e.claim_id, e.doc_id, i) for e, sel in zip(examples, selected, strict=True) for i in sel]
    gold = [(e.claim_id, e.doc_id, i) for e in examples for i in e.gold]
    p_tags = [seq for e, sel in zip(examples, selected, strict=True) for seq in bio_tags(e.prepared.full_lengths, sel)]
    g_tags = [seq for e in examples for seq in bio_tags(e.prepared.full_lengths, e.gold)]
    return Scores(sentence_prf(pred, gold), token_prf(p_tags, g_tags), len(pred))


def best_bias(examples: Sequence[Example], probs: Sequence[Sequence[np.ndarray]]) -> tuple[float, float]:
    """(bias, sentence F1) of the grid bias with the best sentence F1 (ties: the bias nearest 0)."""
    best = (0.0, -1.0)
    for b in sorted(BIAS_GRID, key=abs):
        tagged = [combine(e.prepared, p, b) for e, p in zip(examples, probs, strict=True)]
        f1 = score_tagged(examples, tagged).sentence.f1
        if f1 > best[1] + 1e-12:
            best = (b, f1)
    return best


def threshold_scored(examples: Sequence[Example], *, with_evidence_only: bool) -> list[ScoredAbstract]:
    by_claim: dict[str, bool] = {}
    for e in examples:
        by_claim[e.claim_id] = by_claim.get(e.claim_id, False) or bool(e.gold)
    return [
        ScoredAbstract(e.claim_id, e.doc_id, e.cosines, e.gold)
        for e in examples
        if by_claim[e.claim_id] or not with_evidence_only
    ]


# --- the run ----------------------------------------------------------------------------------------------


def _prf(p: PRF) -> dict[str, float]:
    return {"precision": round(p.precision, 4), "recall": round(p.recall, 4), "f1": round(p.f1, 4)}


def run(out: Path, *, quick: bool = False, config: TrainConfig | None = None, say: Say = print) -> dict[str, Any]:
    from factscout.datasets import load_abstract_sentences, load_dataset
    from factscout.hashing import file_sha256
    from factscout.text.encoder import Encoder

    config = config or TrainConfig(max_epochs=3 if quick else MAX_EPOCHS)
    t_start = time.perf_counter()
    random.seed(config.seed)
    np.random.seed(config.seed)
    import torch

    torch.manual_seed(config.seed)

    claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    held_ids = read_heldout_ids()
    train_claims = [c for c in claims if c.claim_id not in held_ids]
    held_claims = [c for c in claims if c.claim_id in held_ids]
    if quick:
        train_claims, held_claims = train_claims[:120], held_claims[:40]
    say(f"claims: {len(train_claims)} training part, {len(held_claims)} held-out")

    encoder = Encoder()
    train_ex = build_examples(cited_pairs(train_claims), abstracts, encoder, say)
    held_ex = build_examples(cited_pairs(held_claims), abstracts, encoder, say)
    t_features = time.perf_counter() - t_start

    # model selection on one fold of the training part
    folds = folds_of(train_claims, 5, config.seed)
    val_ids = {c.claim_id for c in folds[0]}
    fit_ex = [e for e in train_ex if e.claim_id not in val_ids]
    val_ex = [e for e in train_ex if e.claim_id in val_ids]
    curve: list[dict[str, float]] = []

    def on_epoch(epoch: int, head: Any) -> None:
        b, f1 = best_bias(val_ex, predict_probs(head, val_ex))
        curve.append({"epoch": epoch, "bias": b, "val_sentence_f1": round(f1, 4)})
        say(f"  epoch {epoch}: validation sentence F1 {f1:.4f} at bias {b}")

    t0 = time.perf_counter()
    train_head(fit_ex, config, epochs=config.max_epochs, on_epoch=on_epoch)
    best = max(curve, key=lambda r: (r["val_sentence_f1"], -r["epoch"]))
    epochs, bias = int(best["epoch"]), float(best["bias"])
    say(f"selected: {epochs} epochs, bias {bias} (validation sentence F1 {best['val_sentence_f1']})")
    head = train_head(train_ex, config, epochs=epochs)
    t_train = time.perf_counter() - t0

    # held-out evaluation
    tagger_held = score_tagged(held_ex, predict(head, held_ex, bias))
    tagger_train = score_tagged(train_ex, predict(head, train_ex, bias))
    train_scored = threshold_scored(train_ex, with_evidence_only=True)
    fit = best_threshold(train_scored)
    cv = cross_validate_threshold(train_scored, seed=config.seed)

    def thr_sel(examples: Sequence[Example]) -> list[list[int]]:
        return [[i for i, s in enumerate(e.cosines) if s >= fit.threshold] for e in examples]

    ev_claims = {a.claim_id for a in threshold_scored(held_ex, with_evidence_only=True)}
    held_evid = [e for e in held_ex if e.claim_id in ev_claims]
    tables = {
        "heldout_claims_with_evidence": {
            "abstracts": len(held_evid),
            "tagger": score_tagged(held_evid, predict(head, held_evid, bias)),
            "threshold": score_selection(held_evid, thr_sel(held_evid)),
        },
        "heldout_all_cited_abstracts": {
            "abstracts": len(held_ex),
            "tagger": tagger_held,
            "threshold": score_selection(held_ex, thr_sel(held_ex)),
        },
    }

    info = {
        "trained": dt.date.today().isoformat(),
        "seed": str(config.seed),
        "epochs": str(epochs),
        "data": "SciFact train minus scifact_heldout_ids.txt",
        "quick": str(quick),
    }
    out.mkdir(parents=True, exist_ok=True)
    tagger = BioTagger(head, bias=bias, info=info)
    weights = tagger.save(out / MODEL_FILE.name)
    total = time.perf_counter() - t_start
    command = "factscout train selector --out " + str(out) + (" --quick" if quick else "")
    n_params = sum(int(p.numel()) for p in head.parameters())
    gold_counts = {
        "training_part": _counts(train_ex),
        "heldout": _counts(held_ex),
        "validation_fold": _counts(val_ex),
    }
    metrics: dict[str, Any] = {
        "command": command,
        "config": asdict(config),
        "selected": {"epochs": epochs, "bias": bias},
        "validation_curve": curve,
        "data": {
            "source": "SciFact train (Wadden et al. 2020)",
            "licence": f"SciFact: {licence_of('scifact')}",
            "counts": gold_counts,
        },
        "weights": {
            "file": weights.name,
            "bytes": weights.stat().st_size,
            "sha256": file_sha256(weights),
            "parameters": n_params,
            "dtype": "float16",
        },
        "timing_s": {"features": round(t_features, 1), "training": round(t_train, 1), "total": round(total, 1)},
        "threshold": {
            "tuned_on_training_part": fit.threshold,
            "training_part_f1": round(fit.f1, 4),
            "training_part_cv_thresholds": list(cv.thresholds),
            "training_part_cv_f1": [round(x, 4) for x in cv.f1],
        },
        "tagger_training_part": {"sentence": _prf(tagger_train.sentence), "token": _prf(tagger_train.token)},
        "heldout": {
            name: {
                "abstracts": t["abstracts"],
                **{
                    m: {"sentence": _prf(s.sentence), "token": _prf(s.token), "selected": s.n_selected}
                    for m, s in t.items()
                    if isinstance(s, Scores)
                },
            }
            for name, t in tables.items()
        },
    }
    write_metrics(out / "metrics.json", metrics)
    write_card(out / "MODEL_CARD.md", model_card(metrics))
    say(f"wrote {weights} ({weights.stat().st_size:,} bytes), metrics.json, MODEL_CARD.md in {total:.0f} s")
    return metrics


def _counts(examples: Sequence[Example]) -> dict[str, int]:
    return {
        "claims": len({e.claim_id for e in examples}),
        "abstracts": len(examples),
        "all_O_abstracts": sum(not e.gold for e in examples),
        "sentences": sum(len(e.prepared.full_lengths) for e in examples),
        "rationale_sentences": sum(len(e.gold) for e in examples),
        "windows": sum(len(e.prepared.windows) for e in examples),
    }


# --- the relevance selector's setting (chosen on the training part) --------------------------------------

COSINE_WEIGHTS: tuple[float, ...] = (0.0, 5.0, 10.0, 20.0, 40.0, 80.0)
MIN_COSINES: tuple[float, ...] = (-1.0, 0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True, slots=True)
class RelevanceFit:
    """A relevance-selector setting and the micro sentence P/R/F1 it reaches where it was chosen."""

    threshold: float
    cosine_weight: float
    min_cosine: float
    precision: float
    recall: float
    f1: float


def best_relevance_setting(
    relevance: np.ndarray,
    cosine: np.ndarray,
    gold: np.ndarray,
    *,
    cosine_weights: Sequence[float] = COSINE_WEIGHTS,
    min_cosines: Sequence[float] = MIN_COSINES,
) -> RelevanceFit:
    """The setting of :class:`~factscout.select.relevance.RelevanceSelector` with the highest micro
    sentence F1 over sentences given as parallel arrays (cross-encoder score, cosine, is-rationale).

    For every ``cosine_weight`` x ``min_cosine`` of the grids, every cut between two distinct
    combined scores is tried (the threshold is midway between the last kept and the first dropped score); ties keep the first in grid
    order (smaller weight, no cosine floor first), so the cosine enters only when it helps.
    """
    rel = np.asarray(relevance, dtype=np.float64)
    cos = np.asarray(cosine, dtype=np.float64)
    is_gold = np.asarray(gold, dtype=bool)
    if not (rel.shape == cos.shape == is_gold.shape) or rel.ndim != 1:
        raise ValueError(f"parallel 1-d arrays expected, got {rel.shape}, {cos.shape}, {is_gold.shape}")
    n_gold = int(is_gold.sum())
    if not n_gold:
        raise ValueError("choosing a relevance setting needs at least one rationale sentence")
    best: RelevanceFit | None = None
    for weight in cosine_weights:
        combined = rel + weight * cos
        for floor in min_cosines:
            allowed = cos >= floor
            scores, hits = combined[allowed], is_gold[allowed]
            if not len(scores):
                continue
            order = np.argsort(-scores, kind="stable")
            s, tp = scores[order], np.cumsum(hits[order])
            last = np.r_[s[1:] != s[:-1], True]  # cut after the last of a run of equal scores
            k = np.flatnonzero(last)
            n_pred = k + 1
            prec, rec = tp[k] / n_pred, tp[k] / n_gold
            f1 = np.where(prec + rec > 0, 2 * prec * rec / np.maximum(prec + rec, 1e-12), 0.0)
            j = int(np.argmax(f1))
            if best is None or f1[j] > best.f1 + 1e-12:
                cut = float(s[k[j]]) if k[j] + 1 == len(s) else float(s[k[j]] + s[k[j] + 1]) / 2
                best = RelevanceFit(cut, float(weight), float(floor), float(prec[j]), float(rec[j]), float(f1[j]))
    if best is None:
        raise ValueError("no sentence passes any cosine floor of the grid")
    return best
