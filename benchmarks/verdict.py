"""End-to-end verdict quality and latency of ``factscout check`` (Quin+ / QuanTemp++ pipeline).

Default evaluation set: the 202 held-out SciFact train claims
(``src/factscout/verify/models/scifact_heldout_ids.txt``): the stance head, the selector
threshold and the verdict thresholds were fitted on the other 607 train claims only, so every
figure here is out-of-sample. SciFact labels map SUPPORT -> supported, CONTRADICT -> refuted,
NEI -> not enough evidence.

* Table 1: 3-way verdict accuracy, macro-F1, weighted F1 and per-class F1 of the whole pipeline
  (retrieved evidence; ``--planner``, ``--retriever``) as the number of passages read varies
  (k = 1, 3, 5, 7, 10, as in QuanTemp++), against the baselines: majority class (of the
  training part), claim-only (logistic regression on the claim's MiniLM embedding, trained on
  the training part) and the same pipeline given the gold cited abstracts (an upper bound for
  retrieval).
* Latency (``benchmarks/results/verdict_latency.md``): wall-clock and CPU seconds per claim (p50 /
  p95, after warm-up) of ``check`` over a BM25 index of about 200k passages (SciFact abstracts +
  the 177k MultiFC snippets + AVeriTeC's answer pool), 2 CPU cores. ``--no-latency`` skips it,
  ``--latency-only`` runs only it.

Other splits in the same format: ``--eval-claims claims.jsonl --eval-corpus corpus.jsonl``
(BEIR queries with ``metadata.label`` in SUPPORT/CONTRADICT/NEI or supported/refuted/not enough
evidence; claims are all evaluated, baselines are then trained on all SciFact train claims).

    python benchmarks/verdict.py [--retriever hybrid|bm25] [--planner decompose|claim]
        [--eval-claims C --eval-corpus P] [--latency-claims 100] [--no-latency]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from _common import machine, markdown_table, publish, quiet, write_predictions

from factscout.check import Checker, CheckSettings, Retrieved
from factscout.datasets import data_root, load_dataset
from factscout.evaluate.classification import class_scores, macro_f1_interval
from factscout.formats.beir import read_claims, read_corpus
from factscout.formats.jsonl import read_jsonl
from factscout.nn.encoding import CachedEncoder
from factscout.records import Claim, Passage, Ranking
from factscout.retrieve import build_retriever
from factscout.text.onnx_encoder import fp32_onnx_encoder
from factscout.verify.stance import MODEL_DIR, StanceHead

LABELS = ("supported", "refuted", "not enough evidence")
MAP = {
    "SUPPORT": "supported",
    "SUPPORTS": "supported",
    "CONTRADICT": "refuted",
    "REFUTES": "refuted",
    "NEI": "not enough evidence",
    "NOT ENOUGH INFO": "not enough evidence",
}
KS = (1, 3, 5, 7, 10)


def gold_label(claim: Claim) -> str:
    raw = str(claim.meta.get("label", "")).strip()
    label = MAP.get(raw.upper(), raw.lower())
    if label not in LABELS:
        raise SystemExit(f"claim {claim.claim_id}: label {raw!r} is not one of {sorted(MAP)} or {LABELS}")
    return label


def scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, float]:
    return class_scores(gold, pred, LABELS)


COLUMNS = ["accuracy", "macro-F1", "weighted-F1", *[f"F1 {lab}" for lab in LABELS]]


def macro_f1_ci(gold: Sequence[str], pred: Sequence[str]) -> str:
    """95% bootstrap interval of the macro-F1 (claims resampled with replacement, 1,000 times)."""
    lo, hi = macro_f1_interval(gold, pred, LABELS)
    return f"[{lo:.3f}, {hi:.3f}]"


def row_of(name: str, k: object, gold: Sequence[str], pred: Sequence[str]) -> list[object]:
    s = scores(gold, pred)
    return [name, k, *[s[c] for c in COLUMNS[:2]], macro_f1_ci(gold, pred), *[s[c] for c in COLUMNS[2:]]]


def claim_only(train: Sequence[Claim], test: Sequence[Claim], encoder: Any) -> list[str]:
    from sklearn.linear_model import LogisticRegression

    x = encoder.encode([c.text for c in train])
    model = LogisticRegression(max_iter=2000, C=1.0).fit(x, [gold_label(c) for c in train])
    return [str(p) for p in model.predict(encoder.encode([c.text for c in test]))]


def latency_corpus(scifact: Sequence[Passage]) -> list[Passage]:
    passages = list(scifact)
    for n, (_, row) in enumerate(read_jsonl(data_root() / "multifc" / "snippets.jsonl.gz")):
        passages.append(Passage(f"mfc:{n}", str(row["claimID"]), row.get("title") or "", row.get("snippet") or ""))
    passages += [p for p in load_dataset("averitec_beir", "train").corpus]
    return passages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", default="hybrid", help="bm25 | dense | hybrid")
    parser.add_argument("--planner", default="decompose", help="planner used by check")
    parser.add_argument("--fusion", default="combsum-norm")
    parser.add_argument("--eval-claims", help="claims JSONL (BEIR queries with metadata.label)")
    parser.add_argument("--eval-corpus", help="corpus JSONL (BEIR) for --eval-claims")
    parser.add_argument("--latency-claims", type=int, default=100)
    parser.add_argument("--no-latency", action="store_true", help="skip the latency table")
    parser.add_argument("--latency-only", action="store_true", help="only the latency table")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N claims (smoke runs)")
    parser.add_argument("--no-cross", action="store_true", help="skip the stance cross-encoder rows")
    parser.add_argument("--name", default="verdict", help="results name: benchmarks/results/NAME.md")
    parser.add_argument(
        "--cross",
        default="cross",
        help="stance model of the cross-encoder rows: the shipped `cross`, or `cross:<file>` from train stance-cross",
    )
    parser.add_argument(
        "--selectors",
        default="stance-relevance",
        help="selectors scored besides threshold in the cross-encoder rows (comma-separated)",
    )
    parser.add_argument(
        "--latency-stance", default="head,cross", help="stance models timed besides the default (comma-separated)"
    )
    parser.add_argument(
        "--index",
        help="an index of the same corpus (`factscout index`): adds the row of check's default path, "
        "Checker.from_index(INDEX, CheckSettings()) (int8 inference, the index's stored sentence vectors)",
    )
    args = parser.parse_args()
    if bool(args.eval_claims) != bool(args.eval_corpus):
        parser.error("--eval-claims and --eval-corpus go together")
    quiet()

    scifact = load_dataset("scifact", "train")
    heldout = set((MODEL_DIR / "scifact_heldout_ids.txt").read_text().split())
    if args.eval_claims:
        test = list(read_claims(args.eval_claims))
        corpus = list(read_corpus(args.eval_corpus))
        train, name = list(scifact.claims), args.eval_claims
    else:
        test = [c for c in scifact.claims if c.claim_id in heldout]
        train = [c for c in scifact.claims if c.claim_id not in heldout]
        corpus, name = list(scifact.corpus), "SciFact train, held-out claims"
    if args.limit:
        test = test[: args.limit]
    if not args.no_latency:
        latency(args, test, scifact.corpus)
    if args.latency_only:
        return
    gold = [gold_label(c) for c in test]

    t0 = time.perf_counter()
    retriever = build_retriever(corpus, args.retriever, show_progress=False)
    build_s = time.perf_counter() - t0
    encoder = CachedEncoder(fp32_onnx_encoder())  # fp32 arithmetic: not check's default path (int8, read from an index)
    stance = StanceHead.load(encoder=encoder)

    rows: list[list[object]] = []
    headline: dict[str, object] = {"benchmark": args.name, "eval": name, "retriever": args.retriever}

    def add(name: str, k: object, preds: Sequence[str], key: str) -> None:
        rows.append(row_of(name, k, gold, preds))
        write_predictions(
            args.name,
            key.removesuffix("_macro_f1"),
            ({"claim_id": c.claim_id, "gold": g, "predicted": p} for c, g, p in zip(test, gold, preds, strict=True)),
        )
        headline[key] = round(scores(gold, preds)["macro-F1"], 4)

    majority = Counter(gold_label(c) for c in train).most_common(1)[0][0]
    add(f"majority class ({majority})", "-", [majority] * len(test), "majority_macro_f1")
    add(
        "claim only (logistic regression on the claim embedding)",
        "-",
        claim_only(train, test, encoder.encoder),
        "claim_only_macro_f1",
    )

    t = time.perf_counter()
    checker = Checker(
        retriever, CheckSettings(planner=args.planner, fusion=args.fusion), encoder=encoder, stance=stance
    )
    found = checker.retrieve(test)
    for k in KS:
        preds = [r.verdict.label for r in checker.judge(test, found, passages=k)]
        add(
            f"factscout check ({args.planner}, {args.retriever}, {args.fusion}), stance head",
            k,
            preds,
            f"check_k{k}_macro_f1",
        )
    check_s = time.perf_counter() - t
    checkers = {"head": checker}

    if not args.no_cross:
        t = time.perf_counter()
        variants = [("threshold", "cross")] + [
            (sel, f"cross_{sel.replace('-', '_')}") for sel in args.selectors.split(",") if sel.strip()
        ]
        for selector, key in variants:
            cross = Checker(
                retriever,
                CheckSettings(planner=args.planner, fusion=args.fusion, stance=args.cross, selector=selector),
                encoder=encoder,
            )
            checkers.setdefault("cross", cross)
            what = ("stance cross-encoder (the default)" if args.cross == "cross" else f"stance `{args.cross}`") + (
                "" if selector == "threshold" else f", `--selector {selector}`"
            )
            for k in KS:
                preds = [r.verdict.label for r in cross.judge(test, found, passages=k)]
                add(f"factscout check, {what}", k, preds, f"check_{key}_k{k}_macro_f1")
        cross_s = time.perf_counter() - t

    if args.index:
        t = time.perf_counter()
        default = Checker.from_index(args.index, CheckSettings())
        preds = [r.verdict.label for r in default.check_many(test)]
        path = default.provenance.get("sentence_vectors", "?")
        add(f"factscout check, the default path (`Checker.from_index`, sentence vectors {path})",
            default.settings.passages, preds, "check_default_path_macro_f1")  # fmt: skip
        headline["default_path_seconds"] = round(time.perf_counter() - t, 1)

    if not args.eval_claims:
        for kind, chk in checkers.items():
            gold_found = [
                Retrieved((), Ranking.from_scores(c.claim_id, {str(d): 1.0 for d in c.meta.get("cited_doc_ids", [])}))
                for c in test
            ]
            preds = [r.verdict.label for r in chk.judge(test, gold_found)]
            what = (
                "stance head"
                if kind == "head"
                else ("stance cross-encoder" if args.cross == "cross" else f"stance `{args.cross}`")
            )
            add(
                f"{what} + rule on the gold cited abstracts (upper bound)",
                "all",
                preds,
                f"gold_evidence_{kind}_macro_f1",
            )

    text = [
        f"### Verdict quality ({name}: {len(test)} claims, {dict(Counter(gold))})",
        "",
        markdown_table(["system", "passages read", *COLUMNS[:2], "macro-F1 95% CI", *COLUMNS[2:]], rows),
        "",
        f"Index ({args.retriever}, {len(corpus)} passages) built in {build_s:.0f} s; checking all k took {check_s:.0f} s "
        + (f"(the cross-encoder rows {cross_s:.0f} s more) " if not args.no_cross else "")
        + f"on {machine()}.",
        "",
        *retrieval_gains(),
    ]

    cross_flag = ("" if args.cross == "cross" else f" --cross {args.cross}") + (
        "" if args.name == "verdict" else f" --name {args.name}"
    )
    text += [
        "",
        "The other rows share one in-memory retriever and the fp32-arithmetic encoder, so their "
        "stance models differ only in the model; the default-path row is what `factscout check --index` answers.",
        "",
        f"Reproduce: `python benchmarks/verdict.py --retriever {args.retriever} --planner {args.planner}{cross_flag}"
        + (f" --index {args.index}`" if args.index else "`"),
    ]
    publish(args.name, "\n".join(text), headline)


def retrieval_gains() -> list[str]:
    """The re-ranker's and the fine-tuned dense encoder's nDCG@10 on the same held-out claims, as
    measured by their trainers' ``report`` stage (re-ranking 50 passages per claim with the
    cross-encoder costs about 8 s on these 2 CPU cores, too slow to redo in this benchmark)."""
    import json

    from factscout.rerank.cross_encoder import MODEL_DIR as RERANK_DIR
    from factscout.retrieve.adapter import MODEL_DIR as DENSE_DIR

    rows = []
    for folder, what in ((RERANK_DIR, "re-ranker"), (DENSE_DIR, "fine-tuned dense")):
        metrics = json.loads((folder / "metrics.json").read_text())
        for system, m in metrics["heldout"].items():
            rows.append([what, system, m["nDCG@10"], m["R@100"]])
    return [
        "#### Re-ranker and fine-tuned dense retriever, same 202 held-out claims (nDCG@10, R@100)",
        "",
        markdown_table(["model", "system", "nDCG@10", "R@100"], rows),
        "",
        "From `src/factscout/rerank/models/metrics.json` and `src/factscout/retrieve/models/metrics.json`, written by "
        "`factscout train rerank --out DIR` and `factscout train dense --out DIR` (their model cards give the "
        "exact commands and significance tests).",
    ]


def latency(args: argparse.Namespace, claims: Sequence[Claim], scifact_corpus: Sequence[Passage]) -> None:
    """Wall-clock and process CPU seconds of ``check`` per claim, one claim at a time, with fresh
    models (nothing cached from the quality run): the default settings, then each stance model
    of ``--latency-stance`` (the cost of that optional step)."""
    import os

    passages = latency_corpus(scifact_corpus)
    big = build_retriever(passages, "bm25", show_progress=False)
    sample = list(claims[: args.latency_claims])
    default = CheckSettings(planner=args.planner, fusion=args.fusion)
    variants = [("default", default)] + [
        (f"`--stance {name}`", CheckSettings(planner=args.planner, fusion=args.fusion, stance=name))
        for name in (n.strip() for n in args.latency_stance.split(","))
        if name and name != default.stance
    ]
    rows, headline = [], {"benchmark": "verdict_latency", "passages": len(passages)}
    for label, settings in variants:
        checker = Checker(big, settings)
        checker.check(sample[0])  # warm-up: models load
        walls, cpus = [], []
        load = os.getloadavg()[0]
        for c in sample[1:]:
            t, p = time.perf_counter(), time.process_time()
            checker.check(c)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - p)
        load = (load + os.getloadavg()[0]) / 2
        stats = [*np.percentile(walls, [50, 95]), *np.percentile(cpus, [50, 95])]
        rows.append([f"{label} (stance {settings.stance})", len(walls), *stats, load])
        key = "" if label == "default" else f"_{settings.stance}"
        headline.update(
            {
                f"wall_p50_s{key}": round(float(stats[0]), 3),
                f"wall_p95_s{key}": round(float(stats[1]), 3),
                f"cpu_p50_s{key}": round(float(stats[2]), 3),
                f"cpu_p95_s{key}": round(float(stats[3]), 3),
                f"load_average{key}": round(load, 2),
            }
        )
    text = [
        f"### Latency of `check` per claim ({len(passages):,} passages, BM25, {args.planner} planner, "
        f"{CheckSettings().passages} passages read, one claim at a time)",
        "",
        markdown_table(
            ["settings", "claims", "wall p50 s", "wall p95 s", "CPU p50 s", "CPU p95 s", "load average"], rows
        ),
        "",
        f"On {machine()}. CPU seconds are the process's own (all its threads), so they do not grow when other jobs "
        "share the cores; the wall-clock times do (the load average is the machine's during the run; on 2 quiet "
        "cores it is about 1).",
        "",
        f"Reproduce: `python benchmarks/verdict.py --latency-only --planner {args.planner} "
        f"--latency-stance {args.latency_stance}`",
    ]
    publish("verdict_latency", "\n".join(text), headline)


if __name__ == "__main__":
    main()
