"""Time-aware evidence ranking on MultiFC: joint veracity + evidence-ranking models.

Allein, Augenstein, Moens 2021, "Time-aware evidence ranking for fact-checking"; the model and
the recipe of MultiFC (Augenstein et al. 2019). Trained on MultiFC train (pre-training on all
domains with balanced batches, then fine-tuning per domain), scored on MultiFC dev per domain:
micro- and macro-F1, averaged over the domains. One row per method and encoder:

* ``base`` (no ranking loss), ``search rank`` (ListMLE against Google's order), ``random``
  (random evidence weights);
* each of the four temporal rankings (ListMLE against it);
* ``time-aware``: per domain the temporal ranking with the best dev micro-F1. On dev that choice
  is made on the very claims it is scored on (an optimistic row); with ``--eval-claims`` the
  choice is still made on dev and the row is scored on the other file.

Encoders: ``bilstm`` (claim and evidence BiLSTMs trained from scratch on all domains, then
frozen; every method trains its own heads over them) and ``minilm`` (frozen all-MiniLM-L6-v2
embeddings, int8 ONNX when installed, cached per text under ``$FACTSCOUT_CACHE``).

    python benchmarks/temporal.py [--eval-claims claims_test.jsonl] [--encoders bilstm minilm]

Same seed, same tables: training is deterministic for a given ``--seed`` and ``--threads`` on one
machine (see :mod:`factscout.training.temporal` for what that covers); ``--predictions FILE``
writes every claim's predicted label per encoder and method, and
``benchmarks/temporal_seeds.py --same-seed`` runs this script twice and compares those files.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from _common import machine, markdown_table, publish, quiet
from _common import write_predictions as write_run_file

from factscout.datasets import load_dataset
from factscout.datasets.multifc import load_file
from factscout.temporal.embeddings import EmbeddingStore
from factscout.temporal.rankings import METHODS
from factscout.temporal.timestamps import date_coverage
from factscout.training.temporal import (
    ALL_METHODS,
    DomainResult,
    Example,
    Featurizer,
    TrainSettings,
    bilstm_vectors,
    examples_from,
    run_method,
    select_time_aware,
    train_bilstm_encoders,
)

log = logging.getLogger("benchmarks.temporal")


def average(results: Mapping[str, DomainResult]) -> tuple[float, float]:
    if not results:
        return 0.0, 0.0
    return (
        sum(r.micro_f1 for r in results.values()) / len(results),
        sum(r.macro_f1 for r in results.values()) / len(results),
    )


def capped(examples: Sequence[Example], per_domain: int | None) -> list[Example]:
    """The first ``per_domain`` training claims of each domain (``examples`` order: by claim id)."""
    if per_domain is None:
        return list(examples)
    seen: dict[str, int] = {}
    out = []
    for e in examples:
        if seen.get(e.domain, 0) < per_domain:
            seen[e.domain] = seen.get(e.domain, 0) + 1
            out.append(e)
    return out


def run_encoder(
    kind: str,
    train: list[Example],
    evals: dict[str, list[Example]],
    settings: TrainSettings,
    methods: Sequence[str],
) -> tuple[dict[str, dict[str, dict[str, DomainResult]]], float, int]:
    """``{method: {split: {domain: result}}}``, training seconds, training claims."""
    start = time.perf_counter()
    if kind == "minilm":
        store = EmbeddingStore()
        featurizer = Featurizer.fit("minilm", train, embed=store.embed)
    else:
        featurizer = Featurizer.fit("bilstm", train)
    train_t = featurizer.transform(train)
    eval_t = {name: featurizer.transform(ex) for name, ex in evals.items()}
    if kind == "bilstm":
        encoders = train_bilstm_encoders(featurizer, train_t, settings)
        train_t = bilstm_vectors(encoders, train_t, threads=settings.threads)
        eval_t = {name: bilstm_vectors(encoders, t, threads=settings.threads) for name, t in eval_t.items()}
    log.info("%s: features ready in %.0f s", kind, time.perf_counter() - start)
    out = {}
    for method in methods:
        out[method] = run_method(featurizer, method, train_t, eval_t, settings)
        log.info("%s %s: dev micro-F1 %.4f", kind, method, average(out[method]["dev"])[0])
    return out, time.perf_counter() - start, len(train)


def write_predictions(
    path: Path, results: Mapping[str, Mapping[str, Mapping[str, Mapping[str, DomainResult]]]], settings: TrainSettings
) -> None:
    """``{"settings": ..., "predictions": {encoder: {method: {split: {claim_id: label}}}}}``, keys
    sorted, so two runs that trained the same models write the same bytes."""
    predictions = {
        kind: {
            method: {
                split: {c: p for r in by_domain.values() for c, p in zip(r.claim_ids, r.predicted, strict=True)}
                for split, by_domain in by_split.items()
            }
            for method, by_split in by_method.items()
        }
        for kind, by_method in results.items()
    }
    payload = {"settings": dataclasses.asdict(settings), "predictions": predictions}
    path.write_text(json.dumps(payload, sort_keys=True, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-claims", help="score this claims file (claims_dev.jsonl layout) instead of dev")
    parser.add_argument("--snippets", help="snippets file for --eval-claims (default: the shared MultiFC one)")
    parser.add_argument("--encoders", nargs="+", default=["bilstm", "minilm"], choices=["bilstm", "minilm"])
    parser.add_argument(
        "--minilm-train-per-domain",
        type=int,
        default=40,
        help="MiniLM variant: first N training claims per domain (encoding all 180k snippets takes hours on 2 cores); 0 = all",
    )
    parser.add_argument("--pretrain-epochs", type=int, default=TrainSettings().pretrain_epochs)
    parser.add_argument("--finetune-epochs", type=int, default=TrainSettings().finetune_epochs)
    parser.add_argument("--encoder-epochs", type=int, default=TrainSettings().encoder_epochs)
    parser.add_argument(
        "--threads",
        type=int,
        default=TrainSettings().threads,
        help="torch threads while training (1 is fastest on shared cores; another count gives another model)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        default=list(ALL_METHODS),
        choices=list(ALL_METHODS),
        metavar="METHOD",
        help=f"train only these methods (default all: {', '.join(ALL_METHODS)}); base is always trained",
    )
    parser.add_argument("--predictions", help="write every claim's predicted label per encoder and method (JSON)")
    parser.add_argument("--seed", type=int, default=TrainSettings().seed)
    parser.add_argument("--name", help="results file name (default temporal, or temporal_eval with --eval-claims)")
    args = parser.parse_args()
    quiet()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("factscout.training.temporal").setLevel(logging.WARNING)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)
    settings = TrainSettings(
        pretrain_epochs=args.pretrain_epochs,
        finetune_epochs=args.finetune_epochs,
        encoder_epochs=args.encoder_epochs,
        seed=args.seed,
        threads=args.threads,
    )
    methods = [m for m in ALL_METHODS if m == "base" or m in args.methods]

    train_ds, dev_ds = load_dataset("multifc", "train"), load_dataset("multifc", "dev")
    train, dev = examples_from(train_ds), examples_from(dev_ds)
    evals = {"dev": dev}
    eval_name = "dev"
    if args.eval_claims:
        eval_ds = load_file(args.eval_claims, args.snippets)
        evals["eval"] = examples_from(eval_ds)
        eval_name = "eval"
    scored = evals[eval_name]

    # dates: coverage per domain of the evidence of the scored claims
    ds_scored = eval_ds if args.eval_claims else dev_ds
    coverage = date_coverage(ds_scored.claims, {p.passage_id: p for p in ds_scored.corpus})

    results: dict[str, dict[str, dict[str, dict[str, DomainResult]]]] = {}
    timing: dict[str, tuple[float, int]] = {}
    for kind in args.encoders:
        cap = args.minilm_train_per_domain or None if kind == "minilm" else None
        results[kind], seconds, n_train = run_encoder(kind, capped(train, cap), evals, settings, methods)
        timing[kind] = (seconds, n_train)
    if args.predictions:
        write_predictions(Path(args.predictions), results, settings)
    result = args.name or ("temporal_eval" if args.eval_claims else "temporal")
    for kind, by_method in results.items():  # run files: every claim's predicted label per encoder and method
        for method, by_split in by_method.items():
            write_run_file(
                result,
                f"{kind}-{method}",
                (
                    {"claim_id": c, "split": split, "domain": r.domain, "predicted": label}
                    for split, by_domain in sorted(by_split.items())
                    for r in by_domain.values()
                    for c, label in zip(r.claim_ids, r.predicted, strict=True)
                ),
            )

    rows = []
    headline: dict[str, object] = {"split": args.eval_claims or "multifc dev", "claims": len(scored)}
    per_domain_rows: dict[str, dict[str, float]] = {}
    choices: dict[str, dict[str, str]] = {}
    for kind, by_method in results.items():
        dev_results = {m: r["dev"] for m, r in by_method.items()}
        choice = select_time_aware(dev_results)
        choices[kind] = choice
        time_aware = {d: by_method[m][eval_name][d] for d, m in choice.items() if d in by_method[m][eval_name]}
        table = {m: by_method[m][eval_name] for m in methods}
        if choice:
            table["time-aware"] = time_aware
        base_micro = average(table["base"])[0]
        for m, res in table.items():
            micro, macro = average(res)
            rel = (micro / base_micro - 1) * 100 if base_micro else 0.0
            label = "time-aware (best temporal ranking per domain, chosen on dev)" if m == "time-aware" else m
            rows.append([kind, label, micro, macro, f"{rel:+.1f}%", len(res)])
            per_domain_rows.setdefault(f"{kind} {m}", {}).update({d: r.micro_f1 for d, r in res.items()})
        headline[f"{kind}_base_micro_f1"] = round(base_micro, 4)
        # no temporal method trained (--methods): no time-aware row, null in the JSON
        headline[f"{kind}_time_aware_micro_f1"] = round(average(time_aware)[0], 4) if choice else None
        headline[f"{kind}_time_aware_relative_gain"] = (
            round((average(time_aware)[0] / base_micro - 1) if base_micro else 0.0, 4) if choice else None
        )
        for m in METHODS:
            if m in table:
                headline[f"{kind}_{m.replace(' ', '_').replace('-', '_')}_micro_f1"] = round(average(table[m])[0], 4)
        headline[f"{kind}_train_seconds"] = round(timing[kind][0], 1)
    primary = args.encoders[0]
    headline["base_micro_f1"] = headline[f"{primary}_base_micro_f1"]
    headline["time_aware_micro_f1"] = headline[f"{primary}_time_aware_micro_f1"]
    headline["primary_encoder"] = primary

    where = (
        f"`{args.eval_claims}` ({len(scored)} claims)" if args.eval_claims else f"MultiFC dev ({len(scored)} claims)"
    )
    text = [
        f"### Time-aware evidence ranking: joint veracity + evidence ranking on {where}, trained on MultiFC train",
        "",
        "Micro- and macro-F1 per domain, averaged over the domains (each domain scored on its own label set).",
        "",
        markdown_table(["encoder", "method", "micro-F1", "macro-F1", "micro-F1 vs base", "domains"], rows),
        "",
    ]
    domains = sorted({d for v in per_domain_rows.values() for d in v})
    shown = [s for s in (f"{k} {m}" for k in results for m in (*ALL_METHODS, "time-aware")) if s in per_domain_rows]
    text += [
        "Micro-F1 per domain:",
        "",
        markdown_table(
            ["domain", *shown],
            [[d, *[per_domain_rows[s].get(d, "-") for s in shown]] for d in domains],
        ),
        "",
        "Temporal ranking chosen per domain on dev: "
        + "; ".join(f"{k}: " + ", ".join(f"{d} {m}" for d, m in sorted(c.items())) for k, c in choices.items())
        + ".",
        "",
        "Evidence dates (snippets of the scored claims): "
        + ", ".join(
            f"{c.domain} {c.share_dated:.0%} dated, {c.share_after_claim:.0%} after the claim" for c in coverage
        )
        + ".",
        "",
        "Training: "
        + "; ".join(f"{k} {timing[k][1]} training claims, {timing[k][0]:.0f} s" for k in results)
        + f" ({len(methods)} methods, pre-training and per-domain fine-tuning, {settings.pretrain_epochs} + {settings.finetune_epochs} epochs"
        + f"; BiLSTM encoders {settings.encoder_epochs} epochs; seed {settings.seed}) on {machine()}, torch threads {args.threads},"
        + " shared with other jobs.",
        "",
        f"Reproduce: `{shlex.join(['python', 'benchmarks/temporal.py', *sys.argv[1:]])}`",
    ]
    publish(result, "\n".join(text), headline)


if __name__ == "__main__":
    main()
