"""Check-worthiness on the CheckThat! test sets: both shipped model kinds and two baselines.

F1 of the check-worthy class at each model's shipped threshold on CheckThat! 2022 1A test (tweets)
and CheckThat! 2021 1B test (transcripts; also the lab's ranking measures: MAP, RR and P@k, each
transcript a query). References in the same run: every sentence called check-worthy, and a
logistic regression over the surface features alone (numbers, comparatives, first person...; no
embedding) fitted on the same training data and its threshold chosen on the same dev sets.

``--test PATH --format tweets|transcripts`` scores another split in the same format (a CheckThat!
2022 1A-style TSV, or a 1B transcript file or folder of them) beside the default ones. A test set
that shares sentences with the models' training data (``checkworthy_trained.npz``) is refused,
or, with ``--drop-overlap``, scored without the shared sentences.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, markdown_table, publish, quiet

from factscout.datasets.checkworthy import (
    CheckworthySentence,
    load_sentences,
    read_transcript,
    read_tweets,
)
from factscout.errors import InputError

MODELS = ("linear", "minilm")


def read_test(path: Path, fmt: str) -> list[CheckworthySentence]:
    """A test split in the lab's format: ``tweets`` (1A TSV) or ``transcripts`` (a 1B file or folder)."""
    if fmt == "tweets":
        return read_tweets(path, split="test", dataset=path.stem)
    files = sorted(path.glob("*.tsv")) if path.is_dir() else [path]
    if not files:
        raise InputError(f"{path}: no transcript .tsv files")
    return [s for f in files for s in read_transcript(f, split="test", dataset=path.stem)]


