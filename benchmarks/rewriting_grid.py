"""The candidate-ranking rewrite policy on every endpoint x dataset, beside the claim, the best
keyword baseline and its headroom: every endpoint on every dataset in one table.

For each dataset (its held-out claims as in ``benchmarks/rewriting.py``: SciFact's 202, CheckThat's
dev-test tweets, a seeded 20% of AVeriTeC train and of COVID-Fact) and each endpoint (``--retrievers``), on the same held-out claims:

* the original claim, and one random edit of it (seed 0);
* the keyword baselines: stop-word removal, top-k IDF terms (k tuned on at most 300 of the training
  claims) and, with ``--keybert``, KeyBERT-style MiniLM keywords (k tuned the same way); the best
  of them on the held-out claims is the reference;
* the candidate ranker (``rewrite/ranker.py``), trained on the training claims from the
  endpoint's rewards (target and margin by 5-fold cross-validation on them), searching the
  endpoint for its candidates at inference, never reading a held-out qrel;
* the oracle over the ranker's candidates (reads qrels: the headroom).

The trajectory-trained policies (pointer, classifier, DT) are in ``benchmarks/rewriting.py``'s
tables; this one is cheap enough to run everywhere (no BFS, no torch training). Dense kNN encodes
every candidate query (about 80 per claim), so give it smaller ``--max-train``/``--max-test``.
Another split: ``--claims C --qrels Q --corpus P --heldout IDS`` (one dataset named ``custom``).
``--no-ranker`` scores the baselines only (minutes where a ranker takes an hour), on the same
held-out claims and with the same tuning claims as a full run with the same ``--max-train``/``--max-test``.

    python benchmarks/rewriting_grid.py [--datasets scifact,averitec] [--retrievers bm25-and,bm25-plain,bm25]
        [--combos scifact:bm25,averitec:bm25-plain] [--name rewriting_grid]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from _common import machine, markdown_table, publish, quiet
from rewriting import load_split, paired_p, reproduce_args, sample

from factscout.retrieve import build_retriever
from factscout.rewrite import SearchEnvironment
from factscout.rewrite.keywords import TUNE_MAX_STEPS, IdfTable, KeyBertPolicy, StopwordPolicy, TopIdfPolicy, tune_k
from factscout.rewrite.policy import RandomEditPolicy, RewritePolicy, rewrite, save_policy
from factscout.rewrite.ranker import RankerConfig
from factscout.training.rewrite.ranker import RankerSettings, train_ranker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--datasets", default="scifact,averitec", help="from scifact, averitec, checkthat2022, covidfact (or custom)"
    )
    parser.add_argument("--retrievers", default="bm25-and,bm25-plain,bm25", help="endpoints, comma-separated")
    parser.add_argument(
        "--combos", help="dataset:endpoint pairs to run instead of every dataset x endpoint (e.g. scifact:bm25)"
    )
    parser.add_argument("--max-train", type=int, default=1000, help="training claims per dataset (seeded sample)")
    parser.add_argument("--max-test", type=int, default=400, help="held-out claims per dataset (seeded sample)")
    parser.add_argument("--trees", type=int, default=RankerSettings().trees, help="the reward model's trees")
    parser.add_argument("--keybert", action="store_true", help="also the KeyBERT-style baseline (MiniLM)")
    parser.add_argument("--no-ranker", action="store_true", help="the baselines only: no ranker is trained")
    parser.add_argument("--save-policies", help="write each trained ranker to DIR/<dataset>-<endpoint>/")
    parser.add_argument(
        "--booster", choices=("exact", "hist"), default="exact", help="the reward model's gradient boosting"
    )
    parser.add_argument(
        "--semantic",
        default="",
        help="an encoder (minilm), lexical or lexical-idf: the ranker also reads how close the returned passages "
        "are to the claim",
    )
    parser.add_argument(
        "--consensus",
        action="store_true",
        help="the ranker also reads how each candidate's results agree with all the candidates' fused results",
    )
    parser.add_argument("--claims", help="with --qrels, --corpus, --heldout: another split (dataset 'custom')")
    parser.add_argument("--qrels")
    parser.add_argument("--corpus")
    parser.add_argument("--heldout")
    parser.add_argument(
        "--name", default="rewriting_grid", help="results name: benchmarks/results/<name>.md and <name>/manifest.json"
    )
    args = parser.parse_args()
    quiet()
    datasets = ["custom"] if args.claims else args.datasets.split(",")
    combos = [tuple(pair.split(":", 1)) for pair in args.combos.split(",")] if args.combos else []
    if combos:
        datasets = list(dict.fromkeys(c[0] for c in combos))
        args.retrievers = ",".join(dict.fromkeys(c[1] for c in combos))
    rows, headline, notes = [], {"benchmark": args.name}, []
    for dataset in datasets:
        claims, qrels, corpus, held, name = load_split(dataset, args)
        train = sample([c for c in claims if c.claim_id not in held and c.claim_id in qrels], args.max_train)
        test = sample([c for c in claims if c.claim_id in held and c.claim_id in qrels], args.max_test)
        idf = IdfTable.from_passages(corpus)
        passages = {p.passage_id: p for p in corpus}
        for endpoint in args.retrievers.split(","):
            if combos and (dataset, endpoint) not in combos:
                continue
            t = time.perf_counter()
            retriever = build_retriever(corpus, endpoint, show_progress=False)
            env = SearchEnvironment(retriever, qrels, "AP@50")
            tune = sample(train, 300)
            k_idf, _ = tune_k(lambda k: TopIdfPolicy(k, idf), tune, env)  # noqa: B023
            baselines = {"stop-word removal": StopwordPolicy(), f"top-{k_idf} IDF": TopIdfPolicy(k_idf, idf)}
            if args.keybert:
                from factscout.rewrite.state import state_encoder

                encoder = state_encoder("minilm")
                k_bert, _ = tune_k(lambda k: KeyBertPolicy(k, encoder), tune, env)  # noqa: B023
                baselines[f"KeyBERT-{k_bert}"] = KeyBertPolicy(k_bert, encoder)
            policies: dict[str, RewritePolicy] = dict(baselines)
            if not args.no_ranker:
                config = RankerConfig(retriever=endpoint, semantic=args.semantic, consensus=args.consensus)
                settings = RankerSettings(trees=args.trees, booster=args.booster)
                ranker = train_ranker(train, qrels, passages, retriever, config, settings, idf=idf)
                if args.save_policies:
                    save_policy(ranker, Path(args.save_policies) / f"{dataset}-{endpoint}")
                policies["ranker"] = ranker
            claim = np.array([env.reward(c, c.text) for c in test])
            random_edit = np.array(
                [env.reward(c, rewrite(c, RandomEditPolicy(seed=0), max_steps=1).final) for c in test]
            )
            scored = {
                label: np.array([env.reward(c, rewrite(c, policy, max_steps=TUNE_MAX_STEPS).final) for c in test])
                for label, policy in policies.items()
            }
            best = max(baselines, key=lambda label: scored[label].mean())
            b = scored[best]
            every = "; ".join(f"{label} {scored[label].mean():.4f}" for label in baselines)
            row = [
                dataset,
                endpoint,
                f"{claim.mean():.4f}",
                f"{random_edit.mean():.4f}",
                every,
                f"{b.mean():.4f} ({best})",
            ]
            key = f"{dataset}_{endpoint}"
            headline |= {
                f"{key}_claim": round(float(claim.mean()), 4),
                f"{key}_random_edit": round(float(random_edit.mean()), 4),
                f"{key}_stopwords": round(float(scored["stop-word removal"].mean()), 4),
                f"{key}_best_keyword": round(float(b.mean()), 4),
            }
            if "ranker" in policies:
                r = scored["ranker"]
                oracle = np.array(
                    [max(env.rewards(c, [x.text for x in ranker.candidate_queries(c.text)])) for c in test]
                )
                row += [
                    f"{r.mean():.4f}", _ratio(r.mean(), claim.mean()), f"{paired_p(r, claim):.4f}",
                    _ratio(r.mean(), b.mean()), f"{paired_p(r, b):.4f}", f"{oracle.mean():.4f}",
                    f"{ranker.training['target']}, {ranker.training['margin']}",
                ]  # fmt: skip
                headline |= {
                    f"{key}_ranker": round(float(r.mean()), 4),
                    f"{key}_candidate_oracle": round(float(oracle.mean()), 4),
                }
            else:
                row += ["-"] * 7
            rows.append([*row, f"{time.perf_counter() - t:.0f}"])
            print(rows[-1], flush=True)
            publish(
                args.name,
                table(
                    rows,
                    [*notes, f"{dataset}: {name}, {len(train)} training claims, {len(test)} held-out claims"],
                    args.semantic,
                    args.consensus,
                    args.no_ranker,
                ),
                headline,
            )
        notes.append(f"{dataset}: {name}, {len(train)} training claims, {len(test)} held-out claims")


def table(rows: list, notes: list[str], semantic: str = "", consensus: bool = False, no_ranker: bool = False) -> str:
    """The published text: the table so far (a run publishes after every endpoint, so a stopped
    run leaves the rows it finished)."""
    reads = (
        f"The ranker reads what the endpoint returns for each candidate (counts, scores) and how close the "
        f"returned passages are to the claim ({semantic} cosines, `--semantic {semantic}`). "
        if semantic
        else "The ranker reads what the endpoint returns for each candidate (counts, scores), not the passages. "
    )
    if consensus:
        reads += (
            "It also reads how each candidate's top 10 agree with all the claim's candidates' rankings, fused by "
            "reciprocal rank (`--consensus`). "
        )
    if no_ranker:
        reads = "Baselines only (`--no-ranker`): no ranker was trained. "
    text = "\n".join(
        [
            "### The candidate ranker on every endpoint (held-out claims, mAP@50)",
            "",
            markdown_table(
                [
                    "dataset",
                    "endpoint",
                    "claim",
                    "random edit (1 edit, seed 0)",
                    "keyword baselines",
                    "best keyword (k tuned on train)",
                    "ranker",
                    "ranker vs claim",
                    "p vs claim",
                    "ranker vs best keyword",
                    "p vs keyword",
                    "oracle over its candidates",
                    "target, margin (chosen by CV on train)",
                    "seconds",
                ],
                rows,
            ),
            "",
            reads
            + "p: paired sign-flip permutation test over the held-out claims (AP@50). "
            + "; ".join(notes)
            + f". On {machine()}.",
            "",
            f"Reproduce: `{shlex.join(['python', 'benchmarks/rewriting_grid.py', *reproduce_args(sys.argv[1:])])}`",
        ]
    )
    return text


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "n/a"


if __name__ == "__main__":
    main()
