"""Time-aware evidence ranking on MultiFC under an honest protocol.

Allein, Augenstein, Moens 2021, "Time-aware evidence ranking for fact-checking"; the model and
the recipe of MultiFC (Augenstein et al. 2019): pre-training on all domains with balanced
batches, fine-tuning per domain, BiLSTM claim and evidence encoders. The protocol
(:mod:`factscout.training.temporal.protocol`):

* MultiFC train is split by claim id hash into fit (85%) and validation (15%); every model trains
  on fit; every choice (which domains use the time-aware model) is made on validation; the
  scored split (MultiFC dev, or ``--eval-claims FILE``) is only ever scored.
* Each figure is the mean over ``--seeds`` (each seed trains its own encoders and models) with its
  sd, the seed ensemble (mean probabilities), and a paired sign-flip permutation test against
  ``base`` over claims (per-claim correctness averaged over the seeds; statistic = the
  domain-averaged micro-F1 difference).
* Rows: ``base``, ``search rank``, ``random`` (random evidence weights), ``delta-t`` (Δt features
  only), ``time-aware`` (Δt features + learned mixture of the four temporal rankings), the
  ``shipped`` configuration (time-aware in the domains where it gains on validation, else base),
  and ``base`` / ``time-aware`` again with the evidence dated on or after the claim removed
  (the published-before-claim setting ``check`` uses).

    python benchmarks/temporal.py [--eval-claims FILE [--snippets FILE]] [--seeds 0 1 2 3 4]

The last line printed is JSON: seed means ``base_micro_f1``, ``time_aware_micro_f1`` and the
per-seed lists (``base_micro_f1_seeds``, ...). ``--save-mixture`` writes the learned per-domain
mixture weights and the validation choice to ``factscout/temporal/models/temporal_mixture.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from _common import machine, markdown_table, publish, quiet
from _common import write_predictions as write_run_file

from factscout.datasets import load_dataset
from factscout.datasets.multifc import load_file
from factscout.temporal.embeddings import EmbeddingStore
from factscout.temporal.rankings import METHODS
from factscout.training.temporal.protocol import (
    LEAKAGE_SUFFIX,
    SHIPPED,
    TIME_AWARE,
    ProtocolResult,
    run_protocol,
    summary_rows,
)
from factscout.training.temporal.trainer import ALL_METHODS, Example, TrainSettings, examples_from

log = logging.getLogger("benchmarks.temporal")
MIXTURE_PATH = (
    Path(__file__).resolve().parents[1] / "src" / "factscout" / "temporal" / "models" / "temporal_mixture.json"
)


def leakage_rows(splits: dict[str, Sequence[Example]]) -> tuple[list[list[object]], dict[str, float]]:
    """Per split: evidence items, dated share, share of dated ones on or after / after the claim,
    claims with at least one such item."""
    rows, shares = [], {}
    for name, examples in splits.items():
        deltas = [d for e in examples if e.evidence != ("",) for d in e.deltas]
        dated = [d for d in deltas if d is not None]
        on_after = sum(d >= 0 for d in dated)
        claims_leaking = sum(any(d is not None and d >= 0 for d in e.deltas) for e in examples)
        rows.append(
            [
                name,
                len(deltas),
                f"{len(dated) / len(deltas):.1%}",
                f"{on_after / len(dated):.1%}",
                f"{sum(d > 0 for d in dated) / len(dated):.1%}",
                f"{on_after / len(deltas):.1%}",
                f"{claims_leaking / len(examples):.1%}",
            ]
        )
        shares[name] = on_after / len(dated)
    return rows, shares


def per_domain_rows(result: ProtocolResult) -> list[list[object]]:
    rows = []
    for domain in sorted(result.runs[0]["base"]["scored"]):

        def mean(method: str, split: str, d: str = domain) -> float:
            values = [r[d].micro_f1 for r in result.per_seed(method, split) if d in r]
            return statistics.mean(values) if values else float("nan")

        n_val = result.runs[0]["base"]["validation"].get(domain)
        rows.append(
            [
                domain,
                n_val.n if n_val else 0,
                result.runs[0]["base"]["scored"][domain].n,
                mean("base", "validation"),
                mean(TIME_AWARE, "validation"),
                result.choice.get(domain, "base"),
                mean("base", "scored"),
                mean(TIME_AWARE, "scored"),
                f"{mean(TIME_AWARE, 'scored') - mean('base', 'scored'):+.4f}",
                ", ".join(f"{w:.2f}" for w in result.mixture.get(domain, [])),
            ]
        )
    return rows


def save_mixture(result: ProtocolResult, command: str) -> None:
    """The learned mixture per domain (mean over seeds), the validation choice, and a default (the
    mean weights over the domains where time-aware gained on validation, else over all)."""
    gained = [d for d, c in result.choice.items() if c == TIME_AWARE and d in result.mixture]
    pool = gained or sorted(result.mixture)
    default = [statistics.mean(result.mixture[d][k] for d in pool) for k in range(len(METHODS))]
    total = sum(default)
    payload = {
        "rankings": list(METHODS),
        "default": {m: round(w / total, 6) for m, w in zip(METHODS, default, strict=True)},
        "default_from": "domains where time-aware gained on validation" if gained else "all domains",
        "domains": {
            d: {m: round(w / sum(ws), 6) for m, w in zip(METHODS, ws, strict=True)} for d, ws in result.mixture.items()
        },
        "time_aware_domains": gained,
        "seeds": result.seeds,
        "command": command,
    }
    MIXTURE_PATH.parent.mkdir(parents=True, exist_ok=True)
    MIXTURE_PATH.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-claims", help="score this claims file (claims_dev.jsonl layout) instead of dev")
    parser.add_argument("--snippets", help="snippets file for --eval-claims (default: the shared MultiFC one)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--methods",
        nargs="+",
        default=["base", "search rank", "random", "delta-t", TIME_AWARE],
        choices=list(ALL_METHODS),
        metavar="METHOD",
        help=f"methods to train (base and time-aware always; known: {', '.join(ALL_METHODS)})",
    )
    parser.add_argument("--no-leakage", action="store_true", help="skip the published-before-claim runs")
    parser.add_argument("--validation-share", type=float, default=0.15)
    parser.add_argument("--pretrain-epochs", type=int, default=TrainSettings().pretrain_epochs)
    parser.add_argument("--finetune-epochs", type=int, default=TrainSettings().finetune_epochs)
    parser.add_argument("--encoder-epochs", type=int, default=TrainSettings().encoder_epochs)
    parser.add_argument("--threads", type=int, default=TrainSettings().threads, help="torch threads while training")
    parser.add_argument("--save-mixture", action="store_true", help="write temporal/models/temporal_mixture.json")
    parser.add_argument("--predictions", help="write every claim's predicted label per seed, method and split (JSON)")
    parser.add_argument("--name", help="results file name (default temporal, or temporal_eval with --eval-claims)")
    parser.add_argument(
        "--encoder",
        choices=["bilstm", "minilm"],
        default="bilstm",
        help="text encoders: BiLSTMs trained per seed (the paper's), or frozen MiniLM vectors (int8; cached per"
        " text: fill the cache first with benchmarks/temporal_encoding.py --fill)",
    )
    args = parser.parse_args()
    quiet()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("factscout.training.temporal.trainer").setLevel(logging.WARNING)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if len(set(args.seeds)) != len(args.seeds):
        parser.error("--seeds must be distinct")
    torch.set_num_threads(args.threads)
    settings = TrainSettings(
        pretrain_epochs=args.pretrain_epochs,
        finetune_epochs=args.finetune_epochs,
        encoder_epochs=args.encoder_epochs,
        threads=args.threads,
    )
    methods = [m for m in ALL_METHODS if m in ("base", TIME_AWARE) or m in args.methods]
    train = examples_from(load_dataset("multifc", "train"))
    if args.eval_claims:
        scored = examples_from(load_file(args.eval_claims, args.snippets))
        where = f"`{args.eval_claims}` ({len(scored)} claims)"
    else:
        scored = examples_from(load_dataset("multifc", "dev"))
        where = f"MultiFC dev ({len(scored)} claims)"
    start = time.perf_counter()
    result = run_protocol(
        train,
        scored,
        seeds=args.seeds,
        settings=settings,
        methods=methods,
        leakage_methods=() if args.no_leakage else ("base", TIME_AWARE),
        share=args.validation_share,
        progress=log.info,
        encoder=args.encoder,
        embed=EmbeddingStore().embed if args.encoder == "minilm" else None,
    )
    seconds = time.perf_counter() - start
    command = shlex.join(["python", "benchmarks/temporal.py", *sys.argv[1:]])
    if args.save_mixture:
        save_mixture(result, command)
    if args.predictions:
        predictions = {
            str(seed): {
                method: {
                    split: {c: p for r in by_domain.values() for c, p in zip(r.claim_ids, r.predicted, strict=True)}
                    for split, by_domain in by_split.items()
                }
                for method, by_split in run.items()
            }
            for seed, run in zip(result.seeds, result.runs, strict=True)
        }
        Path(args.predictions).write_text(json.dumps({"predictions": predictions}, sort_keys=True, indent=1) + "\n")

    for seed, run in zip(result.seeds, result.runs, strict=True):  # run files: every claim's predicted label
        for method, by_split in run.items():
            write_run_file(
                args.name or ("temporal_eval" if args.eval_claims else "temporal"),
                f"seed{seed}-{method}",
                (
                    {"claim_id": c, "split": split, "domain": domain, "predicted": label}
                    for split, by_domain in sorted(by_split.items())
                    for domain, r in sorted(by_domain.items())
                    for c, label in zip(r.claim_ids, r.predicted, strict=True)
                ),
            )

    rows = {split: summary_rows(result, split) for split in ("validation", "scored")}
    validation_mean = {r["method"]: r["mean"] for r in rows["validation"]}
    base_mean = next(r["mean"] for r in rows["scored"] if r["method"] == "base")
    table = [
        [
            r["method"],
            r["mean"],
            r["sd"],
            " ".join(f"{v:.4f}" for v in r["seeds"]),
            r["ensemble"],
            f"{r['mean'] / base_mean - 1:+.1%}",
            "-" if r["method"] in ("base", "base" + LEAKAGE_SUFFIX) else f"{r['delta_vs_base']:+.4f}",
            "-" if r["method"] in ("base", "base" + LEAKAGE_SUFFIX) else f"{r['p_vs_base']:.4f}",
            validation_mean[r["method"]],
        ]
        for r in rows["scored"]
    ]
    leak_splits = {"MultiFC train": train, ("scored: " + where)[:60]: scored}
    leak_table, leak_shares = leakage_rows(leak_splits)
    n_domains = len(result.runs[0]["base"]["scored"])
    gained = sorted(d for d, c in result.choice.items() if c == TIME_AWARE)
    text = [
        f"### Time-aware evidence ranking: {where}, trained on MultiFC train (fit {result.n_fit}, "
        f"validation {result.n_validation} claims), {len(args.seeds)} seeds",
        "",
        f"Micro-F1 per domain averaged over the {n_domains} domains (each scored on its own label set). "
        "Mean and sd over the seeds; ensemble = the seeds' models averaged; Δ and p: paired sign-flip permutation "
        "test against base over the scored claims (10,000 resamples, per-claim correctness averaged over the seeds; "
        "the published-before-claim rows against base in that setting); validation = the same figure on the "
        "validation split of MultiFC train, where every choice was made.",
        "",
        markdown_table(
            [
                "method",
                "mean micro-F1",
                "sd",
                "per seed",
                "ensemble",
                "vs base",
                "Δ vs base",
                "paired p",
                "validation",
            ],
            table,
        ),
        "",
        f"`{TIME_AWARE}` = Δt features (undated, same day, before/after, 7 log-scaled distance buckets, signed "
        "log-distance) per evidence item + a per-domain softmax mixture of the four temporal rankings (a learned "
        "prior on the evidence weights and π-weighted ListMLE targets); `delta-t` = the features alone; "
        f"`{SHIPPED}`: the time-aware model in the domains where its mean validation micro-F1 beat base's "
        f"({len(gained)} of {n_domains}: {', '.join(gained) or 'none'}), base elsewhere.",
        "",
        "Per domain (means over the seeds; π = learned mixture weights over "
        + ", ".join(METHODS)
        + ", mean over seeds):",
        "",
        markdown_table(
            [
                "domain",
                "validation claims",
                "scored claims",
                "validation base",
                "validation time-aware",
                "shipped",
                "scored base",
                "scored time-aware",
                "scored gain",
                "π",
            ],
            per_domain_rows(result),
        ),
        "",
        "MultiFC has no claim-type field (its categories and tags are per-site free text), so there is no "
        "per-claim-type breakdown.",
        "",
        "Leakage: evidence dated on or after its claim's date (Δt >= 0; snippet dates as parsed by the loader):",
        "",
        markdown_table(
            [
                "split",
                "evidence",
                "dated",
                "dated ones on/after claim",
                "dated ones after claim",
                "all on/after claim",
                "claims with such evidence",
            ],
            leak_table,
        ),
        "",
        f"Training: {seconds / 60:.0f} min for {len(args.seeds)} seeds ({', '.join(f'{s:.0f}' for s in result.seconds)} s"
        f" per seed; {settings.pretrain_epochs} + {settings.finetune_epochs} epochs, "
        + (
            f"BiLSTM encoders {settings.encoder_epochs} epochs"
            if args.encoder == "bilstm"
            else "frozen MiniLM vectors (int8 ONNX Runtime, cached per text)"
        )
        + f") on {machine()}, torch threads {args.threads}, shared with other jobs.",
        "",
        f"Reproduce: `{command}`",
    ]
    by_method = {r["method"]: r for r in rows["scored"]}

    def key(method: str) -> str:
        return method.split(" (")[0].replace(" ", "_").replace("-", "_") + (
            "_published_before_claim" if method.endswith(LEAKAGE_SUFFIX) else ""
        )

    headline: dict[str, object] = {
        "split": args.eval_claims or "multifc dev",
        "claims": len(scored),
        "seeds": args.seeds,
        "protocol": "choices on a 15% claim-id-hash validation split of MultiFC train; paired sign-flip permutation test over claims",
    }
    for method, r in by_method.items():
        name = "shipped" if method == SHIPPED else key(method)
        headline[f"{name}_micro_f1"] = round(float(r["mean"]), 4)
        headline[f"{name}_micro_f1_sd"] = round(float(r["sd"]), 4)
        headline[f"{name}_micro_f1_seeds"] = [round(float(v), 4) for v in r["seeds"]]  # type: ignore[attr-defined]
        headline[f"{name}_micro_f1_ensemble"] = round(float(r["ensemble"]), 4)
        if method not in ("base", "base" + LEAKAGE_SUFFIX):
            headline[f"{name}_paired_p"] = round(float(r["p_vs_base"]), 4)
    headline["time_aware_relative_gain"] = round(by_method[TIME_AWARE]["mean"] / base_mean - 1, 4)  # type: ignore[operator]
    headline["time_aware_domains"] = gained
    headline["evidence_on_or_after_claim_share"] = {k: round(v, 4) for k, v in leak_shares.items()}
    headline["validation_base_micro_f1"] = round(float(validation_mean["base"]), 4)  # type: ignore[arg-type]
    headline["validation_time_aware_micro_f1"] = round(float(validation_mean[TIME_AWARE]), 4)  # type: ignore[arg-type]
    headline["train_seconds"] = round(seconds, 1)
    publish(args.name or ("temporal_eval" if args.eval_claims else "temporal"), "\n".join(text), headline)


if __name__ == "__main__":
    main()