def surface_baseline(say: Callable[[str], None]) -> tuple[Callable[[list[str]], np.ndarray], float]:
    """(probability of check-worthy from the surface features alone, its dev-chosen threshold)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from factscout.claims.checkworthy import surface_features
    from factscout.training.checkworthy.data import TRAIN_PARTS, build_splits
    from factscout.training.checkworthy.evaluation import best_threshold
    from factscout.training.checkworthy.linear import sample_weights

    splits = build_splits(TRAIN_PARTS)
    scaler = StandardScaler().fit(surface_features([s.text for s in splits.train]))
    model = LogisticRegression(max_iter=2000).fit(
        scaler.transform(surface_features([s.text for s in splits.train])),
        [s.checkworthy for s in splits.train],
        sample_weight=sample_weights(splits.train, {"checkthat2021_1b": 0.1}),
    )

    def score(texts: list[str]) -> np.ndarray:
        return np.asarray(model.predict_proba(scaler.transform(surface_features(texts)))[:, 1])

    probs = {n: score([s.text for s in v]) for n, v in splits.dev.items()}
    threshold, mean_f1, _ = best_threshold({n: [s.checkworthy for s in v] for n, v in splits.dev.items()}, probs)
    say(f"surface-feature baseline: dev mean F1 {mean_f1:.3f} at {threshold:.3f}")
    return score, threshold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", type=Path, help="another test split in the lab's format")
    parser.add_argument("--format", choices=("tweets", "transcripts"), help="the format of --test")
    parser.add_argument("--drop-overlap", action="store_true", help="score --test without what training shares")
    args = parser.parse_args()
    if bool(args.test) != bool(args.format):
        parser.error("--test and --format go together")
    quiet()
    import torch

    torch.set_num_threads(2)
    from factscout.claims.checkworthy import MODEL_DIR, load_checkworthy, shipped_files, shipped_path
    from factscout.training.checkworthy.evaluation import summary

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    from factscout.training.checkworthy.trainer import shared_with_training

    manifest = shipped_files()
    keys_file = MODEL_DIR / manifest["trained_keys"]
    tests: dict[str, list[CheckworthySentence]] = {
        "CT22 1A test (tweets)": list(load_sentences("checkthat2022_1a", "test")),
        "CT21 1B test (transcripts)": list(load_sentences("checkthat2021_1b", "test")),
    }
    ranking = {"CT21 1B test (transcripts)"}
    notes = []
    if args.test:
        extra = read_test(args.test, args.format)
        shared = shared_with_training(extra, keys_file)
        if shared and not args.drop_overlap:
            raise SystemExit(
                f"{args.test}: {len(shared)} of its {len(extra)} sentences are in the models' training data "
                f"(e.g. {shared[:3]}); pass --drop-overlap to score the rest"
            )
        if shared:
            extra = [s for s in extra if s.sentence_id not in set(shared)]
            notes.append(f"{args.test.name}: {len(shared)} sentences shared with the training data left out.")
        tests[args.test.name] = extra
        if args.format == "transcripts":
            ranking.add(args.test.name)
    for name, items in tests.items():
        shared = shared_with_training(items, keys_file)
        if shared and name != (args.test.name if args.test else None):
            raise SystemExit(f"{name}: {len(shared)} sentences are in the training data (e.g. {shared[:3]})")
    surface, surface_threshold = surface_baseline(say)
    results: dict[str, dict[str, dict[str, float]]] = {name: {} for name in tests}
    speed = {}
    for kind in MODELS:
        if kind not in manifest["files"]:
            continue
        model = load_checkworthy(shipped_path(kind))
        label = f"{kind}{' (default)' if kind == manifest['default'] else ''}"
        for name, items in tests.items():
            started = time.perf_counter()
            probability = model.probabilities([s.text for s in items])[:, -1]
            speed[(kind, name)] = len(items) / (time.perf_counter() - started)
            results[name][label] = summary(items, probability, model.threshold, ranking=name in ranking)
            say(f"{label} on {name}: F1 {results[name][label]['F1']:.3f}")
    for name, items in tests.items():
        results[name]["surface features only (LR)"] = summary(
            items, surface([s.text for s in items]), surface_threshold, ranking=name in ranking
        )
        results[name]["all check-worthy"] = summary(items, np.ones(len(items)), 0.5, ranking=name in ranking)
    lines = ["### Check-worthiness (F1 of the check-worthy class at each model's shipped threshold)", ""]
    for name, rows in results.items():
        n, pos = len(tests[name]), sum(s.checkworthy for s in tests[name])
        has_ranking = name in ranking
        header = ["model", "F1", "precision", "recall", "best F1 (oracle threshold)"]
        header += ["MAP", "MRR", "P@1", "P@5", "P@10", "P@30"] if has_ranking else []
        table_rows = []
        for model_name, m in rows.items():
            row: list[object] = [model_name, m["F1"], m["precision"], m["recall"], m["oracle F1"]]
            if has_ranking:
                row += [m["MAP"], m["MRR"], m["P@1"], m["P@5"], m["P@10"], m["P@30"]]
            table_rows.append(row)
        lines += [f"#### {name}: {n} sentences, {pos} check-worthy", "", markdown_table(header, table_rows), ""]
    default = manifest["default"]
    lines += [
        *notes,
        f"Shipped default: {default}. Thresholds chosen on dev (CheckThat! 2022 1A dev + dev_test, CheckThat! "
        "2021 1B dev, ClaimBuster groundtruth): the one maximising the mean of their F1. The CheckThat! 2023/2024 "
        "English test sets are kept aside (not here).",
        "Speed (sentences/s, this run, scoring included): "
        + ", ".join(f"{k} on {n.split(' (')[0]}: {v:.0f}" for (k, n), v in speed.items()),
        f"Machine: {machine()}.",
        "Reproduce: `python benchmarks/checkworthy.py`",
    ]
    default_label = f"{default} (default)"
    tweets, debates = results["CT22 1A test (tweets)"], results["CT21 1B test (transcripts)"]
    headline = {
        "benchmark": "checkworthy",
        "default": default,
        "ct22_1a_test_f1": round(tweets[default_label]["F1"], 4),
        "ct21_1b_test_f1": round(debates[default_label]["F1"], 4),
        "ct21_1b_test_map": round(debates[default_label]["MAP"], 4),
        **{
            f"{kind}_{key}": round(r[label]["F1" if key.endswith("f1") else "MAP"], 4)
            for kind in MODELS
            for label in (f"{kind} (default)" if kind == default else kind,)
            for key, r in (("ct22_1a_f1", tweets), ("ct21_1b_f1", debates), ("ct21_1b_map", debates))
            if label in r
        },
        "all_positive_ct22_1a_f1": round(tweets["all check-worthy"]["F1"], 4),
        "surface_ct22_1a_f1": round(tweets["surface features only (LR)"]["F1"], 4),
        "surface_ct21_1b_map": round(debates["surface features only (LR)"]["MAP"], 4),
    }
    if args.test:
        headline[f"{args.test.name}_f1"] = round(results[args.test.name][default_label]["F1"], 4)
    publish("checkworthy", "\n".join(lines), headline)


if __name__ == "__main__":
    main()
