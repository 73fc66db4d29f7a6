"""The stance cross-encoder ``check`` uses, fp32 (torch) against its int8 build on ONNX Runtime
(``cross-int8``: weight matrices dynamically quantised by factscout), on the same held-out pairs
in one run: macro-F1 of each with 95 % bootstrap intervals over claims and of their difference,
label agreement, the largest probability difference, and CPU per pair.

The pairs are stance.py's: every sentence of the cited abstracts of the held-out SciFact claims
(``verify/models/scifact_heldout_ids.txt``), scored on the model card's evaluation set (gold
rationales + the 2 most claim-similar other sentences per claim, by fp32 MiniLM cosine) and on
all of them. Another split in SciFact's format: ``--claims claims.jsonl [--corpus corpus.jsonl]``.

    python benchmarks/fast_stance.py [--claims C --corpus P] [--limit N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import markdown_table, publish, quiet
from stance import Scorer, embed, read_split, texts_of

from factscout.datasets import load_abstract_sentences, load_dataset
from factscout.records import STANCE_LABELS
from factscout.retrieve.encoder import Encoder
from factscout.training.splits import SEED, split_scifact
from factscout.training.stance_data import Embeddings, scifact_pairs
from factscout.training.stance_eval import bootstrap_macro_f1
from factscout.verify.cross_stance import CrossStanceModel


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", help="claims JSONL in SciFact's format (default: the held-out SciFact claims)")
    parser.add_argument("--corpus", help="corpus JSONL in SciFact's format (default: the SciFact corpus)")
    parser.add_argument("--limit", type=int, help="score only the first N claims (a quick look)")
    args = parser.parse_args()

    if args.claims:
        claims, abstracts = read_split(args.claims, args.corpus)
        source = args.claims
    else:
        _, claims = split_scifact(list(load_dataset("scifact", "train").claims), seed=SEED)
        abstracts, source = load_abstract_sentences(), f"held-out SciFact ({len(claims)} claims)"
    claims = claims[: args.limit] if args.limit else claims
    pairs = scifact_pairs(claims, abstracts)
    fp32_emb = Embeddings(Encoder())
    embed(fp32_emb, texts_of(pairs), lambda _: None)
    scorer = Scorer(pairs, fp32_emb)

    exact = CrossStanceModel.load()
    fast = exact.int8()
    heads, tails = [p.claim for p in pairs], [p.sentence for p in pairs]
    probs, cpu = {}, {}
    for name, model in (("fp32", exact), ("int8", fast)):
        model.predict_pairs(heads[:4], tails[:4])  # load (and export) outside the timing
        model.clear_cache()
        start = time.process_time()
        probs[name] = model.predict_pairs(heads, tails)
        cpu[name] = (time.process_time() - start) / len(pairs)
    pred = {name: p.argmax(axis=1) for name, p in probs.items()}
    scores = {name: scorer.scores(p) for name, p in pred.items()}
    ev = {name: [int(p[i]) for i in scorer.idx] for name, p in pred.items()}
    ci = bootstrap_macro_f1(scorer.groups, scorer.gold, ev, range(len(STANCE_LABELS)))
    agree = float(np.mean(pred["fp32"] == pred["int8"]))
    max_diff = float(np.abs(probs["fp32"] - probs["int8"]).max())
    delta = scores["int8"]["macro_f1"] - scores["fp32"]["macro_f1"]
    lo, hi = ci["fp32 - int8"]
    rows = [
        [
            name,
            f"{scores[name]['macro_f1']:.4f} [{ci[name][0]:.3f}, {ci[name][1]:.3f}]",
            *(f"{scores[name][f'f1_{label}']:.3f}" for label in STANCE_LABELS),
            f"{scores[name]['all_sentences_macro_f1']:.4f}",
            f"{cpu[name] * 1000:.1f}",
        ]
        for name in ("fp32", "int8")
    ]
    text = "\n".join(
        [
            f"### Stance cross-encoder: fp32 vs int8 ({source}, {len(scorer.idx)} evaluation pairs,"
            f" {len(pairs)} sentences in all)",
            "",
            markdown_table(
                [
                    "model",
                    "macro-F1 [95% CI]",
                    *(f"F1 {label}" for label in STANCE_LABELS),
                    "all-sentences macro-F1",
                    "CPU ms / pair",
                ],
                rows,
            ),
            "",
            f"int8 - fp32 macro-F1: {delta:+.4f} (95% CI [{-hi:+.3f}, {-lo:+.3f}], resampling claims); same label on"
            f" {agree:.1%} of all {len(pairs)} pairs; largest probability difference {max_diff:.3f}; int8 is"
            f" {cpu['fp32'] / cpu['int8']:.2f}x faster per pair (CPU).",
        ]
    )
    publish(
        "fast_stance",
        text,
        {
            "pairs": len(pairs),
            "macro_f1_fp32": scores["fp32"]["macro_f1"],
            "macro_f1_int8": scores["int8"]["macro_f1"],
            "delta_ci95": [round(-hi, 4), round(-lo, 4)],
            "label_agreement": round(agree, 4),
            "speedup": round(cpu["fp32"] / cpu["int8"], 2),
        },
    )


if __name__ == "__main__":
    main()
