"""Calibrated, selective verdicts: fit the verdict confidence on dev claims, choose ``check``'s
default ``--min-confidence``, and measure calibration, precision and coverage per domain.

``check`` (the Python core) runs with abstention off on labelled claims of each domain, against a
closed pool: the domain's own corpus (SciFact's 5,183 abstracts, Check-COVID's 347):

* **fitting** (dev) claims: the 92 SciFact dev claims (``training.stance_pairs.scifact_dev_ids``:
  the part of the training claims the stance cross-encoder kept to choose its epoch; never the
  202 held-out claims of ``verify/models/scifact_heldout_ids.txt``) and, when its loader is
  registered, Check-COVID's ``--split`` (dev) claims;
* **reported only**: the 202 held-out SciFact claims (and ``--claims/--corpus``, unless
  ``--fit-on-claims``).

Every definite call (``supported`` / ``refuted``) gives one row of
:func:`factscout.verify.confidence.call_features` and whether it matched the gold label. On the
pooled fitting calls: ``--method auto`` picks isotonic or Platt scaling by 5-fold cross-validated
Brier score; the threshold is the smallest on a 0.01 grid whose out-of-fold precision reaches
``--target-precision`` (with at least ``--min-calls`` calls); the model refitted on all fitting
calls is written with that threshold (``src/factscout/verify/models/verdict_confidence.json``),
which ``check`` then uses by default. ECE (10 equal-width bins) before calibration is that of the
raw confidence ``max_call`` (the strongest sentence's probability for the called side); after, the
out-of-fold calibrated one on dev and the fitted model's on reported-only claims.

Precision: the share of definite calls (after abstaining) that match the gold label, over all
claims of the domain (a call on a gold not-enough-evidence claim is wrong). Coverage: the share
of the claims with a definite gold label that receive a definite call. Macro-F1 over the three
verdicts, abstentions counted as ``not enough evidence``.

Writes the reliability diagram ``docs/img/verdict_reliability.png``, one risk-coverage curve per
domain ``docs/img/verdict_risk_coverage_<domain>.png``, the tables to
``benchmarks/results/calibration.md`` (shown in docs/results.md) and ends with one JSON line.
``--limit N`` (a smoke run) checks N claims per domain and writes everything, the model included,
under ``benchmarks/results/calibration_smoke/`` instead.

    python benchmarks/calibration.py [--retriever hybrid|bm25] [--index .factscout/scifact-index]
        [--domains scifact,checkcovid] [--split dev] [--claims C --corpus P [--fit-on-claims]]
        [--method auto|isotonic|platt] [--target-precision 0.8] [--limit N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, ROOT, machine, markdown_table, publish, quiet, write_predictions

from factscout.check import Checker, CheckSettings
from factscout.datasets import DATASETS, load_dataset
from factscout.evaluate.calibration import (
    expected_calibration_error,
    reliability_bins,
    risk_coverage,
    selective_scores,
    threshold_for_precision,
)
from factscout.evaluate.classification import macro_f1
from factscout.formats.beir import read_claims, read_corpus
from factscout.records import Claim, Passage
from factscout.report import Report
from factscout.retrieve import build_retriever
from factscout.verify.confidence import (
    DEFINITE,
    FEATURE_NAMES,
    MODEL_FILE,
    call_features,
    fit_verdict_confidence,
)
from factscout.verify.verdict import VERDICT_LABELS

NEI = "not enough evidence"
GOLD = {
    "SUPPORT": "supported",
    "SUPPORTS": "supported",
    "SUPPORTED": "supported",
    "CONTRADICT": "refuted",
    "REFUTE": "refuted",
    "REFUTES": "refuted",
    "REFUTED": "refuted",
    "NEI": NEI,
    "NOTENOUGHINFO": NEI,
    "NOT ENOUGH INFO": NEI,
    "NOT ENOUGH EVIDENCE": NEI,
}
FOLDS = 5
SEED = 13


def gold_label(claim: Claim) -> str:
    raw = str(claim.meta.get("label", "")).strip()
    if raw.upper() not in GOLD:
        raise SystemExit(f"claim {claim.claim_id}: label {raw!r} is not one of {sorted(GOLD)}")
    return GOLD[raw.upper()]


@dataclass
class Domain:
    """One domain's labelled claims against its closed pool, and what ``check`` said."""

    name: str
    fit: bool  # its calls fit the model (dev) or are only reported
    claims: list[Claim]
    corpus: Sequence[Passage] | None  # None: read from --index
    gold: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # the method's verdict, abstention off
    features: list[np.ndarray] = field(default_factory=list)  # per claim (zeros when not definite)

    @property
    def definite(self) -> np.ndarray:
        return np.array([c in DEFINITE for c in self.calls], dtype=bool)

    @property
    def correct(self) -> np.ndarray:
        return np.array([c == g for c, g in zip(self.calls, self.gold, strict=True)], dtype=bool)

    @property
    def gold_definite(self) -> np.ndarray:
        return np.array([g in DEFINITE for g in self.gold], dtype=bool)

    def x(self) -> np.ndarray:
        return np.array([f for f, d in zip(self.features, self.definite, strict=True) if d]).reshape(
            -1, len(FEATURE_NAMES)
        )


