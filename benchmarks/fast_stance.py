"""The stance cross-encoder ``check`` uses, fp32 (torch) against its int8 build on ONNX Runtime
(``cross-int8``: weight matrices dynamically quantised by factscout), on the same held-out pairs
in one run: macro-F1 of each with 95 % bootstrap intervals over claims and of their difference,
label agreement, the largest probability difference, and CPU per pair; then ``check`` end to end
on the same claims over ``--index`` (the demo's hybrid SciFact index by default) with the default
int8 inference (``CheckSettings.fast=None``: int8 stance and hybrid queries) against the fp32 path
(``fast=False``): verdict macro-F1 of each, the paired bootstrap interval of the difference and
the share of claims with the same verdict (``--no-verdict`` skips it).

The pairs are stance.py's: every sentence of the cited abstracts of the held-out SciFact claims
(``verify/models/scifact_heldout_ids.txt``), scored on the model card's evaluation set (gold
rationales + the 2 most claim-similar other sentences per claim, by fp32 MiniLM cosine) and on
all of them. Another split in SciFact's format: ``--claims claims.jsonl [--corpus corpus.jsonl]``.

    python benchmarks/fast_stance.py [--claims C --corpus P] [--limit N] [--index DIR] [--no-verdict]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import markdown_table, publish, quiet
from stance import Scorer, embed, read_split, texts_of

from factscout.datasets import load_abstract_sentences, load_dataset
from factscout.evaluate.classification import grouped_macro_f1_intervals
from factscout.records import STANCE_LABELS, Claim
from factscout.text.encoder import Encoder
from factscout.training.splits import SEED, split_scifact
from factscout.training.stance.data import Embeddings, scifact_pairs
from factscout.verify.cross_stance import CrossStanceModel

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", help="claims JSONL in SciFact's format (default: the held-out SciFact claims)")
    parser.add_argument("--corpus", help="corpus JSONL in SciFact's format (default: the SciFact corpus)")
    parser.add_argument("--limit", type=int, help="score only the first N claims (a quick look)")
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--no-verdict", action="store_true", help="skip the end-to-end verdict rows")
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
    ci = grouped_macro_f1_intervals(scorer.groups, scorer.gold, ev, range(len(STANCE_LABELS)), seed=SEED)
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
    headline: dict[str, Any] = {}
    if not args.no_verdict and all("label" in c.meta for c in claims):  # SciFact's loader keeps the verdict
        verdict_text, headline = verdicts(args.index, claims)
        text += "\n\n" + verdict_text
    publish(
        "fast_stance",
        text,
        {
            **headline,
            "pairs": len(pairs),
            "macro_f1_fp32": scores["fp32"]["macro_f1"],
            "macro_f1_int8": scores["int8"]["macro_f1"],
            "delta_ci95": [round(-hi, 4), round(-lo, 4)],
            "label_agreement": round(agree, 4),
            "speedup": round(cpu["fp32"] / cpu["int8"], 2),
        },
    )


def verdicts(index: Path, claims: list[Claim]) -> tuple[str, dict[str, Any]]:
    """``check`` over ``index`` on ``claims``, int8 default vs fp32: the verdict table and headline."""
    from factscout.check import Checker, CheckSettings
    from factscout.evaluate.classification import macro_f1
    from factscout.records import RULE_VERDICT_LABELS as VERDICT_LABELS
    from factscout.training.verdict.aggregator import gold_verdict

    gold = [gold_verdict(c) for c in claims]
    labels: dict[str, list[str]] = {}
    for name, fast in (("fp32 (fast=False)", False), ("int8 default (fast=None)", None)):
        checker = Checker.from_index(index, CheckSettings(fast=fast))
        labels[name] = [r.verdict.label for r in checker.check_many(claims)]
    names = list(labels)
    ci = grouped_macro_f1_intervals([c.claim_id for c in claims], gold, labels, VERDICT_LABELS, seed=SEED)
    f1 = {n: macro_f1(gold, labels[n], VERDICT_LABELS) for n in names}
    same = float(np.mean([a == b for a, b in zip(labels[names[0]], labels[names[1]], strict=True)]))
    lo, hi = ci[f"{names[0]} - {names[1]}"]
    rows = [[n, f"{f1[n]:.4f} [{ci[n][0]:.3f}, {ci[n][1]:.3f}]"] for n in names]
    text = "\n".join(
        [
            f"`check` end to end (default settings over `{index.name}`, {len(claims)} claims):",
            "",
            markdown_table(["inference", "verdict macro-F1 [95% CI]"], rows),
            "",
            f"int8 - fp32 verdict macro-F1: {f1[names[1]] - f1[names[0]]:+.4f} (95% CI [{-hi:+.3f}, {-lo:+.3f}]);"
            f" same verdict on {same:.1%} of claims.",
        ]
    )
    return text, {
        "verdict_macro_f1_fp32": round(f1[names[0]], 4),
        "verdict_macro_f1_int8": round(f1[names[1]], 4),
        "verdict_delta_ci95": [round(-hi, 4), round(-lo, 4)],
        "same_verdict": round(same, 4),
    }


if __name__ == "__main__":
    main()
