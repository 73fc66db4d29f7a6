"""Evidence-sentence selection on held-out SciFact: threshold vs BIO tagger vs relevance selectors.

Usage::

    python benchmarks/selection.py                      # score the shipped settings
    python benchmarks/selection.py --write-setting      # also (re)write select/models/relevance.json
    python benchmarks/selection.py --write-stance-setting   # also (re)write select/models/stance_relevance.json
    python benchmarks/selection.py --claims C.jsonl [--corpus D.jsonl]   # another SciFact-format split

Scored as in the selector's model card (``factscout train selector``; the same functions of
:mod:`factscout.training.selector.trainer`): micro sentence- and token-level P/R/F1 against the SciFact
rationale sentences of the cited abstracts of the 202 held-out claims
(``verify/models/scifact_heldout_ids.txt``), over the claims that have evidence and over all
cited abstracts. Every setting is chosen on the training part (SciFact train minus those claims):

- **threshold**: cosine >= the threshold with the best sentence F1 on the training part
  (:func:`factscout.select.threshold.best_threshold`, as the card does);
- **bio**: the shipped BIO tagger with its stored decoding bias;
- **relevance**: the shipped ``select/models/relevance.json`` (``--write-setting`` chooses it here
  with :func:`factscout.training.selector.trainer.best_relevance_setting` on the training part, claims with
  evidence, and writes it); the row "cross-encoder alone" is the same choice with no cosine term;
- **stance-relevance**: the shipped ``select/models/stance_relevance.json`` over the stance
  cross-encoder's ``1 - P(not enough info)`` (``--write-stance-setting`` chooses it with the same
  function, its own cosine-weight grid, on the **92 dev claims** of the stance model's split only:
  the model was trained on the other 515 training-part claims, where its scores are fitted); the
  row "stance model alone" is the same dev choice with no cosine term.

The cross-encoder was trained for claim -> abstract relevance on the same training part, so its
training-part scores are fitted ones; the held-out claims were never seen by any of them.

Latency: the threshold and relevance selectors' ``select`` over held-out abstracts (claim and
sentences embedded fresh, no cache; torch limited to 2 threads), per (claim, sentence) pair.
The stance-relevance selector's scores stay in the stance model's cache, so ``check --stance
cross`` after it does not score the kept sentences again: its cost replaces that of the stance step
on those sentences.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine, markdown_table, publish, quiet, write_predictions

from factscout.datasets import load_abstract_sentences, load_dataset
from factscout.records import Claim
from factscout.select.relevance import SETTING_FILE, RelevanceSelector, RelevanceSetting, read_setting, write_setting
from factscout.select.stance_relevance import STANCE_SETTING_FILE, StanceRelevance
from factscout.select.tagger import BioTagger
from factscout.select.threshold import ThresholdSelector, best_threshold, score_abstracts
from factscout.text.encoder import Encoder
from factscout.training.selector.trainer import (
    Example,
    Scores,
    best_relevance_setting,
    build_examples,
    cited_pairs,
    predict,
    score_selection,
    score_tagged,
    threshold_scored,
)
from factscout.training.splits import HELDOUT_FILE, read_heldout_ids, split_scifact
from factscout.training.stance.cross import CrossConfig

# cosine weights for the stance score, a probability in [0, 1] (the re-ranker's grid is for its logit scale)
STANCE_COSINE_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)


def relevance_scores(reranker: Any, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[np.ndarray]:
    """Cross-encoder score of every (claim, sentence) pair, one array per (claim, abstract);
    ``reranker``: a re-ranker (``score_pairs``) or a relevance scorer (``relevance``)."""
    claims = [c for c, sents in pairs for _ in sents]
    texts = [s for _, sents in pairs for s in sents]
    score = getattr(reranker, "relevance", None) or reranker.score_pairs
    flat = np.asarray(score(claims, texts), dtype=np.float64) if texts else np.zeros(0)
    out, k = [], 0
    for _, sents in pairs:
        out.append(flat[k : k + len(sents)])
        k += len(sents)
    return out


def reranker_dev_check(
    claims: Sequence[Claim], scored: Sequence[Any], rel: np.ndarray, cos: np.ndarray, gold: np.ndarray
) -> dict[str, Any]:
    """Best training-time F1 of cosine alone, cross-encoder alone and the grid, each chosen *on*
    the re-ranker's dev claims (a tenth of the training part it never trained on): what the
    cross-encoder adds where its scores are not fitted. A diagnostic, not a held-out figure."""
    from factscout.training.rerank.trainer import TrainConfig
    from factscout.training.splits import split_dev

    qrels = load_dataset("scifact", "train").qrels
    config = TrainConfig()
    _, dev = split_dev(qrels, [c.claim_id for c in claims], config.dev_fraction, config.seed)
    dev_ids = set(dev)
    mask = np.concatenate([[a.claim_id in dev_ids] * len(a.scores) for a in scored]).astype(bool)
    if not gold[mask].any():
        return {}
    r, c, y = rel[mask], cos[mask], gold[mask]
    fits = {
        "cosine alone": best_relevance_setting(c, np.zeros_like(c), y, cosine_weights=(0.0,), min_cosines=(-1.0,)),
        "cross-encoder alone": best_relevance_setting(r, c, y, cosine_weights=(0.0,), min_cosines=(-1.0,)),
        "cross-encoder + cosine (grid)": best_relevance_setting(r, c, y),
    }
    return {"claims": len({a.claim_id for a in scored if a.claim_id in dev_ids}), "sentences": int(mask.sum()), **fits}


def stance_dev_ids(train_claims: Sequence[Claim]) -> set[str]:
    """The stance cross-encoder's dev claims: its trainer splits the training part again
    (``training.stance_cross_config.scifact_parts``: dev_fraction, seed + 1); it never trained on them."""
    config = CrossConfig()
    _, dev = split_scifact(train_claims, heldout_fraction=config.dev_fraction, seed=config.seed + 1)
    return {c.claim_id for c in dev}


def prf_row(name: str, s: Scores) -> list[object]:
    return [
        name,
        s.sentence.precision,
        s.sentence.recall,
        s.sentence.f1,
        s.token.precision,
        s.token.recall,
        s.token.f1,
        s.n_selected,
    ]


def latency(
    claims: dict[str, Claim],
    examples: Sequence[Example],
    abstracts: dict[str, list[str]],
    n: int,
    stance_setting: RelevanceSetting | None,
) -> dict:
    """Seconds per (claim, sentence) pair of each selector's ``select`` on the first ``n`` abstracts
    (the stance model's prediction cache is emptied after the warm-up)."""
    from factscout.rerank.cross_encoder import CrossEncoderReranker
    from factscout.select.base import default_encoder
    from factscout.verify.cross_stance import CrossStanceModel

    encoder = default_encoder("threshold")  # what check uses for the threshold selector
    setting = read_setting()
    selectors = {
        "threshold": ThresholdSelector(encoder=encoder),
        "relevance": RelevanceSelector(setting, reranker=CrossEncoderReranker.load(), encoder=encoder),
    }
    stance_model = None
    if stance_setting is not None:
        stance_model = CrossStanceModel.load()
        scorer = StanceRelevance(stance_model)
        selectors["stance-relevance"] = RelevanceSelector(stance_setting, scorer=scorer, encoder=encoder)
    work = [(claims[e.claim_id].text, e.doc_id, abstracts[e.doc_id]) for e in examples[:n]]
    pairs = sum(len(s) for _, _, s in work)
    out: dict[str, Any] = {"abstracts": len(work), "pairs": pairs, "encoder": type(encoder).__name__}
    for name, sel in selectors.items():
        sel.select(*work[0])  # warm-up: model loading is not per-pair cost
        if stance_model is not None:
            stance_model.clear_cache()
        per_abstract = []
        t0 = time.perf_counter()
        for claim_text, doc_id, sents in work:
            t = time.perf_counter()
            sel.select(claim_text, doc_id, sents)
            per_abstract.append(time.perf_counter() - t)
        total = time.perf_counter() - t0
        out[name] = {
            "ms_per_pair": round(1000 * total / pairs, 3),
            "p50_ms_per_abstract": round(1000 * statistics.median(per_abstract), 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claims", help="SciFact-format claims JSONL to score on instead of the held-out claims")
    parser.add_argument("--corpus", help="SciFact-format corpus JSONL for --claims (default: the SciFact corpus)")
    parser.add_argument("--write-setting", action="store_true", help=f"choose and write {SETTING_FILE.name}")
    parser.add_argument(
        "--write-stance-setting",
        action="store_true",
        help=f"choose {STANCE_SETTING_FILE.name} on the stance model's dev claims and write it",
    )
    parser.add_argument("--latency-abstracts", type=int, default=60, help="held-out abstracts timed (0: none)")
    parser.add_argument("--limit", type=int, default=0, help="smoke run: first N claims of each part")
    args = parser.parse_args()
    quiet()
    import torch

    torch.set_num_threads(2)
    from rich.console import Console

    console = Console(stderr=True)
    say = console.log
    t_start = time.perf_counter()

    # -- data ----------------------------------------------------------------------------------
    all_claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    held_ids = read_heldout_ids()
    train_claims = [c for c in all_claims if c.claim_id not in held_ids]
    dev_claims = [c for c in train_claims if c.claim_id in stance_dev_ids(train_claims)]
    if args.claims:
        from stance import read_split

        eval_claims, eval_abstracts = read_split(args.claims, args.corpus)
        eval_name = Path(args.claims).name
    else:
        eval_claims, eval_abstracts = [c for c in all_claims if c.claim_id in held_ids], abstracts
        eval_name = f"held-out SciFact train claims ({HELDOUT_FILE.name})"
    if args.limit:
        train_claims, eval_claims = train_claims[: args.limit], eval_claims[: args.limit]
        dev_claims = dev_claims[: args.limit]
    say(f"{len(train_claims)} training-part claims, {len(eval_claims)} evaluation claims ({eval_name})")

    encoder = Encoder()
    from factscout.rerank.cross_encoder import CrossEncoderReranker

    reranker = CrossEncoderReranker.load()

    # -- training part: cosines and cross-encoder scores, settings chosen there -------------------
    train_scored = score_abstracts(train_claims, abstracts, encoder=encoder)  # claims with evidence
    text = {c.claim_id: c.text for c in train_claims}
    t0 = time.perf_counter()
    train_rel = relevance_scores(reranker, [(text[a.claim_id], abstracts[a.doc_id]) for a in train_scored])
    say(f"cross-encoder over {sum(map(len, train_rel))} training-part pairs: {time.perf_counter() - t0:.0f} s")
    thr = best_threshold(train_scored)
    rel_flat = np.concatenate(train_rel)
    cos_flat = np.concatenate([np.asarray(a.scores) for a in train_scored])
    gold_flat = np.concatenate([[i in a.gold for i in range(len(a.scores))] for a in train_scored]).astype(bool)
    fit = best_relevance_setting(rel_flat, cos_flat, gold_flat)
    fit_alone = best_relevance_setting(rel_flat, cos_flat, gold_flat, cosine_weights=(0.0,), min_cosines=(-1.0,))
    say(f"threshold {thr.threshold} (train F1 {thr.f1:.4f}); relevance {fit} ; alone {fit_alone}")
    dev_check = reranker_dev_check(train_claims, train_scored, rel_flat, cos_flat, gold_flat)
    if args.write_setting:
        if args.claims or args.limit:
            parser.error("--write-setting chooses on the full training part: not with --claims or --limit")
        write_setting(
            SETTING_FILE,
            RelevanceSetting(fit.threshold, fit.cosine_weight, fit.min_cosine),
            {
                "chosen_on": "SciFact train minus scifact_heldout_ids.txt, claims with evidence, all sentences "
                "of their cited abstracts (micro sentence F1, factscout.training.selector.trainer.best_relevance_setting)",
                "training_part": {
                    "claims": len({a.claim_id for a in train_scored}),
                    "abstracts": len(train_scored),
                    "sentences": len(rel_flat),
                    "precision": round(fit.precision, 4),
                    "recall": round(fit.recall, 4),
                    "f1": round(fit.f1, 4),
                },
                "scorer": "factscout.rerank.cross_encoder (reranker_minilm_lora.npz); cosine: all-MiniLM-L6-v2 fp32",
                "command": "python benchmarks/selection.py --write-setting",
            },
        )
        say(f"wrote {SETTING_FILE}")
    shipped = read_setting()

    # -- the stance model's dev claims: the stance-relevance setting is chosen there --------------
    from factscout.verify.cross_stance import CrossStanceModel

    stance_scorer = StanceRelevance(CrossStanceModel.load())
    dev_scored = score_abstracts(dev_claims, abstracts, encoder=encoder)  # claims with evidence
    dtext = {c.claim_id: c.text for c in dev_claims}
    t0 = time.perf_counter()
    dev_rel = relevance_scores(stance_scorer, [(dtext[a.claim_id], abstracts[a.doc_id]) for a in dev_scored])
    say(f"stance model over {sum(map(len, dev_rel))} dev pairs: {time.perf_counter() - t0:.0f} s")
    dev_flat = np.concatenate(dev_rel)
    dev_cos = np.concatenate([np.asarray(a.scores) for a in dev_scored])
    dev_gold = np.concatenate([[i in a.gold for i in range(len(a.scores))] for a in dev_scored]).astype(bool)
    stance_fit = best_relevance_setting(dev_flat, dev_cos, dev_gold, cosine_weights=STANCE_COSINE_WEIGHTS)
    stance_alone = best_relevance_setting(dev_flat, dev_cos, dev_gold, cosine_weights=(0.0,), min_cosines=(-1.0,))
    dev_thr = best_threshold(dev_scored)
    say(f"stance-relevance on dev {stance_fit}; alone {stance_alone}; threshold on dev {dev_thr.threshold}")
    if args.write_stance_setting:
        if args.claims or args.limit:
            parser.error("--write-stance-setting chooses on the full dev part: not with --claims or --limit")
        write_setting(
            STANCE_SETTING_FILE,
            RelevanceSetting(stance_fit.threshold, stance_fit.cosine_weight, stance_fit.min_cosine, scorer="stance"),
            {
                "chosen_on": "the stance cross-encoder's 92 dev claims (training.stance_cross: split_scifact of the "
                "training part, dev_fraction 0.15, seed 14; never trained on), claims with evidence, all sentences "
                "of their cited abstracts (micro sentence F1, factscout.training.selector.trainer.best_relevance_setting, "
                f"cosine weights {list(STANCE_COSINE_WEIGHTS)})",
                "dev_part": {
                    "claims": len({a.claim_id for a in dev_scored}),
                    "abstracts": len(dev_scored),
                    "sentences": len(dev_flat),
                    "precision": round(stance_fit.precision, 4),
                    "recall": round(stance_fit.recall, 4),
                    "f1": round(stance_fit.f1, 4),
                },
                "relevance": "1 - P(not enough info) of factscout.verify.cross_stance (stance_cross_minilm.npz); "
                "cosine: all-MiniLM-L6-v2 fp32",
                "command": "python benchmarks/selection.py --write-stance-setting",
            },
        )
        say(f"wrote {STANCE_SETTING_FILE}")
    stance_shipped = read_setting(STANCE_SETTING_FILE, scorer="stance") if STANCE_SETTING_FILE.is_file() else None

    # -- evaluation part ------------------------------------------------------------------------
    held_ex = build_examples(cited_pairs(eval_claims), eval_abstracts, encoder, say)
    etext = {c.claim_id: c.text for c in eval_claims}
    t0 = time.perf_counter()
    held_rel = relevance_scores(reranker, [(etext[e.claim_id], eval_abstracts[e.doc_id]) for e in held_ex])
    say(f"cross-encoder over {sum(map(len, held_rel))} evaluation pairs: {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    held_stance = relevance_scores(stance_scorer, [(etext[e.claim_id], eval_abstracts[e.doc_id]) for e in held_ex])
    say(f"stance model over {sum(map(len, held_stance))} evaluation pairs: {time.perf_counter() - t0:.0f} s")
    tagger = BioTagger.load(encoder=encoder)
    tagged = predict(tagger.head, held_ex, tagger.bias)
    ev_claims = {a.claim_id for a in threshold_scored(held_ex, with_evidence_only=True)}

    def rel_select(setting: RelevanceSetting, idx: Sequence[int]) -> list[list[int]]:
        scores = held_stance if setting.scorer == "stance" else held_rel
        return [[int(i) for i in np.flatnonzero(setting.keep(scores[k], np.asarray(held_ex[k].cosines)))] for k in idx]

    settings = {
        f"relevance (shipped: CE + {shipped.cosine_weight:g} cos >= {shipped.threshold:.3f}, "
        f"cos >= {shipped.min_cosine:g})": shipped,
        f"cross-encoder alone (>= {fit_alone.threshold:.3f}, chosen on training part)": RelevanceSetting(
            fit_alone.threshold
        ),
    }
    if stance_shipped is not None:
        settings[
            f"stance-relevance (shipped: 1-P(NEI) + {stance_shipped.cosine_weight:g} cos >= "
            f"{stance_shipped.threshold:.3f}, cos >= {stance_shipped.min_cosine:g})"
        ] = stance_shipped
    settings[f"stance model alone (1-P(NEI) >= {stance_alone.threshold:.3f}, chosen on dev)"] = RelevanceSetting(
        stance_alone.threshold, scorer="stance"
    )
    tables: dict[str, dict[str, Scores]] = {}
    counts: dict[str, int] = {}
    for part, keep in (
        ("claims with evidence", lambda e: e.claim_id in ev_claims),
        ("all cited abstracts", lambda e: True),
    ):
        idx = [k for k, e in enumerate(held_ex) if keep(e)]
        sub = [held_ex[k] for k in idx]
        counts[part] = len(sub)

        def scored(name: str, selected: list[list[int]], sub: list[Example] = sub, part: str = part) -> Scores:
            if part == "all cited abstracts":  # run file: the sentences each selector kept, every abstract
                write_predictions(
                    "selection",
                    name,
                    (
                        {"claim_id": e.claim_id, "doc_id": e.doc_id, "gold": sorted(e.gold), "selected": chosen}
                        for e, chosen in zip(sub, selected, strict=True)
                    ),
                )
            return score_selection(sub, selected)

        rows = {
            f"threshold (cos >= {thr.threshold:g}, chosen on training part)": scored(
                f"threshold (cos >= {thr.threshold:g})",
                [[i for i, s in enumerate(e.cosines) if s >= thr.threshold] for e in sub],
            ),
            f"threshold (cos >= {dev_thr.threshold:g}, chosen on the stance dev claims)": scored(
                f"threshold (cos >= {dev_thr.threshold:g}, dev)",
                [[i for i, s in enumerate(e.cosines) if s >= dev_thr.threshold] for e in sub],
            ),
            "bio tagger (shipped)": score_tagged(sub, [tagged[k] for k in idx]),
        }
        rows.update({name: scored(name, rel_select(s, idx)) for name, s in settings.items()})
        tables[part] = rows

    lat = (
        latency({c.claim_id: c for c in eval_claims}, held_ex, eval_abstracts, args.latency_abstracts, stance_shipped)
        if (args.latency_abstracts)
        else None
    )

    # -- report ---------------------------------------------------------------------------------
    header = ["selector", "sent. P", "sent. R", "sent. F1", "token P", "token R", "token F1", "selected"]
    parts = [
        "# Evidence-sentence selection (SciFact rationales)",
        "",
        f"Evaluation: {eval_name}; {len(eval_claims)} claims. Settings chosen on the training part "
        f"({len({a.claim_id for a in train_scored})} claims with evidence, {len(train_scored)} abstracts, "
        f"{len(rel_flat):,} sentences). Scoring as in `select/models/MODEL_CARD.md` "
        "(`factscout.training.selector.trainer.score_selection` / `score_tagged`).",
        "",
        "Chosen on the training part: threshold "
        f"{thr.threshold:g} (F1 {thr.f1:.4f}); relevance CE + {fit.cosine_weight:g} cos >= {fit.threshold:.3f}, "
        f"cos >= {fit.min_cosine:g} (F1 {fit.f1:.4f}; P {fit.precision:.4f}, R {fit.recall:.4f}); "
        f"cross-encoder alone >= {fit_alone.threshold:.3f} (F1 {fit_alone.f1:.4f}). The cross-encoder was "
        "trained on the training part's claims (abstract relevance), so these training figures are optimistic.",
        "",
        f"Chosen on the stance cross-encoder's dev claims ({len({a.claim_id for a in dev_scored})} of its 92 dev "
        f"claims have evidence; {len(dev_scored)} abstracts, {len(dev_flat):,} sentences; the model trained on "
        f"the other training-part claims, never on these): stance-relevance 1-P(NEI) + "
        f"{stance_fit.cosine_weight:g} cos >= {stance_fit.threshold:.3f}, cos >= {stance_fit.min_cosine:g} "
        f"(F1 {stance_fit.f1:.4f}; P {stance_fit.precision:.4f}, R {stance_fit.recall:.4f}); stance model alone "
        f">= {stance_alone.threshold:.3f} (F1 {stance_alone.f1:.4f}); threshold {dev_thr.threshold:g} "
        f"(F1 {dev_thr.f1:.4f}). Cosine weights tried for the stance score: {list(STANCE_COSINE_WEIGHTS)}.",
    ]
    if dev_check:
        parts += [
            "",
            f"Diagnostic: on the re-ranker's dev claims ({dev_check['claims']} claims with evidence, "
            f"{dev_check['sentences']} sentences of the training part the cross-encoder never trained on), the best "
            "F1 each rule reaches when chosen there: "
            + "; ".join(f"{name} {f.f1:.4f}" for name, f in dev_check.items() if name not in ("claims", "sentences"))
            + ".",
        ]
    for part, rows in tables.items():
        parts += ["", f"## {part[0].upper() + part[1:]} ({counts[part]} abstracts)", ""]
        parts.append(markdown_table(header, [prf_row(n, s) for n, s in rows.items()]))
    timed = [n for n in ("threshold", "relevance", "stance-relevance") if lat and n in lat]
    if lat:
        parts += [
            "",
            f"## Latency ({lat['abstracts']} evaluation abstracts, {lat['pairs']} claim-sentence pairs, "
            f"no cache, {machine()}, torch 2 threads; cosine encoder {lat['encoder']})",
            "",
            markdown_table(
                ["selector", "ms per pair", "p50 ms per abstract"],
                [[n, lat[n]["ms_per_pair"], lat[n]["p50_ms_per_abstract"]] for n in timed],
            ),
        ]
        if "stance-relevance" in lat:
            parts += [
                "",
                "The stance-relevance selector leaves its scores in the stance model's prediction cache: "
                "`check --selector stance-relevance --stance cross` shares one model (and cache) between the "
                "two steps, so the stance step reads the kept sentences back instead of scoring them again.",
            ]
    parts += [
        "",
        f"Run: `python benchmarks/selection.py{' ' + ' '.join(sys.argv[1:]) if sys.argv[1:] else ''}` "
        f"in {time.perf_counter() - t_start:.0f} s.",
    ]

    def short(rows: dict[str, Scores], prefix: str) -> dict[str, float]:
        s = next(v for k, v in rows.items() if k.startswith(prefix))
        return {"p": round(s.sentence.precision, 4), "r": round(s.sentence.recall, 4), "f1": round(s.sentence.f1, 4)}

    main_rows = tables["claims with evidence"]
    headline: dict[str, Any] = {
        "benchmark": "selection",
        "eval": eval_name,
        "heldout_sentence_threshold": short(main_rows, "threshold"),
        "heldout_sentence_bio": short(main_rows, "bio"),
        "heldout_sentence_relevance": short(main_rows, "relevance"),
        "heldout_sentence_cross_encoder_alone": short(main_rows, "cross-encoder"),
        "heldout_sentence_stance_alone": short(main_rows, "stance model alone"),
    }
    if stance_shipped is not None:
        headline["heldout_sentence_stance_relevance"] = short(main_rows, "stance-relevance")
    all_rows = tables["all cited abstracts"]
    headline["heldout_all_cited_sentence"] = {
        name: short(all_rows, prefix)
        for name, prefix in (
            ("threshold", "threshold"),
            ("relevance", "relevance"),
            ("stance_relevance", "stance-relevance"),
        )
        if any(k.startswith(prefix) for k in all_rows)
    }
    headline["training_part_sentence_f1"] = {"threshold": round(thr.f1, 4), "relevance": round(fit.f1, 4)}
    headline["stance_dev_sentence_f1"] = {
        "threshold": round(dev_thr.f1, 4),
        "stance_relevance": round(stance_fit.f1, 4),
        "stance_alone": round(stance_alone.f1, 4),
    }
    if lat:
        headline["ms_per_pair"] = {n: lat[n]["ms_per_pair"] for n in timed}
    publish("selection", "\n".join(parts), headline)


if __name__ == "__main__":
    main()