def domains(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Domain]:
    from factscout.training.splits import read_heldout_ids
    from factscout.training.stance.pairs import scifact_dev_ids

    out: list[Domain] = []
    for name in [d.strip() for d in args.domains.split(",") if d.strip()]:
        if name == "scifact":
            data = load_dataset("scifact", "train")
            heldout = read_heldout_ids()
            dev = scifact_dev_ids(data.claims, heldout)
            corpus = None if args.index else data.corpus
            out.append(Domain("scifact-dev", True, [c for c in data.claims if c.claim_id in dev], corpus))
            if not args.no_heldout:
                held = [c for c in data.claims if c.claim_id in heldout]
                out.append(Domain("scifact-heldout", False, held, corpus))
        elif name not in DATASETS:
            print(f"skipping {name}: no dataset loader named {name!r} is registered yet")
        else:
            data = load_dataset(name, args.split)
            out.append(Domain(f"{name}-{args.split}", True, list(data.claims), list(data.corpus)))
    if bool(args.claims) != bool(args.corpus):
        parser.error("--claims and --corpus go together")
    if args.claims:
        out.append(Domain(Path(args.claims).stem, args.fit_on_claims, list(read_claims(args.claims)),
                          list(read_corpus(args.corpus))))  # fmt: skip
    if args.limit:
        for d in out:
            d.claims = d.claims[: args.limit]
    return [d for d in out if d.claims]


def run_check(domain_list: list[Domain], args: argparse.Namespace, settings: CheckSettings) -> dict[str, float]:
    """Check every domain's claims (abstention off) and keep each claim's call and features."""
    seconds: dict[str, float] = {}
    shared: dict[str, Any] = {}
    pools: dict[int, Checker] = {}
    for d in domain_list:
        t = time.perf_counter()
        key = id(d.corpus) if d.corpus is not None else 0
        if key not in pools:
            if d.corpus is None:
                pools[key] = Checker.from_index(args.index, settings, **shared)
            else:
                retriever = build_retriever(list(d.corpus), args.retriever, show_progress=False)
                pools[key] = Checker(retriever, settings, **shared)
            shared = {"stance": pools[key].stance, "encoder": pools[key].encoder}
        reports: list[Report] = pools[key].check_many(d.claims, batch_size=32)
        d.gold = [gold_label(c) for c in d.claims]
        for r in reports:
            call = r.verdict.call or r.verdict.label
            d.calls.append(call)
            probs = [s.probabilities for e in r.evidence for s in e.sentences]
            d.features.append(call_features(call, probs) if call in DEFINITE else np.zeros(len(FEATURE_NAMES)))
        seconds[d.name] = time.perf_counter() - t
        write_predictions(
            args.name,
            d.name,
            (
                {"claim_id": c.claim_id, "gold": g, "call": k, "features": f.round(6).tolist()}
                for c, g, k, f in zip(d.claims, d.gold, d.calls, d.features, strict=True)
            ),
        )
    return seconds


