"""Learned query rewriting (Kazemi et al.) on held-out claims: original / random / one-action
classifier / decision transformer, BM25, reward AP@50 (mean over claims = mAP@50), R@50, RR.

Default data: SciFact train. BFS trajectories are generated on the training part (the claims not
in ``src/factscout/verify/models/scifact_heldout_ids.txt``); the policies are trained on them and
evaluated on the 202 held-out claims. Two inference protocols for the decision transformer:
``no qrels`` (edits until ``--max-steps``; nothing about the claim's relevant passages is read)
and ``env stop`` (stops when no valid edit improves the reward: it reads the qrels, so it is an
optimistic upper bound, not a deployable setting). The DT is CPU-sized here (``--dt-hidden``,
``--dt-layers``, ``--dt-heads``; the paper's 768/6/8 is the library default) with frozen MiniLM
states. Another split: ``--claims C --qrels Q --corpus P --heldout IDS``.

    python benchmarks/rewriting.py [--dt-hidden 128 --dt-layers 2 --dt-heads 4] [--epochs 30]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _common import machine, markdown_table, publish, quiet, write_predictions

from factscout.datasets import data_root, load_dataset
from factscout.formats.beir import read_claims, read_corpus
from factscout.formats.trec import read_qrels
from factscout.retrieve import build_retriever
from factscout.rewrite import ACTIONS, BfsConfig, SearchEnvironment, generate_trajectories, read_trajectories
from factscout.rewrite.policy import (
    ClassifierConfig,
    DtConfig,
    OriginalPolicy,
    RandomEditPolicy,
    rewrite,
    save_policy,
)
from factscout.training.rewrite import TrainSettings, train_classifier, train_decision_transformer
from factscout.verify.stance import MODEL_DIR

MEASURES = ("AP@50", "R@50", "RR")
RETRIEVER_NAMES = {"bm25": "BM25", "dense": "dense kNN, MiniLM"}


def reproduce_args(argv: list[str]) -> list[str]:
    """The command-line arguments that shape the results (drops ``--save-policies DIR``)."""
    out, skip = [], False
    for arg in argv:
        if skip or arg == "--save-policies" or arg.startswith("--save-policies="):
            skip = arg == "--save-policies"
            continue
        out.append(arg)
    return out


def sample(claims: list, limit: int | None) -> list:
    """At most ``limit`` of ``claims``, a seeded sample kept in the claims' order."""
    if limit is None or len(claims) <= limit:
        return claims
    keep = set(np.random.default_rng(0).choice(len(claims), limit, replace=False).tolist())
    return [c for i, c in enumerate(claims) if i in keep]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--dataset",
        choices=("scifact", "checkthat2022", "averitec", "covidfact"),
        default="scifact",
        help="scifact: train part vs the 202 held-out claims; checkthat2022: train tweets vs dev-test tweets; "
        "averitec (BEIR view: claim -> gold QA answers) and covidfact (claim -> gold evidence sentences): a "
        "seeded 20%% of the claims held out",
    )
    parser.add_argument("--retriever", choices=("bm25", "dense"), default="bm25", help="the black-box search endpoint")
    parser.add_argument(
        "--max-train", type=int, help="BFS on at most this many training claims (seeded sample; bounds CPU time)"
    )
    parser.add_argument("--max-test", type=int, help="evaluate on at most this many held-out claims (seeded sample)")
    parser.add_argument("--save-policies", help="write the trained policies to DIR/<dataset>-<retriever>-<policy>/")
    parser.add_argument("--claims", help="claims JSONL (BEIR queries); with --qrels, --corpus, --heldout")
    parser.add_argument("--qrels")
    parser.add_argument("--corpus")
    parser.add_argument("--heldout", help="file of held-out claim ids (one per line)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--dt-hidden", type=int, default=128)
    parser.add_argument("--dt-layers", type=int, default=2)
    parser.add_argument("--dt-heads", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--negatives", type=int, default=2, help="random-edit sequences per claim (0: none)")
    args = parser.parse_args()
    quiet()
    import torch

    torch.set_num_threads(1)  # small models: one thread is faster than two on 2 shared cores
    if args.claims:
        claims, qrels, corpus = list(read_claims(args.claims)), read_qrels(args.qrels), list(read_corpus(args.corpus))
        held = set(Path(args.heldout).read_text().split())
        name = args.claims
    elif args.dataset == "checkthat2022":
        data, test_data = load_dataset("checkthat2022", "train"), load_dataset("checkthat2022", "dev-test")
        claims, corpus = [*data.claims, *test_data.claims], list(data.corpus)
        qrels = {**data.qrels, **test_data.qrels}
        held = {c.claim_id for c in test_data.claims}
        name = "CheckThat 2022 2A (train -> dev-test)"
    elif args.dataset in ("averitec", "covidfact"):
        if args.dataset == "averitec":
            data = load_dataset("averitec_beir", "train")
            claims, qrels, corpus = list(data.claims), data.qrels, list(data.corpus)
            name = "AVeriTeC train, BEIR view"
        else:
            folder = data_root() / "covidfact" / "beir"
            claims, corpus = list(read_claims(folder / "queries.jsonl")), list(read_corpus(folder / "corpus.jsonl"))
            qrels = read_qrels(folder / "qrels" / "test.tsv")
            name = "COVID-Fact, BEIR view"
        ids = sorted(c.claim_id for c in claims if c.claim_id in qrels)
        held = set(np.random.default_rng(0).permutation(ids)[: len(ids) // 5].tolist())
    else:
        data = load_dataset("scifact", "train")
        claims, qrels, corpus = list(data.claims), data.qrels, list(data.corpus)
        held = set((MODEL_DIR / "scifact_heldout_ids.txt").read_text().split())
        name = "SciFact train"
    train = sample([c for c in claims if c.claim_id not in held and c.claim_id in qrels], args.max_train)
    test = sample([c for c in claims if c.claim_id in held and c.claim_id in qrels], args.max_test)
    retriever = build_retriever(corpus, args.retriever, show_progress=False)
    envs = {m: SearchEnvironment(retriever, qrels, m) for m in MEASURES}
    env = envs["AP@50"]

    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bfs.jsonl"
        config = BfsConfig(negatives=args.negatives)
        summary = generate_trajectories(train, env, out, config, workers=args.workers)
        with_negatives = read_trajectories(out)
    trajectories = [tr for tr in with_negatives if not tr.negative]
    bfs_s = time.perf_counter() - t
    settings = TrainSettings(epochs=args.epochs, lr=3e-4)
    dt_config = {"hidden_size": args.dt_hidden, "n_layer": args.dt_layers, "n_head": args.dt_heads}
    t = time.perf_counter()
    classifier = train_classifier(trajectories, ClassifierConfig(), TrainSettings(epochs=args.epochs, lr=1e-3))
    dense = train_decision_transformer(trajectories, DtConfig(**dt_config, reward="dense"), settings)
    sparse = train_decision_transformer(trajectories, DtConfig(**dt_config, reward="sparse"), settings)
    if args.negatives:
        dense_neg = train_decision_transformer(with_negatives, DtConfig(**dt_config, reward="dense"), settings)
        sparse_neg = train_decision_transformer(with_negatives, DtConfig(**dt_config, reward="sparse"), settings)
    train_s = time.perf_counter() - t

    runs = [
        ("original claim", OriginalPolicy(), None, args.max_steps),
        ("random edit (1 edit, seed 0)", RandomEditPolicy(seed=0), None, 1),
        ("one-action classifier", classifier.policy, None, 1),
        ("DT dense, no qrels at inference", dense.policy, None, args.max_steps),
        ("DT sparse, no qrels at inference", sparse.policy, None, args.max_steps),
        ("DT dense, env stop (reads qrels: upper bound)", dense.policy, env, args.max_steps),
        ("DT sparse, env stop (reads qrels: upper bound)", sparse.policy, env, args.max_steps),
    ]
    if args.negatives:
        runs += [
            ("DT dense + negatives, no qrels at inference", dense_neg.policy, None, args.max_steps),
            ("DT sparse + negatives, no qrels at inference", sparse_neg.policy, None, args.max_steps),
            ("DT dense + negatives, env stop (upper bound)", dense_neg.policy, env, args.max_steps),
            ("DT sparse + negatives, env stop (upper bound)", sparse_neg.policy, env, args.max_steps),
        ]
    stem = "rewriting" if args.dataset == "scifact" or args.claims else f"rewriting_{args.dataset}"
    result = stem if args.retriever == "bm25" else f"{stem}_{args.retriever}"
    rows, headline, actions = [], {"benchmark": "rewriting", "eval": name, "retriever": args.retriever}, {}
    base = None
    kinds_of: dict[str, Counter[str]] = {}
    for label, policy, inference_env, steps in runs:
        traces = [rewrite(c, policy, inference_env, max_steps=steps) for c in test]
        queries = [tr.final for tr in traces]
        kinds_of[label] = Counter(ACTIONS[a].kind for tr in traces for a in tr.actions)
        per_claim = {m: [envs[m].reward(c, q) for c, q in zip(test, queries, strict=True)] for m in MEASURES}
        scores = {m: float(np.mean(values)) for m, values in per_claim.items()}
        write_predictions(
            result,
            label,
            (
                {"claim_id": c.claim_id, "claim": c.text, "query": q, "actions": [int(a) for a in tr.actions]}
                | {m: float(per_claim[m][i]) for m in MEASURES}
                for i, (c, q, tr) in enumerate(zip(test, queries, traces, strict=True))
            ),
        )
        base = base if base is not None else scores["AP@50"]
        rows.append([label, *[scores[m] for m in MEASURES], f"{scores['AP@50'] / base - 1:+.1%}"])
        headline[label] = round(scores["AP@50"], 4)
        changed = sum(q != c.text for c, q in zip(test, queries, strict=True))
        actions[label] = changed
    kinds = Counter(ACTIONS[s.action].kind for tr in trajectories for s in tr.steps)
    kind_names = ("remove", "swap_synonym", "add_synonym", "present_simple")
    kind_rows = [[label, sum(k.values()), *[k.get(n, 0) for n in kind_names]] for label, k in kinds_of.items()]
    text = "\n".join(
        [
            f"### Query rewriting on held-out claims ({name}: {len(train)} training claims, {len(test)} held out; {RETRIEVER_NAMES[args.retriever]})",
            "",
            markdown_table(["policy", "mAP@50", "R@50", "MRR", "mAP@50 vs original"], rows),
            "",
            f"Held-out claims whose query changed: {actions}. BFS on the training claims: {summary.statuses}, "
            f"{len(trajectories)} trajectories in {bfs_s:.0f} s; edit kinds in them: {dict(kinds)}. Training "
            f"(classifier + {4 if args.negatives else 2} DTs, {dt_config}, frozen MiniLM states, {args.epochs} epochs) {train_s:.0f} s "
            f"on {machine()}.",
            "",
            "Edits the policies made on the held-out claims, by kind:",
            "",
            markdown_table(["policy", "edits", *kind_names], kind_rows),
            "",
            *(
                [
                    f"Negative training sequences: {args.negatives} random-edit sequences per training claim "
                    f"({sum(tr.negative for tr in with_negatives)} in all) for the `+ negatives` rows; the "
                    "classifier never trains on them.",
                    "",
                ]
                if args.negatives
                else []
            ),
            f"Reproduce: `{shlex.join(['python', 'benchmarks/rewriting.py', *reproduce_args(sys.argv[1:])])}`",
        ]
    )
    if args.save_policies:
        for label, trained in (("classifier", classifier), ("dt-dense", dense), ("dt-sparse", sparse)):
            save_policy(trained.policy, Path(args.save_policies) / f"{args.dataset}-{args.retriever}-{label}")
    publish(result, text, headline)


if __name__ == "__main__":
    main()
