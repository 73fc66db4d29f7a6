"""Learned query rewriting (Kazemi et al.) on held-out claims: original / random / keyword
baselines (stop-word removal, top-k IDF and KeyBERT-style MiniLM keywords, k tuned on train) /
one-action classifier / decision transformer / token-pointing policy with a learned stop / the
oracle (best BFS or keep-set sequence, reads qrels: the headroom), on any endpoint
(``--retriever bm25 | bm25-plain | bm25-and | dense``), reward AP@50 (mean over claims =
mAP@50), R@50, RR.

Default data: SciFact train. BFS trajectories are generated on the training part (the claims not
in ``src/factscout/verify/models/scifact_heldout_ids.txt``); the policies are trained on them and
evaluated on the 202 held-out claims. Two inference protocols for the decision transformer:
``no qrels`` (edits until ``--max-steps``; nothing about the claim's relevant passages is read)
and ``env stop`` (stops when no valid edit improves the reward: it reads the qrels, so it is an
optimistic upper bound, not a deployable setting). The token-pointing policy stops by itself
(a learned stop action); its step limit follows the endpoint: the 95th percentile of the
training trajectories' lengths. Trajectories come from BFS plus keep-set search
(``--no-keep-set`` for BFS only), and with ``--pseudo-claims N`` also from N inverse-cloze
pseudo-claims of the corpus (searched on a training copy of the index without their sentence;
a second pointer row shows whether they help). The candidate ranker (``rewrite/ranker.py``) is
trained on every training claim from the endpoint's rewards of its candidate keyword queries (no
trajectories; its target and margin by cross-validation on the training claims) and, at
inference, searches the endpoint for each candidate and keeps the one its models predict best; a
second oracle row gives the best of its candidates (its headroom). ``--pointer-history K`` adds
the decision transformer with the token-pointing action head (over the last K steps; epoch, stop
margin and conditioning return chosen by rollouts on validation claims), and ``--name`` writes
the results under another name; ``--pointer-finetune N`` adds the token-pointing policy with its
MiniLM encoder fine-tuned with it for N epochs (its CPU cost is in the notes). The DT is CPU-sized here (``--dt-hidden``,
``--dt-layers``, ``--dt-heads``; the paper's 768/6/8 is the library default) with frozen MiniLM
states. Another split: ``--claims C --qrels Q --corpus P --heldout IDS``.

    python benchmarks/rewriting.py [--retriever bm25-and] [--pseudo-claims 2000] [--epochs 30]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import machine, markdown_table, publish, quiet, write_predictions

from factscout.datasets import data_root, load_dataset
from factscout.formats.beir import read_claims, read_corpus
from factscout.formats.trec import read_qrels
from factscout.retrieve import build_retriever
from factscout.rewrite import (
    ACTIONS,
    BfsConfig,
    SearchEnvironment,
    generate_trajectories,
    read_trajectories,
    search_claim,
)
from factscout.rewrite.keywords import TUNE_MAX_STEPS, IdfTable, KeyBertPolicy, StopwordPolicy, TopIdfPolicy, tune_k
from factscout.rewrite.pointer import PointerConfig, PointerPolicy
from factscout.rewrite.policy import (
    ClassifierConfig,
    DtConfig,
    OriginalPolicy,
    RandomEditPolicy,
    rewrite,
    save_policy,
)
from factscout.rewrite.state import state_encoder
from factscout.rewrite.trajectories import finished_claims
from factscout.training.rewrite.pointer import pointer_stop_claims, step_limit, train_pointer
from factscout.training.rewrite.pseudo_claims import inverse_cloze
from factscout.training.rewrite.ranker import train_ranker
from factscout.training.rewrite.trainer import TrainSettings, train_classifier, train_decision_transformer
from factscout.verify.stance import MODEL_DIR

MEASURES = ("AP@50", "R@50", "RR")
RANKER = "candidate ranker (learned; observes the endpoint's results)"
STOP_MARGINS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)  # the pointer's stop margins tried on the validation claims
TARGET_RETURNS = (0.0, 0.25, 0.5, 1.0)  # the returns the token-pointing DT is conditioned on, tried there too
POINTER_DT = "decision transformer, token-pointing head, learned stop"
POINTER_FT = "token-pointing policy, MiniLM fine-tuned with it"
RETRIEVER_NAMES = {
    "bm25": "tuned BM25",
    "bm25-plain": "BM25 with Elasticsearch's defaults",
    "bm25-and": "conjunctive BM25 (every term must match)",
    "dense": "dense kNN, MiniLM",
}


def reproduce_args(argv: list[str]) -> list[str]:
    """The command-line arguments that shape the results (drops ``--save-policies DIR``)."""
    out, skip = [], False
    for arg in argv:
        if skip or arg == "--save-policies" or arg.startswith("--save-policies="):
            skip = arg == "--save-policies"
            continue
        out.append(arg)
    return out


def load_split(dataset: str, args: argparse.Namespace) -> tuple[list, dict, list, set, str]:
    """(claims, qrels, corpus, held-out claim ids, name) of a dataset: SciFact train vs its 202
    held-out claims, CheckThat train tweets vs dev-test tweets, a seeded 20% of AVeriTeC train's and
    COVID-Fact's claims held out; ``custom`` reads ``args.claims/qrels/corpus/heldout``."""
    if dataset == "custom":
        claims, qrels, corpus = list(read_claims(args.claims)), read_qrels(args.qrels), list(read_corpus(args.corpus))
        held = set(Path(args.heldout).read_text().split())
        name = args.claims
    elif dataset == "checkthat2022":
        data, test_data = load_dataset("checkthat2022", "train"), load_dataset("checkthat2022", "dev-test")
        claims, corpus = [*data.claims, *test_data.claims], list(data.corpus)
        qrels = {**data.qrels, **test_data.qrels}
        held = {c.claim_id for c in test_data.claims}
        name = "CheckThat 2022 2A (train -> dev-test)"
    elif dataset in ("averitec", "covidfact"):
        if dataset == "averitec":
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
    return claims, qrels, corpus, held, name


