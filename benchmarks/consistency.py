"""Stance consistency: each ``--stance`` model on the consistency suite and the swapped-subject
challenge set, the target bars beside the rates.

The suite (:func:`factscout.training.stance.consistency.consistency_suite`) is built from the
held-out claims of every domain: the SciFact held-out claims
(``verify/models/scifact_heldout_ids.txt``), Check-COVID dev, Citation-Integrity dev and
HealthVer's dev part; a domain whose loader is not registered is skipped and named. Each claim
is paired with itself and its faithful rewordings (supports), its negation and its reversed
direction (refutes), an unrelated claim of its domain and itself with its subject swapped (not
enough info). ``--per-domain N`` draws N claims per domain (all by default).

The challenge set (:func:`~factscout.training.stance.consistency.swapped_subject_set`) is
``--challenge`` supporting pairs of the training sources (SciFact fitting claims' rationales,
COVID-Fact supported evidence) with the claim's subject swapped, so the sentence is about another
subject (not enough info); it is written to ``results/consistency/swapped_subject.jsonl.gz``.

Rates per kind: the share with the expected label; for swapped subjects the share called
supports or refutes (the error measured). The mean dev macro-F1 of ``benchmarks/stance_domains.py``
is shown beside each model when its manifest has one. Each model's label for every pair is in
``results/consistency/<model>.jsonl.gz``.

    python benchmarks/consistency.py --stance cross [--stance head ...] [--per-domain 20] [--challenge 400]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from typing import Any

from _common import RESULTS, machine, markdown_table, publish, quiet, write_predictions

from factscout.evaluate.consistency import (
    EXPECTED,
    KINDS,
    SUBJECT,
    TARGETS,
    ConsistencyCase,
    KindRate,
    consistency_rates,
    consistency_rates_by_domain,
    predict_labels,
    targets_met,
)
from factscout.training.stance.consistency import (
    CHALLENGE_SEED,
    CHALLENGE_SIZE,
    SPACY_MODEL,
    SUITE_DOMAINS,
    consistency_suite,
    suite_claims,
    swapped_subject_set,
    training_support_pairs,
)

NAME = "consistency"
CHALLENGE = "challenge"  # the challenge set's column


def pct(value: float) -> str:
    return f"{value:.1%}"


def kind_cell(rate: KindRate | None) -> str:
    """A kind's rate as the table shows it: the expected share, for subject swaps the decided share."""
    if rate is None or not rate.n:
        return "-"
    return pct(rate.decided_share if rate.kind == SUBJECT else rate.expected_share)


def kind_header(kind: str) -> str:
    return f"{kind}: supports/refutes" if kind == SUBJECT else f"{kind} → {EXPECTED[kind]}"


def target_cell(kind: str) -> str:
    target = TARGETS.get(kind)
    if target is None:
        return "-"
    return f"{'≥' if target.at_least else '≤'} {target.value:.0%}"


