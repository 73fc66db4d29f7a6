"""Out-of-domain stance: every stance model on each domain's dev pairs, and the mean that chooses.

Stance macro-F1 of each ``--stance`` model (any spec ``factscout stance`` takes: ``cross``,
``head``, ``cross:<file>``, ``ensemble:...``) on the evaluation pairs of
:mod:`factscout.training.stance.domains`: SciFact dev (the 92 dev claims the pair builder and the
cross-encoder leave out for choosing), HealthVer's dev part (40 % of its topics, never trained
on), Check-COVID dev and Citation-Integrity dev. The mean over the four chooses models; the
SciFact held-out claims (the model card's evaluation pairs) are reported beside it, never used to
choose. Per-class F1 for each domain is in the result file.

Another split in the same format replaces a domain's dev data: ``--healthver FILE.csv`` (HealthVer
columns, e.g. its test split), ``--checkcovid FILE.json`` (Check-COVID claim rows),
``--citint FILE.jsonl`` (SciFact-format claim rows citing the Citation-Integrity corpus).

    python benchmarks/stance_domains.py --stance cross --stance head [--healthver test.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from _common import machine, markdown_table, publish, quiet

from factscout.training.stance.domains import DEV_DOMAINS, domain_rows, mean_macro_f1, score_rows

NAME = "stance_domains"


def scifact_rows() -> dict[str, list[tuple[str, str, int]]]:
    """The SciFact dev and held-out evaluation pairs (the stance card's: rationales + the 2 most
    similar other sentences per claim)."""
    from factscout.training.stance.cross_config import CrossConfig, scifact_parts
    from factscout.training.stance.evaluation import stance_eval_set

    parts = scifact_parts(CrossConfig(), lambda _: None)
    out = {}
    for name in ("dev", "heldout"):
        pairs = parts.pairs[name]
        idx = stance_eval_set(pairs, parts.cosines[name])
        out[name] = [(pairs[i].claim, pairs[i].sentence, int(pairs[i].label)) for i in idx]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stance", action="append", help="a stance model spec (repeat; default: cross)")
    parser.add_argument("--healthver", help="HealthVer CSV to score instead of the dev part")
    parser.add_argument("--checkcovid", help="Check-COVID claims file to score instead of dev")
    parser.add_argument("--citint", help="Citation-Integrity claims JSONL to score instead of dev")
    parser.add_argument("--name", default=NAME, help="result file name")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--gate",
        action="store_true",
        help="also: a relevance gate (MiniLM cosine of claim and sentence below g -> not enough info), g chosen on the mean dev macro-F1",
    )
    args = parser.parse_args(argv)
    quiet()
    from factscout.verify import make_stance_model
    from factscout.verify.pairs import pair_probabilities

    started = time.perf_counter()
    sets = domain_rows({"healthver": args.healthver, "checkcovid": args.checkcovid, "citint": args.citint})
    sci = scifact_rows()
    sets = {"scifact": sci["dev"], **sets}
    results: dict[str, dict[str, Any]] = {}
    for spec in args.stance or ["cross"]:
        model = make_stance_model(spec, device=args.device) if _takes_device(spec) else make_stance_model(spec)

        def predict(claims: list[str], sentences: list[str], model: Any = model) -> Any:
            return pair_probabilities(model, claims, sentences)

        scores = {name: score_rows(predict, rows) for name, rows in sets.items()}
        heldout = score_rows(predict, sci["heldout"])
        results[spec] = {
            "dev": scores,
            "mean_dev_macro_f1": round(mean_macro_f1(scores), 4),
            "scifact_heldout": heldout,
        }
        if args.gate:
            results[spec]["gate"] = gate_search(predict, sets, sci["heldout"])
        print(f"{spec}: mean dev {results[spec]['mean_dev_macro_f1']:.4f}", file=sys.stderr)
    header = ["stance model", *(f"{d} dev" for d in DEV_DOMAINS), "mean (chooses)", "SciFact held-out"]
    rows = [
        [
            spec,
            *(r["dev"][d]["macro_f1"] for d in DEV_DOMAINS),
            r["mean_dev_macro_f1"],
            r["scifact_heldout"]["macro_f1"],
        ]
        for spec, r in results.items()
    ]
    sizes = ", ".join(f"{d} {len(sets[d])}" for d in DEV_DOMAINS) + f", SciFact held-out {len(sci['heldout'])}"
    classes = [
        [spec, d, *(r["dev"][d]["f1"][k] for k in ("supports", "refutes", "not enough info"))]
        for spec, r in results.items()
        for d in DEV_DOMAINS
    ]
    text = "\n\n".join(
        [
            f"### Stance macro-F1 per domain (evaluation pairs: {sizes})",
            markdown_table(header, rows),
            "#### F1 per class",
            markdown_table(["stance model", "domain", "supports", "refutes", "not enough info"], classes),
            f"Scored in {time.perf_counter() - started:.0f} s on {machine()}.",
            "Reproduce: `python benchmarks/stance_domains.py " + " ".join(f"--stance {s}" for s in results) + "`",
        ]
    )
    gates = [[spec, r["gate"]["threshold"], r["gate"]["mean_dev"], r["mean_dev_macro_f1"], r["gate"]["scifact_heldout"]]
             for spec, r in results.items() if "gate" in r]  # fmt: skip
    if gates:
        text += "\n\n" + "\n\n".join(
            [
                "#### A relevance gate on top (`--gate`): cosine of claim and sentence (MiniLM) below g -> not enough info",
                markdown_table(
                    [
                        "stance model",
                        "g (chosen on the dev mean)",
                        "mean dev, gated",
                        "mean dev, plain",
                        "SciFact held-out, gated",
                    ],
                    gates,
                ),
                "g = 0 means no gate helps on dev.",
            ]
        )
    best = max(results, key=lambda s: results[s]["mean_dev_macro_f1"])
    headline = {
        "benchmark": NAME,
        "best_by_mean_dev": best,
        **{
            spec: {"mean_dev": r["mean_dev_macro_f1"], **{d: r["dev"][d]["macro_f1"] for d in DEV_DOMAINS}}
            for spec, r in results.items()
        },
    }
    publish(args.name, text, headline)
    return 0


def gate_search(predict: Any, sets: dict[str, list], heldout: list) -> dict[str, Any]:
    """The gate threshold g in 0, 0.05, ..., 0.6 with the best mean dev macro-F1 (ties: the lowest g),
    and its held-out SciFact score: sentences whose MiniLM cosine to the claim is below g are called
    not enough info whatever the stance model says."""
    import numpy as np

    from factscout.text.encoder import Encoder

    encoder = Encoder()

    def gated(rows: list, g: float, cache: dict) -> Any:
        key = id(rows)
        if key not in cache:
            claims, sentences = [r[0] for r in rows], [r[1] for r in rows]
            a, b = encoder.encode(claims), encoder.encode(sentences)
            cache[key] = (np.asarray(predict(claims, sentences)), np.sum(a * b, axis=1))
        probs, cos = cache[key]
        out = probs.copy()
        out[cos < g] = [0.0, 0.0, 1.0]
        return out

    cache: dict = {}
    best = (-1.0, 0.0)
    for g in np.arange(0.0, 0.61, 0.05):
        scores = {n: score_rows(lambda c, s, rows=rows, g=g: gated(rows, g, cache), rows) for n, rows in sets.items()}
        mean = mean_macro_f1(scores)
        if mean > best[0] + 1e-9:
            best = (mean, float(g))
    held = score_rows(lambda c, s: gated(heldout, best[1], cache), heldout)
    return {"threshold": round(best[1], 2), "mean_dev": round(best[0], 4), "scifact_heldout": held["macro_f1"]}


def _takes_device(spec: str) -> bool:
    from factscout.verify.base import stance_model_takes

    return stance_model_takes(spec, "device")


if __name__ == "__main__":
    raise SystemExit(main())