def scale_data(args: argparse.Namespace) -> tuple[list, list[str], dict[str, int]]:
    """(improving trajectories, texts of claims best left alone, claims per part) of a
    ``bfs_scale.py`` work folder for ``args.retriever``: every part but ``args.dataset``'s own
    training claims (the benchmark searches those itself), claim ids prefixed with the part, at
    most ``args.scale_claims`` claims (a seeded sample)."""
    parts = []
    for traj in sorted(args.scale_trajectories.glob(f"*/*/traj-{args.retriever}.jsonl")):
        part = f"{traj.parent.parent.name}/{traj.parent.name}"
        if part != f"{args.dataset}/real":
            finished = finished_claims(traj)
            parts.append(
                (part, traj, [c for c in read_claims(traj.parent / "queries.jsonl") if c.claim_id in finished])
            )
    if not parts:
        raise SystemExit(f"no traj-{args.retriever}.jsonl under {args.scale_trajectories}/*/*/")
    searched = [(part, c) for part, _, claims in parts for c in claims]
    keep = {(part, c.claim_id) for part, c in sample(searched, args.scale_claims)}
    trajectories, stops, counts = [], [], Counter()
    for part, traj, claims in parts:
        chosen = [c for c in claims if (part, c.claim_id) in keep]
        counts[part] = len(chosen)
        ids = {c.claim_id for c in chosen}
        found = [tr for tr in read_trajectories(traj) if tr.claim_id in ids and not tr.negative]
        trajectories += [replace(tr, claim_id=f"{part}:{tr.claim_id}") for tr in found]
        stops += pointer_stop_claims(traj, chosen)
    return trajectories, stops, dict(counts)


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
    parser.add_argument(
        "--retriever", choices=tuple(RETRIEVER_NAMES), default="bm25", help="the black-box search endpoint"
    )
    parser.add_argument("--keep-set", action=argparse.BooleanOptionalAction, default=True, help="keep-set trajectories")
    parser.add_argument(
        "--pseudo-claims", type=int, default=0, help="inverse-cloze pseudo-claims for a second pointer row"
    )
    parser.add_argument("--pointer-epochs", type=int, default=12)
    parser.add_argument(
        "--pointer-history",
        type=int,
        default=0,
        help="also the decision transformer with the token-pointing head, over this many last steps",
    )
    parser.add_argument(
        "--pointer-finetune",
        type=int,
        default=0,
        help="also the token-pointing policy with its MiniLM encoder fine-tuned, for this many epochs",
    )
    parser.add_argument("--name", help="results name (default: rewriting[_<dataset>][_<retriever>])")
    parser.add_argument(
        "--scale-trajectories",
        type=Path,
        help="a benchmarks/bfs_scale.py work folder: a pointer row also trained on its trajectories for this endpoint "
        "(every part but this dataset's own training claims)",
    )
    parser.add_argument(
        "--scale-claims", type=int, help="with --scale-trajectories: a seeded sample of this many claims"
    )
    parser.add_argument(
        "--pointer-idf",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="idf of the corpus as a token feature",
    )
    parser.add_argument("--no-dt", action="store_true", help="skip the decision transformer rows")
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
    claims, qrels, corpus, held, name = load_split("custom" if args.claims else args.dataset, args)
    train = sample([c for c in claims if c.claim_id not in held and c.claim_id in qrels], args.max_train)
    test = sample([c for c in claims if c.claim_id in held and c.claim_id in qrels], args.max_test)
    retriever = build_retriever(corpus, args.retriever, show_progress=False)
    envs = {m: SearchEnvironment(retriever, qrels, m) for m in MEASURES}
    env = envs["AP@50"]

    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bfs.jsonl"
        config = BfsConfig(negatives=args.negatives, keep_set=args.keep_set)
        summary = generate_trajectories(train, env, out, config, workers=args.workers)
        with_negatives = read_trajectories(out)
        stop_texts = pointer_stop_claims(out, train)
    trajectories = [tr for tr in with_negatives if not tr.negative]
    bfs_s = time.perf_counter() - t
    steps_limit = step_limit(trajectories)
    settings = TrainSettings(epochs=args.epochs, lr=3e-4)
    dt_config = {"hidden_size": args.dt_hidden, "n_layer": args.dt_layers, "n_head": args.dt_heads}
    t = time.perf_counter()
    classifier = train_classifier(trajectories, ClassifierConfig(), TrainSettings(epochs=args.epochs, lr=1e-3))
    if not args.no_dt:
        dense = train_decision_transformer(trajectories, DtConfig(**dt_config, reward="dense"), settings)
        sparse = train_decision_transformer(trajectories, DtConfig(**dt_config, reward="sparse"), settings)
    if args.negatives and not args.no_dt:
        dense_neg = train_decision_transformer(with_negatives, DtConfig(**dt_config, reward="dense"), settings)
        sparse_neg = train_decision_transformer(with_negatives, DtConfig(**dt_config, reward="sparse"), settings)
    train_s = time.perf_counter() - t

    # the token-pointing policy: epochs chosen by the mean AP@50 of its rollouts on a tenth of the
    # training claims (by a hash of the claim id), which it is not fitted on
    val_ids = {c.claim_id for c in train if zlib.crc32(c.claim_id.encode()) % 10 == 0}
    val_claims = [c for c in train if c.claim_id in val_ids]
    idf = IdfTable.from_passages(corpus)
    pointer_config = PointerConfig(max_steps=steps_limit, idf=args.pointer_idf)

    def select(policy: object) -> float:
        return float(np.mean([env.reward(c, rewrite(c, policy, max_steps=steps_limit).final) for c in val_claims]))

    def fit_pointer(extra: list, extra_stops: list[str], config: PointerConfig = pointer_config) -> PointerPolicy:
        fit_trajectories = [tr for tr in trajectories if tr.claim_id not in val_ids] + extra
        stops = [c.text for c in train if c.claim_id not in val_ids and c.text in set(stop_texts)] + extra_stops
        pointer_settings = TrainSettings(epochs=args.pointer_epochs, lr=1e-3)
        return train_pointer(  # type: ignore[return-value]
            fit_trajectories,
            stops,
            config,
            pointer_settings,
            select=select,
            idf=idf if args.pointer_idf else None,
        ).policy

    def with_margin(policy: PointerPolicy, targets: tuple[float, ...] = ()) -> PointerPolicy:
        """The policy with the stop margin (and, for the decision transformer, the return it is
        conditioned on, from ``targets``) that scores best on the validation claims (ties: the
        more cautious, larger margin)."""
        tried = {}
        for target in targets or (policy.config.target_return,):
            for margin in STOP_MARGINS:
                policy.configure(stop_margin=margin, target_return=target)
                tried[margin, target] = select(policy)
        margin, target = max(tried, key=lambda k: (round(tried[k], 6), k[0], -k[1]))
        policy.configure(stop_margin=margin, target_return=target)
        policy.training["stop_margin"] = {
            "chosen": margin,
            "validation AP@50": {str(m): round(v, 4) for (m, r), v in tried.items() if r == target},
        }
        if targets:
            policy.training["target_return"] = {
                "chosen": target,
                "validation AP@50": {str(r): round(v, 4) for (m, r), v in tried.items() if m == margin},
            }
        return policy

    t = time.perf_counter()
    pointer = with_margin(fit_pointer([], []))
    pointer_s = time.perf_counter() - t
    if args.pointer_history:
        t = time.perf_counter()
        dt_pointer_config = replace(pointer_config, history=args.pointer_history, reward="sparse")
        pointer_dt = with_margin(fit_pointer([], [], dt_pointer_config), TARGET_RETURNS)
        pointer_dt_s = time.perf_counter() - t
    if args.pointer_finetune:
        t = time.perf_counter()
        pointer_ft = with_margin(
            train_pointer(  # type: ignore[arg-type]
                [tr for tr in trajectories if tr.claim_id not in val_ids],
                [c.text for c in train if c.claim_id not in val_ids and c.text in set(stop_texts)],
                replace(pointer_config, finetune_encoder=True),
                TrainSettings(epochs=args.pointer_finetune, lr=1e-3),
                select=select,
                idf=idf if args.pointer_idf else None,
            ).policy
        )
        pointer_ft_s = time.perf_counter() - t
    pseudo_note = ""
    if args.pseudo_claims:
        t = time.perf_counter()
        pseudo = inverse_cloze(corpus, args.pseudo_claims, seed=0)
        pseudo_env = SearchEnvironment(build_retriever(pseudo.corpus, args.retriever), pseudo.qrels, "AP@50")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "pseudo.jsonl"
            pseudo_summary = generate_trajectories(pseudo.claims, pseudo_env, out, config, workers=args.workers)
            pseudo_trajectories = [tr for tr in read_trajectories(out) if not tr.negative]
            pseudo_stops = pointer_stop_claims(out, pseudo.claims)
        pointer_pseudo = with_margin(fit_pointer(pseudo_trajectories, pseudo_stops))
        pseudo_note = (
            f"Pseudo-claims: {len(pseudo.claims)} inverse-cloze sentences of the corpus (searched on a training copy "
            f"of the index without them), BFS {pseudo_summary.statuses}, {len(pseudo_trajectories)} trajectories; "
            f"with the pointer's training, {time.perf_counter() - t:.0f} s."
        )

    scale_note = ""
    if args.scale_trajectories:
        t = time.perf_counter()
        scale_trajectories, scale_stops, scale_parts = scale_data(args)
        pointer_scale = with_margin(fit_pointer(scale_trajectories, scale_stops))
        scale_note = (
            f"Paper-scale trajectories ({args.scale_trajectories}, `benchmarks/bfs_scale.py`): "
            f"{sum(scale_parts.values()):,} claims ({scale_parts}), {len(scale_trajectories):,} trajectories, "
            f"{len(scale_stops):,} claims best left alone; the other corpora's tokens get this corpus's IDF features. "
            f"With the pointer's training, {time.perf_counter() - t:.0f} s."
        )

    # keyword baselines: k chosen on (at most 300 of) the training claims
    tune_claims = sample(train, 300)
    k_idf, idf_scores = tune_k(lambda k: TopIdfPolicy(k, idf), tune_claims, env)
    keybert_encoder = state_encoder("minilm")
    k_bert, bert_scores = tune_k(lambda k: KeyBertPolicy(k, keybert_encoder), tune_claims, env)
    keywords = {
        "stop-word removal": StopwordPolicy(),
        f"top-{k_idf} IDF terms (k tuned on train)": TopIdfPolicy(k_idf, idf),
        f"KeyBERT-style MiniLM, top {k_bert} (k tuned on train)": KeyBertPolicy(k_bert, keybert_encoder),
    }

    # the candidate ranker: fitted on every training claim (its target and margin by 5-fold
    # cross-validation on them), searching the endpoint while it plans
    t = time.perf_counter()
    ranker = train_ranker(train, qrels, {p.passage_id: p for p in corpus}, retriever, idf=idf)
    ranker_s = time.perf_counter() - t

    runs = [
        ("original claim", OriginalPolicy(), None, args.max_steps),
        ("random edit (1 edit, seed 0)", RandomEditPolicy(seed=0), None, 1),
        *[(label, policy, None, TUNE_MAX_STEPS) for label, policy in keywords.items()],
        ("one-action classifier (pooled state)", classifier.policy, None, 1),
    ]
    if not args.no_dt:
        runs += [
            ("DT dense, no qrels at inference", dense.policy, None, args.max_steps),
            ("DT sparse, no qrels at inference", sparse.policy, None, args.max_steps),
            ("DT dense, env stop (reads qrels: upper bound)", dense.policy, env, args.max_steps),
            ("DT sparse, env stop (reads qrels: upper bound)", sparse.policy, env, args.max_steps),
        ]
    if args.negatives and not args.no_dt:
        runs += [
            ("DT dense + negatives, no qrels at inference", dense_neg.policy, None, args.max_steps),
            ("DT sparse + negatives, no qrels at inference", sparse_neg.policy, None, args.max_steps),
            ("DT dense + negatives, env stop (upper bound)", dense_neg.policy, env, args.max_steps),
            ("DT sparse + negatives, env stop (upper bound)", sparse_neg.policy, env, args.max_steps),
        ]
    runs.append(("token-pointing policy, learned stop", pointer, None, steps_limit))
    if args.pointer_history:
        runs.append((POINTER_DT, pointer_dt, None, steps_limit))
    if args.pointer_finetune:
        runs.append((POINTER_FT, pointer_ft, None, steps_limit))
    runs.append((RANKER, ranker, None, TUNE_MAX_STEPS))
    if args.pseudo_claims:
        runs.append((f"token-pointing policy + {len(pseudo.claims)} pseudo-claims", pointer_pseudo, None, steps_limit))
    if args.scale_trajectories:
        runs.append(
            (
                f"token-pointing policy + {sum(scale_parts.values()):,} BFS-scale claims",
                pointer_scale,
                None,
                steps_limit,
            )
        )
    stem = "rewriting" if args.dataset == "scifact" or args.claims else f"rewriting_{args.dataset}"
    result = stem if args.retriever == "bm25" else f"{stem}_{args.retriever.replace('-', '_')}"
    result = args.name or result
    rows, headline, actions = [], {"benchmark": "rewriting", "eval": name, "retriever": args.retriever}, {}
    base = None
    kinds_of: dict[str, Counter[str]] = {}
    per_policy: dict[str, np.ndarray] = {}
    for label, policy, inference_env, steps in runs:
        traces = [rewrite(c, policy, inference_env, max_steps=steps) for c in test]
        queries = [tr.final for tr in traces]
        kinds_of[label] = Counter(ACTIONS[a].kind for tr in traces for a in tr.actions)
        per_claim = {m: [envs[m].reward(c, q) for c, q in zip(test, queries, strict=True)] for m in MEASURES}
        per_policy[label] = np.array(per_claim["AP@50"])
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
        p = paired_p(per_policy[label], per_policy["original claim"])
        edits = np.mean([len(tr.steps) for tr in traces])
        rows.append([label, *[scores[m] for m in MEASURES], ratio(scores["AP@50"], base), p, f"{edits:.1f}"])
        headline[label] = round(scores["AP@50"], 4)
        actions[label] = sum(q != c.text for c, q in zip(test, queries, strict=True))

    # the oracle: the best BFS / keep-set sequence of each held-out claim (reads its qrels)
    t = time.perf_counter()
    oracle = np.array([best_reachable(c, env, config) for c in test])
    oracle_s = time.perf_counter() - t
    rows.append(
        [
            "oracle: best BFS / keep-set sequence (reads qrels)",
            float(oracle.mean()),
            "",
            "",
            ratio(float(oracle.mean()), base),
            "",
            "",
        ]
    )
    headline["oracle"] = round(float(oracle.mean()), 4)
    # the ranker's headroom: the best of its candidates for each held-out claim (reads qrels)
    cand_oracle = np.array([max(env.rewards(c, [x.text for x in ranker.candidate_queries(c.text)])) for c in test])
    rows.append(
        ["oracle: best of the ranker's candidates (reads qrels)", float(cand_oracle.mean()), "", "", ratio(float(cand_oracle.mean()), base), "", ""]
    )  # fmt: skip
    headline["candidate_oracle"] = round(float(cand_oracle.mean()), 4)
    keyword_labels = list(keywords)
    best_keyword = max(keyword_labels, key=lambda k: per_policy[k].mean())
    pointer_label = "token-pointing policy, learned stop"
    headline |= {
        "pointer_vs_original": round(float(per_policy[pointer_label].mean() / max(base, 1e-12)), 4),
        "pointer_vs_best_keyword": round(
            float(per_policy[pointer_label].mean() / max(per_policy[best_keyword].mean(), 1e-12)), 4
        ),
        "ranker_vs_original": round(float(per_policy[RANKER].mean() / max(base, 1e-12)), 4),
        "ranker_vs_best_keyword": round(
            float(per_policy[RANKER].mean() / max(per_policy[best_keyword].mean(), 1e-12)), 4
        ),
        "best_keyword": best_keyword,
        "step_limit": steps_limit,
    }
    kinds = Counter(ACTIONS[s.action].kind for tr in trajectories for s in tr.steps)
    kind_names = ("remove", "swap_synonym", "add_synonym", "present_simple")
    kind_rows = [[label, sum(k.values()), *[k.get(n, 0) for n in kind_names]] for label, k in kinds_of.items()]
    training = pointer.training
    text = "\n".join(
        [
            f"### Query rewriting on held-out claims ({name}: {len(train)} training claims, {len(test)} held out; {RETRIEVER_NAMES[args.retriever]})",
            "",
            markdown_table(["policy", "mAP@50", "R@50", "MRR", "mAP@50 vs original", "p vs original", "edits"], rows),
            "",
            f"p: paired sign-flip permutation test over the held-out claims (AP@50). The token-pointing policy is "
            f"{headline['pointer_vs_best_keyword']:.2f}x the best keyword baseline ({best_keyword}; "
            f"p = {paired_p(per_policy[pointer_label], per_policy[best_keyword]):.4f}). "
            f"The candidate ranker is {headline['ranker_vs_best_keyword']:.2f}x the best keyword baseline "
            f"(p = {paired_p(per_policy[RANKER], per_policy[best_keyword]):.4f}) and "
            f"{per_policy[RANKER].mean() / max(per_policy[pointer_label].mean(), 1e-12):.2f}x the token-pointing policy "
            f"(p = {paired_p(per_policy[RANKER], per_policy[pointer_label]):.4f}). "
            f"Keyword k tuned on {len(tune_claims)} training claims: top-IDF {fmt_scores(idf_scores)}, "
            f"KeyBERT {fmt_scores(bert_scores)}.",
            "",
            f"Held-out claims whose query changed: {actions}. Trajectories on the training claims (BFS"
            f"{' + keep-set search' if args.keep_set else ''}): {summary.statuses}, {len(trajectories)} trajectories "
            f"in {bfs_s:.0f} s ({summary.candidates_per_second:,.0f} candidates/s); edit kinds in them: {dict(kinds)}. "
            f"Step limit of the pointer (95th percentile of the trajectories' lengths): {steps_limit}. Training "
            f"(classifier{'' if args.no_dt else f' + {4 if args.negatives else 2} DTs, {dt_config}'}, frozen MiniLM states, "
            f"{args.epochs} epochs) {train_s:.0f} s; pointer ({training['examples']} states, {training['stop_examples']} "
            f"with stop, frozen MiniLM token vectors{', idf features' if args.pointer_idf else ''}, epoch {training['chosen_epoch']} of {args.pointer_epochs} chosen by "
            f"rollouts on {len(val_claims)} training claims it is not fitted on, stop margin {pointer.config.stop_margin} chosen there from {list(STOP_MARGINS)}) {pointer_s:.0f} s; oracle search "
            f"{oracle_s:.0f} s; on {machine()}.",
            "",
            *([pseudo_note, ""] if pseudo_note else []),
            *([scale_note, ""] if scale_note else []),
            *([pointer_dt_note(pointer_dt, pointer_dt_s, args), ""] if args.pointer_history else []),
            *(
                [
                    f"{POINTER_FT}: the same training with the MiniLM token encoder fine-tuned (learning rate 2e-5, "
                    f"{args.pointer_finetune} epochs; epoch {pointer_ft.training['chosen_epoch']} and stop margin "
                    f"{pointer_ft.config.stop_margin} chosen by the same rollouts), {pointer_ft_s:.0f} s against "
                    f"{pointer_s:.0f} s for {args.pointer_epochs} epochs with it frozen.",
                    "",
                ]
                if args.pointer_finetune
                else []
            ),
            f"Candidate ranker: {ranker.training['claims']} training claims, {ranker.training['candidates']:,} "
            f"candidate queries searched and scored; target `{ranker.training['target']}` and margin "
            f"{ranker.training['margin']} chosen by 5-fold cross-validation on the training claims (mean AP@50 "
            f"{ranker.training['cross-validated AP@50']}; every choice: {ranker.training['cross-validated AP@50 of every choice']}); "
            f"{ranker_s:.0f} s to train. It never reads a held-out claim's qrels: it reads what the endpoint returns "
            "for its candidate queries (result counts and scores), as any user of the search box can.",
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
                if args.negatives and not args.no_dt
                else []
            ),
            f"Reproduce: `{shlex.join(['python', 'benchmarks/rewriting.py', *reproduce_args(sys.argv[1:])])}`",
        ]
    )
    if args.save_policies:
        folder = Path(args.save_policies)
        save_policy(pointer, folder / f"{args.dataset}-{args.retriever}-pointer")
        if args.pointer_history:
            save_policy(pointer_dt, folder / f"{args.dataset}-{args.retriever}-pointer-dt")
        save_policy(ranker, folder / f"{args.dataset}-{args.retriever}")
        save_policy(classifier.policy, folder / f"{args.dataset}-{args.retriever}-classifier")
        if not args.no_dt:
            for label, trained in (("dt-dense", dense), ("dt-sparse", sparse)):
                save_policy(trained.policy, folder / f"{args.dataset}-{args.retriever}-{label}")
    publish(result, text, headline)