def mean_dev_macro_f1() -> dict[str, float]:
    """The mean dev macro-F1 per model of the last ``benchmarks/stance_domains.py`` run, if any."""
    path = RESULTS / "stance_domains" / "manifest.json"
    try:
        headline = json.loads(path.read_text())["headline"]
    except (OSError, ValueError, KeyError):
        return {}
    return {k: float(v["mean_dev"]) for k, v in headline.items() if isinstance(v, dict) and "mean_dev" in v}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stance", action="append", help="a stance model spec (repeat; default: cross)")
    parser.add_argument("--per-domain", type=int, help="claims drawn per domain for the suite (default: all)")
    parser.add_argument("--challenge", type=int, default=CHALLENGE_SIZE, help="swapped-subject challenge pairs")
    parser.add_argument("--seed", type=int, default=0, help="the suite's seed")
    parser.add_argument("--challenge-seed", type=int, default=CHALLENGE_SEED, help="the challenge set's seed")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs scored at a time")
    parser.add_argument("--device", default="cpu", help="torch device for the models that take one")
    args = parser.parse_args(argv)
    if args.per_domain is not None and args.per_domain < 1:
        parser.error(f"--per-domain must be positive, got {args.per_domain}")
    if args.challenge < 1:
        parser.error(f"--challenge must be positive, got {args.challenge}")
    quiet()
    from factscout.spacy_models import load_spacy
    from factscout.verify import make_stance_model
    from factscout.verify.base import stance_model_takes
    from factscout.verify.pairs import pair_probabilities

    started = time.perf_counter()
    nlp = load_spacy(SPACY_MODEL, needs="the stance consistency suite")
    suite: list[ConsistencyCase] = []
    domains, skipped = [], []
    for domain in SUITE_DOMAINS:
        claims = suite_claims(domain)
        if claims is None:
            skipped.append(domain.name)
            print(f"{domain.name}: skipped (no loader or no data)", file=sys.stderr)
            continue
        cases = consistency_suite(claims, domain=domain.name, seed=args.seed, limit=args.per_domain, nlp=nlp)
        domains.append(domain)
        suite += cases
        print(f"{domain.name}: {len(cases)} cases from {len(claims)} claims", file=sys.stderr)
    challenge = swapped_subject_set(training_support_pairs(), seed=args.challenge_seed, size=args.challenge, nlp=nlp)
    write_predictions(NAME, "swapped_subject", (case.row() for case in challenge))
    built = time.perf_counter()
    print(f"challenge: {len(challenge)} swapped-subject pairs", file=sys.stderr)

    specs = args.stance or ["cross"]
    results: dict[str, dict[str, Any]] = {}
    for spec in specs:
        options = {"device": args.device} if args.device != "cpu" and stance_model_takes(spec, "device") else {}
        model = make_stance_model(spec, **options)
        labels = predict_labels([*suite, *challenge], partial(pair_probabilities, model), batch_size=args.batch_size)
        mine, theirs = labels[: len(suite)], labels[len(suite) :]
        rates = consistency_rates(suite, mine)
        rates[CHALLENGE] = consistency_rates(challenge, theirs).get(SUBJECT, KindRate(SUBJECT, (0, 0, 0)))
        results[spec] = {
            "rates": rates,
            "by_domain": {
                **consistency_rates_by_domain(suite, mine),
                **{f"{d} (challenge)": r for d, r in consistency_rates_by_domain(challenge, theirs).items()},
            },
            "met": targets_met(rates) and rates[CHALLENGE].met() is True,
        }
        write_predictions(
            NAME,
            spec,
            (
                {**case.row(), "set": "challenge" if i >= len(suite) else "suite", "predicted": label}
                for i, (case, label) in enumerate(zip([*suite, *challenge], labels, strict=True))
            ),
        )
        print(f"{spec}: {', '.join(f'{k} {kind_cell(r)}' for k, r in rates.items())}", file=sys.stderr)
    scored = time.perf_counter()

    f1 = mean_dev_macro_f1()
    columns = [*KINDS, CHALLENGE]
    header = [
        "stance model",
        "mean dev macro-F1",
        *(kind_header(k) for k in KINDS),
        "challenge: supports/refutes",
        "all bars met",
    ]
    rows: list[list[object]] = [["**bar**", "-", *(target_cell(k) for k in KINDS), target_cell(SUBJECT), ""]]
    for spec, r in results.items():
        rows.append(
            [
                f"`{spec}`",
                f"{f1[spec]:.3f}" if spec in f1 else "-",
                *(kind_cell(r["rates"].get(k)) for k in columns),
                "yes" if r["met"] else "no",
            ]
        )
    domain_rows = [
        [f"`{spec}`", name, *(kind_cell(rates.get(k)) for k in KINDS)]
        for spec, r in results.items()
        for name, rates in r["by_domain"].items()
    ]
    size_rows = []
    for d in domains:
        counts = {k: sum(1 for c in suite if c.domain == d.name and c.kind == k) for k in KINDS}
        size_rows.append([d.description, *counts.values(), sum(counts.values())])
    size_rows.append(["**total**", *(sum(1 for c in suite if c.kind == k) for k in KINDS), len(suite)])
    sources = {c.domain: sum(1 for x in challenge if x.domain == c.domain) for c in challenge}
    draw = f"{args.per_domain} claims drawn per domain" if args.per_domain else "every claim"
    text = "\n\n".join(
        [
            f"### Stance consistency ({draw}, seed {args.seed}) and swapped-subject challenge set",
            "Share of each kind's pairs with the expected label; for swapped subjects the share called supports or "
            "refutes (lower is better). The bar row holds the targets set for the suite.",
            markdown_table(header, rows),
            "#### Per domain",
            markdown_table(["stance model", "domain", *(kind_header(k) for k in KINDS)], domain_rows),
            "#### Pairs per kind",
            markdown_table(["domain", *KINDS, "total"], size_rows),
            f"Challenge set: {len(challenge)} swapped-subject pairs (seed {args.challenge_seed}; "
            + ", ".join(f"{n} {s}" for s, n in sources.items())
            + ") from supporting pairs of the training sources, in `results/consistency/swapped_subject.jsonl.gz`."
            + (f" Skipped domains (no loader registered or no data): {', '.join(skipped)}." if skipped else ""),
            "Mean dev macro-F1: `benchmarks/stance_domains.py`'s last run (`-` where it has not scored the model).",
            f"Built in {built - started:.0f} s, scored in {scored - built:.0f} s on {machine()}.",
            "Reproduce: `python benchmarks/consistency.py "
            + " ".join(f"--stance {s}" for s in specs)
            + (f" --per-domain {args.per_domain}" if args.per_domain else "")
            + (f" --challenge {args.challenge}" if args.challenge != CHALLENGE_SIZE else "")
            + "`",
        ]
    )
    headline = {
        "benchmark": NAME,
        "per_domain": args.per_domain,
        "seed": args.seed,
        "suite_pairs": len(suite),
        "challenge_pairs": len(challenge),
        "skipped_domains": skipped,
        "models": {
            spec: {
                **{k: round(r["rates"][k].expected_share, 4) for k in KINDS if k in r["rates"] and k != SUBJECT},
                "subject_decided": round(r["rates"][SUBJECT].decided_share, 4) if SUBJECT in r["rates"] else None,
                "challenge_decided": round(r["rates"][CHALLENGE].decided_share, 4),
                "bars_met": r["met"],
            }
            for spec, r in results.items()
        },
    }
    publish(NAME, text, headline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