def folds(n: int, k: int = FOLDS, seed: int = SEED) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n) % k


def out_of_fold(x: np.ndarray, y: np.ndarray, method: str, l2: float) -> np.ndarray:
    """Each call's calibrated confidence from a model fitted without its fold."""
    part = folds(len(y), min(FOLDS, len(y)))
    out = np.zeros(len(y))
    for f in np.unique(part):
        train = part != f
        model = fit_verdict_confidence(x[train], y[train], method=method, l2=l2)  # type: ignore[arg-type]
        out[~train] = model.predict_features(x[~train])
    return out


def plot_reliability(path: Path, curves: list[tuple[str, np.ndarray, np.ndarray]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    ax.plot([0, 1], [0, 1], color="#999", lw=1, ls="--", label="perfect calibration")
    for label, conf, correct in curves:
        bins = [b for b in reliability_bins(conf, correct) if b.count]
        ece = expected_calibration_error(conf, correct)
        ax.plot([b.confidence for b in bins], [b.accuracy for b in bins], marker="o",
                label=f"{label} (ECE {ece:.3f}, {len(conf)} calls)")  # fmt: skip
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence (mean per bin, 10 equal-width bins)",
           ylabel="share of calls that were right", title="Verdict confidence: reliability diagram")  # fmt: skip
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_risk_coverage(path: Path, title: str, d: Domain, conf: np.ndarray, threshold: float | None) -> float:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    definite = d.definite
    gold_def = d.gold_definite[definite]
    curve = risk_coverage(conf, d.correct[definite], covered=gold_def, of=max(int(d.gold_definite.sum()), 1))
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    ax.plot(curve.coverage, curve.risk, marker=".", label=f"AURC {curve.area():.3f}")
    if threshold is not None:
        at = selective_scores(conf, d.correct[definite], threshold, covered=gold_def,
                              of=max(int(d.gold_definite.sum()), 1))  # fmt: skip
        if at.precision is not None:
            ax.plot([at.coverage], [1 - at.precision], "o", color="C3", label=f"--min-confidence {threshold:g}")
    ax.axhline(0.2, color="#999", lw=1, ls="--", label="risk 0.20 (precision 0.80)")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="coverage (claims with a definite gold label given a definite call)",
           ylabel="risk (definite calls that are wrong)", title=title)  # fmt: skip
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return curve.area()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", default="hybrid", help="index built over each domain's corpus: bm25 | hybrid")
    parser.add_argument("--index", help="a `factscout index` of the SciFact corpus to use instead of building one")
    parser.add_argument("--domains", default="scifact,checkcovid", help="datasets (comma-separated); scifact: dev ids")
    parser.add_argument("--split", default="dev", help="split of the domains other than scifact")
    parser.add_argument("--no-heldout", action="store_true", help="skip the held-out SciFact claims (reported only)")
    parser.add_argument("--claims", help="another labelled split: claims JSONL (BEIR queries with metadata.label)")
    parser.add_argument("--corpus", help="BEIR corpus JSONL for --claims (its closed pool)")
    parser.add_argument("--fit-on-claims", action="store_true", help="fit on --claims too (default: report only)")
    parser.add_argument("--planner", default="decompose")
    parser.add_argument("--stance", default=CheckSettings().stance)
    parser.add_argument("--verdict", default=CheckSettings().verdict)
    parser.add_argument("--method", default="auto", choices=["auto", "isotonic", "platt"])
    parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the logistic score")
    parser.add_argument("--target-precision", type=float, default=0.8)
    parser.add_argument("--min-calls", type=int, default=10, help="calls the chosen threshold must keep on dev")
    parser.add_argument("--limit", type=int, default=0, help="check only the first N claims per domain (smoke runs)")
    parser.add_argument("--name", help="results name (default calibration; calibration_smoke with --limit)")
    parser.add_argument("--model-out", type=Path, help=f"default {MODEL_FILE.relative_to(ROOT)}")
    parser.add_argument("--img-dir", type=Path, help="default docs/img")
    args = parser.parse_args()
    smoke = bool(args.limit)
    command = shlex.join(["python", "benchmarks/calibration.py", *sys.argv[1:]])
    args.name = args.name or ("calibration_smoke" if smoke else "calibration")
    model_out = args.model_out or (RESULTS / args.name / MODEL_FILE.name if smoke else MODEL_FILE)
    img_dir = args.img_dir or (RESULTS / args.name / "img" if smoke else ROOT / "docs" / "img")
    quiet()

    settings = CheckSettings(planner=args.planner, stance=args.stance, verdict=args.verdict, min_verdict_confidence=0.0)
    domain_list = domains(args, parser)
    seconds = run_check(domain_list, args, settings)
    fitting = [d for d in domain_list if d.fit]
    if not fitting:
        raise SystemExit("no fitting (dev) domain: give --domains with scifact or a dataset with a dev split")

    x = np.vstack([d.x() for d in fitting])
    y = np.concatenate([d.correct[d.definite] for d in fitting]).astype(float)
    covered = np.concatenate([d.gold_definite[d.definite] for d in fitting])
    n_gold_definite = sum(int(d.gold_definite.sum()) for d in fitting)
    if len(y) < 2:
        raise SystemExit(f"only {len(y)} definite calls on the fitting claims: nothing to calibrate")
    brier = {m: float(np.mean((out_of_fold(x, y, m, args.l2) - y) ** 2)) for m in ("isotonic", "platt")}
    method = min(brier, key=lambda m: brier[m]) if args.method == "auto" else args.method
    oof = out_of_fold(x, y, method, args.l2)
    choice = threshold_for_precision(
        oof, y, args.target_precision, min_calls=args.min_calls, covered=covered, of=max(n_gold_definite, 1)
    )
    threshold = None if choice is None else choice.threshold
    raw_dev = x[:, 0]
    dev = {
        "calls": len(y),
        "ece_before": round(expected_calibration_error(raw_dev, y), 4),
        "ece_after_oof": round(expected_calibration_error(oof, y), 4),
        "brier_oof": {m: round(b, 4) for m, b in brier.items()},
        "threshold_precision": None if choice is None else round(choice.precision or 0.0, 4),
        "threshold_coverage": None if choice is None else round(choice.coverage, 4),
    }
    model = fit_verdict_confidence(
        x,
        y,
        method=method,  # type: ignore[arg-type]
        l2=args.l2,
        threshold=threshold,
        fitted_with={"stance": settings.stance, "verdict": settings.verdict, "selector": settings.selector,
                     "passages": settings.passages, "planner": settings.planner, "retriever": args.retriever},
        info={"fitted_on": {d.name: int(d.definite.sum()) for d in fitting}, "target_precision": args.target_precision,
              "min_calls": args.min_calls, "l2": args.l2, "dev": dev, "date": dt.date.today().isoformat(),
              "command": command},
    )  # fmt: skip
    model.save(model_out)

    rows, headline = [], {"benchmark": args.name, "method": method, "threshold": threshold, **{
        "ece_dev_before": dev["ece_before"], "ece_dev_after": dev["ece_after_oof"]}}  # fmt: skip
    curves = [("dev, raw max_call", raw_dev, y), (f"dev, {method} (out-of-fold)", oof, y)]
    oof_at = iter(np.split(oof, np.cumsum([int(d.definite.sum()) for d in fitting])[:-1]))
    images = []
    applied = threshold if threshold is not None else 0.0  # what check does by default: no threshold, no abstention
    for d in domain_list:
        definite, correct = d.definite, d.correct
        conf = next(oof_at) if d.fit else model.predict_features(d.x())
        if not d.fit:
            curves.append((f"{d.name}, {method} (reported only)", conf, correct[definite].astype(float)))
        of = max(int(d.gold_definite.sum()), 1)
        raw = selective_scores(conf, correct[definite], 0.0, covered=d.gold_definite[definite], of=of)
        at = selective_scores(conf, correct[definite], applied, covered=d.gold_definite[definite], of=of)
        kept = np.zeros(len(d.calls), dtype=bool)
        kept[np.flatnonzero(definite)[conf >= applied]] = True
        abstained = [c if k or c not in DEFINITE else NEI for c, k in zip(d.calls, kept, strict=True)]
        img = img_dir / f"verdict_risk_coverage_{d.name}.png"
        aurc = plot_risk_coverage(img, f"Risk-coverage: {d.name} ({'dev' if d.fit else 'reported only'})", d, conf,
                                  threshold)  # fmt: skip
        images.append((d.name, img))
        ece_before = expected_calibration_error(d.x()[:, 0], correct[definite])
        ece_after = expected_calibration_error(conf, correct[definite])
        rows.append([
            d.name, "fit (out-of-fold)" if d.fit else "reported", len(d.claims), int(d.gold_definite.sum()),
            raw.calls, _f(raw.precision), raw.coverage, macro_f1(d.gold, d.calls, VERDICT_LABELS),
            ece_before, ece_after, at.calls, _f(at.precision), at.coverage,
            macro_f1(d.gold, abstained, VERDICT_LABELS), aurc,
        ])  # fmt: skip
        key = d.name.replace("-", "_")
        headline.update({
            f"{key}_precision": None if at.precision is None else round(at.precision, 4),
            f"{key}_coverage": round(at.coverage, 4),
            f"{key}_ece": round(ece_after, 4),
            f"{key}_macro_f1": round(macro_f1(d.gold, abstained, VERDICT_LABELS), 4),
        })  # fmt: skip
    reliability = img_dir / "verdict_reliability.png"
    plot_reliability(reliability, curves)

    shown_t = f"{applied:g}"
    columns = ["domain", "role", "claims", "definite gold", "calls", "precision", "coverage", "macro-F1", "ECE raw",
               "ECE calibrated", *(f"{m} @ {shown_t}" for m in ("calls", "precision", "coverage", "macro-F1")), "AURC"]  # fmt: skip
    text = [
        f"### Calibrated, selective verdicts (`check --min-confidence`, stance {settings.stance}, verdict "
        f"{settings.verdict}, {args.retriever} over each domain's corpus)",
        "",
        markdown_table(columns, rows),
        "",
        f"Confidence model: {method} (5-fold Brier on the dev calls: isotonic {brier['isotonic']:.4f}, Platt "
        f"{brier['platt']:.4f}), fitted on {len(y)} definite calls of {', '.join(d.name for d in fitting)}. Default "
        f"`--min-confidence`: {'0 (no threshold reaches the target)' if threshold is None else shown_t}, the "
        f"smallest threshold (0.01 grid, at least {args.min_calls} calls) whose out-of-fold precision on dev is >= "
        f"{args.target_precision:g}"
        + ("" if choice is None else f" (dev: precision {choice.precision:.3f}, coverage {choice.coverage:.3f})")
        + ". Columns before `@` are the pipeline's own calls (no abstention); ECE raw is that of the strongest "
        "sentence's probability for the called side, ECE calibrated the out-of-fold (dev) or fitted (reported) "
        "model's; 10 equal-width bins. Precision: definite calls matching the gold label; coverage: claims with a "
        "definite gold label given a definite call; macro-F1 over the three verdicts with abstentions as not enough "
        "evidence; AURC: area under the risk-coverage curve.",
        "",
        f"Check took {', '.join(f'{n} {s:.0f} s' for n, s in seconds.items())} on {machine()}.",
        "",
        *_images(reliability, images),
        "",
        f"Reproduce: `{command}` (writes `{_shown(model_out)}`).",
    ]
    publish(args.name, "\n".join(text), headline)


def _f(value: float | None) -> float | str:
    return "-" if value is None else value


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)


def _images(reliability: Path, curves: list[tuple[str, Path]]) -> list[str]:
    """Markdown images, with links relative to docs/results.md where this block is shown."""
    docs = ROOT / "docs"

    def link(p: Path) -> str:
        return os.path.relpath(p.resolve(), docs)

    lines = [f"![reliability diagram of the verdict confidence]({link(reliability)})", ""]
    lines += [f"![risk-coverage, {name}]({link(p)})" for name, p in curves]
    return lines


if __name__ == "__main__":
    main()