def pointer_dt_note(policy: PointerPolicy, seconds: float, args: argparse.Namespace) -> str:
    """How the token-pointing decision transformer was trained and chosen."""
    t = policy.training
    return (
        f"Decision transformer with the token-pointing head: Hugging Face's DecisionTransformerModel "
        f"({policy.config.dt_layers} layers, width {policy.config.hidden}) over the last {policy.config.history} "
        f"(return-to-go, pooled token states, edit) steps, its output shifting each edit kind's vector that "
        f"scores the current query's tokens; sparse returns-to-go; {t['examples']} states ({t['stop_examples']} "
        f"with stop), frozen MiniLM token vectors; epoch {t['chosen_epoch']} of {args.pointer_epochs}, stop margin "
        f"{t['stop_margin']['chosen']} and conditioning return {t['target_return']['chosen']} (from "
        f"{list(TARGET_RETURNS)}; validation AP@50 {t['target_return']['validation AP@50']}) chosen by rollouts on "
        f"the validation claims; {seconds:.0f} s."
    )


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "n/a"


def fmt_scores(scores: dict[int, float]) -> str:
    return ", ".join(f"k={k}: {v:.4f}" for k, v in scores.items())


def paired_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired sign-flip permutation p-value of mean(a - b)."""
    from scipy import stats

    if np.allclose(a, b):
        return 1.0
    test = stats.permutation_test(
        (a, b), lambda u, v: np.mean(u - v), permutation_type="samples", n_resamples=10_000, random_state=0
    )
    return float(test.pvalue)


def best_reachable(claim, env, config) -> float:  # type: ignore[no-untyped-def]
    """The best reward of the claim or any of its BFS / keep-set sequences (reads the qrels)."""
    found = search_claim(claim, env, replace(config, negatives=0))
    return max([env.reward(claim, claim.text), *[t.final_reward for t in found.trajectories]])


if __name__ == "__main__":
    main()
