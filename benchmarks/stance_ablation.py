"""The stance ablation: each model (today's, stage 0 alone, stage 0 + the claim-evidence stages, ...)
on the NLI check set, every dev domain, FEVER-Symmetric and the consistency suite, in one table.

Rows are ``--model NAME=SPEC`` (any spec ``factscout stance`` takes, e.g. ``today=cross`` or
``stage0=cross:.factscout/nli/stance_nli.npz``). Columns:

- NLI check set accuracy (:func:`factscout.training.stance.nli_data.nli_check_set`): the 2,000
  MultiNLI dev-matched pairs (stratified by genre and label) and the 2,000 counterfactual-SNLI
  test pairs, never trained on;
- stance macro-F1 on each dev domain (:mod:`factscout.training.stance.domains`: SciFact's dev part
  of train, HealthVer's dev part, Check-COVID dev, Citation-Integrity dev) and their mean;
- FEVER-Symmetric test (v0.2, 712 pairs; SUPPORTS / REFUTES, so macro-F1 over those two labels, a
  "not enough info" answer counted wrong);
- the consistency suite (:mod:`factscout.training.stance.consistency`, ``--per-domain`` claims per
  domain): self -> supports, unrelated -> not enough info, negated -> refutes, swapped subject ->
  supports/refutes (lower is better).

The row that would be chosen is the one with the best **choice score**: the mean of the four dev
domains' macro-F1 and the consistency score (the mean of the self, unrelated and negated rates and
one minus the swapped-subject rate), five numbers weighted alike, never one dataset. FEVER-Symmetric
and the NLI check set are shown, not chosen on. ``--healthver/--checkcovid/--citint FILE`` score
another split in the same format, as ``benchmarks/stance_domains.py`` does.

    python benchmarks/stance_ablation.py --model today=cross --model stage0=cross:DIR/stance_nli.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from _common import machine, markdown_table, publish, quiet

NAME = "stance_ablation"
CONSISTENCY_KINDS = ("self", "unrelated", "negation", "subject")


def parse_models(values: list[str] | None) -> dict[str, str]:
    """``NAME=SPEC`` pairs in order (a bare ``SPEC`` is named after itself)."""
    out: dict[str, str] = {}
    for value in values or ["today=cross"]:
        name, _, spec = value.partition("=")
        name, spec = (name, spec) if spec else (value, value)
        if not name or not spec or name in out:
            raise SystemExit(f"--model {value!r}: give NAME=SPEC with a name used once")
        out[name] = spec
    return out


def two_way_macro_f1(rows: list[tuple[str, str, int]], probs: Any) -> float:
    """Macro-F1 over the labels the gold uses (FEVER-Symmetric: supports, refutes); a prediction of
    another label is wrong for its pair and counts for no class."""
    from factscout.evaluate.classification import macro_f1

    gold = [r[2] for r in rows]
    return round(macro_f1(gold, [int(i) for i in probs.argmax(axis=1)], sorted(set(gold))), 4)


def consistency_score(rates: dict[str, float]) -> float:
    """The mean of the self, unrelated and negated rates and 1 - the swapped-subject rate."""
    return (rates["self"] + rates["unrelated"] + rates["negation"] + 1.0 - rates["subject"]) / 4.0


def choice_score(dev: dict[str, float], consistency: float) -> float:
    """The mean of the dev domains' macro-F1 and the consistency score, weighted alike."""
    values = [*dev.values(), consistency]
    return sum(values) / len(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="NAME=SPEC, a row (repeat; default: today=cross)")
    parser.add_argument("--per-domain", type=int, default=60, help="consistency suite claims per domain")
    parser.add_argument("--healthver", help="HealthVer CSV to score instead of the dev part")
    parser.add_argument("--checkcovid", help="Check-COVID claims file to score instead of dev")
    parser.add_argument("--citint", help="Citation-Integrity claims JSONL to score instead of dev")
    parser.add_argument("--fever-symmetric", help="a FEVER-Symmetric JSONL to score instead of its test split")
    parser.add_argument("--limit", type=int, help="at most N pairs of each set (quick runs)")
    parser.add_argument("--name", default=NAME, help="result file name")
    args = parser.parse_args(argv)
    models = parse_models(args.model)
    quiet()
    import numpy as np
    from stance_domains import scifact_rows

    from factscout.datasets import load_dataset
    from factscout.evaluate.consistency import consistency_rates, predict_labels
    from factscout.spacy_models import load_spacy
    from factscout.training.stance.consistency import SPACY_MODEL, SUITE_DOMAINS, consistency_suite, suite_claims
    from factscout.training.stance.domains import DEV_DOMAINS, domain_rows, score_rows
    from factscout.training.stance.nli_data import nli_check_set
    from factscout.training.stance.sources import row_stance_pairs
    from factscout.verify import make_stance_model
    from factscout.verify.pairs import pair_probabilities

    started = time.perf_counter()
    cut = slice(None, args.limit)
    check = nli_check_set()
    check_sets = {part: [(p.claim, p.sentence, p.label) for p in check if p.source == f"check:{part}"][cut]
                  for part in ("mnli", "snli_cf")}  # fmt: skip
    dev = {"scifact": scifact_rows()["dev"],
           **domain_rows({"healthver": args.healthver, "checkcovid": args.checkcovid, "citint": args.citint})}  # fmt: skip
    dev = {k: v[cut] for k, v in dev.items()}
    if args.fever_symmetric:
        from factscout.datasets.fever_symmetric import load_file

        fever_claims = load_file(args.fever_symmetric).claims
    else:
        fever_claims = load_dataset("fever_symmetric", "test").claims
    fever = [(p.claim, p.sentence, p.label) for p in row_stance_pairs("fever_symmetric", fever_claims, "premise")][cut]
    nlp = load_spacy(SPACY_MODEL, needs="the stance consistency suite")
    suite = []
    for domain in SUITE_DOMAINS:
        claims = suite_claims(domain)
        if claims is not None:
            suite += consistency_suite(claims, domain=domain.name, seed=0, limit=args.per_domain, nlp=nlp)
    suite = [c for c in suite if c.kind in CONSISTENCY_KINDS]
    built = time.perf_counter()
    print(f"sets built in {built - started:.0f} s: suite {len(suite)} cases", file=sys.stderr)

    results: dict[str, dict[str, Any]] = {}
    for name, spec in models.items():
        t0 = time.perf_counter()
        model = make_stance_model(spec)

        def predict(claims: list[str], sentences: list[str], model: Any = model) -> Any:
            return pair_probabilities(model, claims, sentences)

        nli = {part: score_rows(predict, rows)["accuracy"] for part, rows in check_sets.items()}
        scores = {d: score_rows(predict, rows)["macro_f1"] for d, rows in dev.items()}
        fever_f1 = two_way_macro_f1(fever, np.asarray(predict([r[0] for r in fever], [r[1] for r in fever])))
        labels = predict_labels(suite, predict, batch_size=64)
        rates = consistency_rates(suite, labels)
        cons = {k: round(rates[k].decided_share if k == "subject" else rates[k].expected_share, 4)
                for k in CONSISTENCY_KINDS if k in rates}  # fmt: skip
        mean_dev = float(np.mean(list(scores.values())))
        score = choice_score(scores, consistency_score(cons)) if len(cons) == len(CONSISTENCY_KINDS) else float("nan")
        results[name] = {"spec": spec, "nli_check": nli, "dev": scores, "mean_dev": round(mean_dev, 4),
                         "fever_symmetric": fever_f1, "consistency": cons, "choice": round(score, 4),
                         "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
        print(f"{name}: {results[name]}", file=sys.stderr)

    chosen = max(results, key=lambda n: results[n]["choice"])
    header = ["model", "NLI check: MNLI acc", "NLI check: SNLI-CF acc", *(f"{d} dev" for d in DEV_DOMAINS),
              "mean dev", "FEVER-Sym test", "self → S", "unrelated → NEI", "negated → R", "swapped: S/R",
              "choice score", "chosen"]  # fmt: skip
    rows = []
    for name, r in results.items():
        c = r["consistency"]
        rows.append([name, f"{r['nli_check']['mnli']:.3f}",
                     f"{r['nli_check']['snli_cf']:.3f}", *(f"{r['dev'][d]:.3f}" for d in DEV_DOMAINS),
                     f"{r['mean_dev']:.3f}", f"{r['fever_symmetric']:.3f}",
                     *(f"{c.get(k, float('nan')):.1%}" for k in CONSISTENCY_KINDS), f"{r['choice']:.3f}",
                     "**yes**" if name == chosen else ""])  # fmt: skip
    sizes = (f"NLI check {sum(map(len, check_sets.values()))} pairs, "
             + ", ".join(f"{d} {len(v)}" for d, v in dev.items())
             + f", FEVER-Symmetric {len(fever)}, consistency suite {len(suite)} cases ({args.per_domain} claims per domain)")  # fmt: skip
    text = "\n\n".join(
        [
            "### Stance ablation: NLI stage 0 and the claim-evidence stages",
            f"Pairs: {sizes}. Chosen: the row with the best choice score (the mean of the four dev domains' "
            "macro-F1 and the consistency score, weighted alike). The NLI check set and FEVER-Symmetric "
            "are shown, not chosen on.",
            markdown_table(header, rows),
            "Models: " + "; ".join(f"{n} = `{r['spec']}`" for n, r in results.items()) + ".",
            f"Scored in {time.perf_counter() - started:.0f} s on {machine()}.",
            "Reproduce: `python benchmarks/stance_ablation.py "
            + " ".join(f"--model {n}={r['spec']}" for n, r in results.items())
            + (f" --per-domain {args.per_domain}" if args.per_domain != 60 else "")
            + "`",
        ]
    )
    headline = {"benchmark": NAME, "chosen": chosen,
                **{n: {"mnli": r["nli_check"]["mnli"], "snli_cf": r["nli_check"]["snli_cf"], "mean_dev": r["mean_dev"],
                       "fever_symmetric": r["fever_symmetric"], **r["consistency"], "choice": r["choice"]}
                   for n, r in results.items()}}  # fmt: skip
    publish(args.name, text, headline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
