"""Out-of-domain verdict quality of ``factscout check``: Check-COVID dev and Citation-Integrity dev.

For each domain of ``--domains`` a closed-pool index of the domain's own corpus is built once, as
``factscout index --dataset NAME`` builds it (``--retriever``, hybrid by default, with stored
sentence vectors), into ``--cache`` (default ``.factscout/verdict_domains/<domain>-<retriever>``,
reused when present), and ``check`` (the Python core, default settings) runs on the dev claims for
each ``--stance`` model and each number of passages read ``--k``:

* Check-COVID dev (Wang et al., Findings of ACL 2023): 207 news claims, a pool of 347 CORD-19
  abstracts (one passage each);
* Citation-Integrity dev (Sarol et al., Bioinformatics 2024): 316 citation sentences, a pool of
  3,063 cited abstracts.

Gold labels map SUPPORT -> supported, CONTRADICT -> refuted, NEI -> not enough evidence. Reported:
verdict accuracy, macro-F1 with its 95 % bootstrap interval (claims resampled), weighted and
per-class F1, against the majority class of the domain's train split; and the definite calls
(``supported`` / ``refuted``) as ``benchmarks/calibration.py`` counts them: precision (the share
matching the gold label, a call on a gold not-enough-evidence claim being wrong) and coverage
(the share of claims with a definite gold label that receive one), with the calls withheld by the
verdict confidence's abstention when ``check`` has one.

Another split in the same format is scored against the same corpus with ``--checkcovid-claims
FILE`` (Check-COVID claim rows, as ``check-covid/dev/*.json``) or ``--citint-claims FILE``
(SciFact-format claim rows citing the Citation-Integrity corpus). ``--limit N`` checks the first N
claims of each domain (smoke runs; results then go to ``verdict_domains_smoke`` unless ``--name``).

    python benchmarks/verdict_domains.py [--domains checkcovid,citint] [--retriever hybrid]
        [--stance cross [--stance head ...]] [--k 5 | --k 1,3,5]
        [--checkcovid-claims FILE] [--citint-claims FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, machine, markdown_table, publish, quiet, write_predictions
from verdict import COLUMNS, gold_label, row_of, scores

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.records import Claim, Passage
from factscout.report import Report

NAME = "verdict_domains"
DOMAINS = {"checkcovid": "Check-COVID", "citint": "Citation-Integrity"}


def definite_calls(gold: Sequence[str], pred: Sequence[str]) -> tuple[int, float | None, float]:
    """The definite calls (``supported`` / ``refuted``) among ``pred``: how many, their precision
    (``None`` when there is none) and their coverage (:func:`factscout.evaluate.calibration.definite_calls`)."""
    from factscout.evaluate.calibration import definite_calls as score

    s = score(gold, pred)
    return s.calls, s.precision, s.coverage


def domain_split(domain: str, path: str | None) -> tuple[list[Claim], list[Passage], str]:
    """The dev claims of ``domain`` (or those of ``path``, in the dataset's own format) and its corpus."""
    if path is None:
        data = load_dataset(domain, "dev")
        source = f"{DOMAINS[domain]} dev"
    else:
        from factscout.training.stance.domains import load_split_file  # read by the dataset's own loader

        data = load_split_file(domain, path)
        source = f"{DOMAINS[domain]} {Path(path).name}"
    return list(data.claims), list(data.corpus), source


def closed_pool_index(domain: str, corpus: Sequence[Passage], retriever: str, folder: Path) -> tuple[Path, float]:
    """``folder`` holding an index of ``corpus`` as ``factscout index --dataset DOMAIN`` builds it
    (stored sentence vectors), built unless one of the same corpus and retriever is there; the
    seconds spent building it (0 when reused)."""
    from factscout.errors import BadIndex
    from factscout.retrieve import build_retriever, save_index
    from factscout.retrieve.index import index_sentences, read_manifest

    source = f"dataset {domain}"
    try:
        _, manifest = read_manifest(folder)
        wanted = {"retriever": retriever, "n_passages": len(corpus), "source": source, "sentences": True}
        if all(manifest.get(k) == v for k, v in wanted.items()):
            return folder, 0.0
    except BadIndex:
        pass
    print(f"{domain}: indexing {len(corpus)} passages ({retriever}) into {folder}", file=sys.stderr)
    t = time.perf_counter()
    built = build_retriever(corpus, retriever)
    save_index(built, folder, source=source, sentences=index_sentences(built.store.passages))
    return folder, time.perf_counter() - t


def train_majority(domain: str) -> str:
    """The most common gold verdict of the domain's train split."""
    return Counter(gold_label(c) for c in load_dataset(domain, "train").claims).most_common(1)[0][0]


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise SystemExit(f"--k takes positive integers separated by commas, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise SystemExit(f"--k takes positive integers separated by commas, got {text!r}")
    return ks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", default=",".join(DOMAINS), help=f"comma-separated: {', '.join(DOMAINS)}")
    parser.add_argument("--retriever", default="hybrid", help="closed-pool index kind: hybrid | bm25 | dense")
    parser.add_argument("--stance", action="append", help="stance model spec of check (repeat; default: cross)")
    parser.add_argument("--k", default=str(CheckSettings().passages), help="passages read, e.g. 5 or 1,3,5")
    parser.add_argument("--checkcovid-claims", help="Check-COVID claims file (JSON lines) to score instead of dev")
    parser.add_argument("--citint-claims", help="SciFact-format claims JSONL (Citation-Integrity) instead of dev")
    parser.add_argument("--limit", type=int, default=0, help="check only the first N claims per domain (smoke runs)")
    parser.add_argument("--cache", type=Path, default=ROOT / ".factscout" / NAME, help="folder of the indexes")
    parser.add_argument("--name", help=f"results name (default {NAME}; {NAME}_smoke with --limit)")
    args = parser.parse_args(argv)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown or not domains:
        parser.error(f"unknown domain(s) {unknown}; known: {', '.join(DOMAINS)}")
    stances = list(dict.fromkeys(args.stance or [CheckSettings().stance]))
    ks = parse_ks(args.k)
    name = args.name or (f"{NAME}_smoke" if args.limit else NAME)
    files = {"checkcovid": args.checkcovid_claims, "citint": args.citint_claims}
    quiet()

    text: list[str] = []
    headline: dict[str, Any] = {"benchmark": name, "retriever": args.retriever, "k": ks, "claims": {}, "macro_f1": {}}
    for domain in domains:
        claims, corpus, source = domain_split(domain, files[domain])
        if args.limit:
            claims = claims[: args.limit]
        index, build_s = closed_pool_index(domain, corpus, args.retriever, args.cache / f"{domain}-{args.retriever}")
        table, figures, notes = score_domain(domain, claims, index, stances, ks, name)
        headline["claims"][domain] = len(claims)
        headline["macro_f1"][domain] = figures
        gold = Counter(gold_label(c) for c in claims)
        built = f"built in {build_s:.0f} s" if build_s else "reused from the cache"
        text += [
            f"### {source}: {len(claims)} claims, {dict(gold)}",
            "",
            table,
            "",
            f"Closed pool: {len(corpus)} passages, {args.retriever} index {built}; {notes}",
            "",
        ]
    text.append(f"Reproduce: `python benchmarks/verdict_domains.py {shlex.join(argv or sys.argv[1:])}`".rstrip())
    publish(name, "\n".join(text), headline)
    return 0


def table_row(system: str, k: object, gold: Sequence[str], pred: Sequence[str], abstained: object) -> list[object]:
    """verdict.py's row (accuracy, macro-F1 and its interval, per-class F1) and the definite calls."""
    n, precision, coverage = definite_calls(gold, pred)
    return [*row_of(system, k, gold, pred), n, "-" if precision is None else precision, coverage, abstained]


def score_domain(
    domain: str, claims: Sequence[Claim], index: Path, stances: Sequence[str], ks: Sequence[int], name: str
) -> tuple[str, dict[str, float], str]:
    """``check`` on ``claims`` over ``index`` with each stance model and number of passages read:
    the markdown table, the macro-F1 of each row (``majority``, ``<stance>@<k>``) and a note on the
    timings and the verdict confidence."""
    gold = [gold_label(c) for c in claims]
    majority = train_majority(domain)
    rows = [table_row(f"majority class of train ({majority})", "-", gold, [majority] * len(claims), "-")]
    figures = {"majority": round(scores(gold, [majority] * len(claims))["macro-F1"], 4)}
    timing: list[str] = []
    shared: dict[str, Any] = {}
    found = None
    confidence = None
    for spec in stances:
        t = time.perf_counter()
        checker = Checker.from_index(index, CheckSettings(stance=spec), **shared)
        shared.setdefault("encoder", checker.encoder)
        if found is None:  # retrieval does not depend on the stance model
            found = checker.retrieve(claims)
            timing.append(f"retrieval {time.perf_counter() - t:.0f} s")
            t = time.perf_counter()
        confidence = confidence or checker.provenance.get("verdict_confidence")
        for k in ks:
            reports: list[Report] = checker.judge(claims, found, passages=k)
            pred = [r.verdict.label for r in reports]
            abstained = sum(bool(getattr(r.verdict, "abstained", False)) for r in reports)
            rows.append(table_row(f"factscout check, stance `{spec}`", k, gold, pred, abstained))
            figures[f"{spec}@{k}"] = round(scores(gold, pred)["macro-F1"], 4)
            write_predictions(name, f"{domain}-{spec}-k{k}", prediction_rows(claims, gold, reports))
        timing.append(f"stance `{spec}` {time.perf_counter() - t:.0f} s for k = {', '.join(map(str, ks))}")
        print(f"{domain} {spec}: " + ", ".join(f"k={k} {figures[f'{spec}@{k}']:.4f}" for k in ks), file=sys.stderr)
    header = ["system", "passages read", *COLUMNS[:2], "macro-F1 95% CI", *COLUMNS[2:]]
    header += ["definite calls", "precision (definite)", "coverage (definite)", "abstained"]
    return markdown_table(header, rows), figures, f"{'; '.join(timing)} on {machine()}. {_confidence_text(confidence)}"


def prediction_rows(claims: Sequence[Claim], gold: Sequence[str], reports: Sequence[Report]) -> list[dict[str, Any]]:
    return [
        {
            "claim_id": c.claim_id,
            "gold": g,
            "predicted": r.verdict.label,
            "call": getattr(r.verdict, "call", None),
            "confidence": getattr(r.verdict, "confidence", None),
        }
        for c, g, r in zip(claims, gold, reports, strict=True)
    ]


def _confidence_text(info: Any) -> str:
    if not isinstance(info, dict) or info.get("method") is None:
        return "No verdict confidence model was used: check did not abstain."
    return (
        f"Verdict confidence ({info['method']}) abstains below {info.get('min_confidence')}; it was fitted on dev "
        "claims (benchmarks/calibration.py), Check-COVID dev among them: its abstentions are in-sample there."
    )


if __name__ == "__main__":
    raise SystemExit(main())
