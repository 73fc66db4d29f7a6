"""The end-to-end demo behind ``make demo``: index SciFact, search its claims, score the runs.

It runs the whole check pipeline (plan -> retrieve -> fuse -> select -> stance -> verdict) on a
few example claims, scores retrieval over all train claims (nDCG@10, R@100, MRR@10), and checks
the train claims held out from every model's training (``verify/models/scifact_heldout_ids.txt``)
to score them: nDCG@10, the verdict macro-F1 (supported / refuted / not enough evidence) and the
precision and coverage of the definite verdicts at the default ``--min-confidence``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.errors import BadIndex
from factscout.evaluate import evaluate
from factscout.evaluate.calibration import SelectiveScore, definite_calls
from factscout.evaluate.classification import macro_f1
from factscout.records import NOT_ENOUGH_EVIDENCE, REFUTED, RULE_VERDICT_LABELS, SUPPORTED, Claim, Ranking
from factscout.report import Report
from factscout.retrieve import Retriever, build_index, load_index
from factscout.retrieve.index import read_manifest

log = logging.getLogger(__name__)
HELDOUT_FILE = Path(__file__).resolve().parent / "verify" / "models" / "scifact_heldout_ids.txt"
GOLD = {"SUPPORT": SUPPORTED, "CONTRADICT": REFUTED, "NEI": NOT_ENOUGH_EVIDENCE}  # SciFact's labels


@dataclass(frozen=True)
class HeldOut:
    """What ``check`` scores on the SciFact train claims held out from training."""

    claims: int
    ndcg10: float
    macro_f1: float
    definite: SelectiveScore  # precision and coverage of the supported / refuted verdicts
    min_confidence: float  # the threshold check abstained below (0: never)


@dataclass(frozen=True)
class DemoResult:
    retriever: Retriever
    examples: list[tuple[Claim, Ranking]]
    reports: list[Report]
    scores: dict[str, float]
    n_queries: int
    heldout: HeldOut | None = None
    built: bool = False  # this run built the index
    sentences_stored: bool = False  # the checks read the index's stored sentence vectors
    timings: dict[str, float] = field(default_factory=dict)  # wall seconds of each step


def _index(dataset, retriever: str, index: str | os.PathLike[str], *, staged: bool) -> tuple[Retriever, bool]:  # type: ignore[no-untyped-def]
    """The demo's index and whether this call built it. An index of this corpus made with this
    retriever and the demo's encoder is reused, with or without its sentence vectors; else one is
    built: ``staged``, from the passages alone (the demo answers at once; the sentence vectors are
    added afterwards, :func:`~factscout.retrieve.index.sentences_in_background`), else with them."""
    try:
        gen, manifest = read_manifest(index)
        if (
            manifest["retriever"] == retriever
            and manifest["n_passages"] == len(dataset.corpus)
            and index_encoder(gen, retriever) == demo_settings(retriever).get("dense", {}).get("encoder", "minilm")
        ):
            return load_index(index), False
    except BadIndex:
        pass
    what = "passages (sentence vectors follow)" if staged else "passages with their sentence vectors"
    log.info("building a %s index of %d %s in %s", retriever, len(dataset.corpus), what, index)
    settings = demo_settings(retriever)
    return build_index(dataset.corpus, index, retriever, settings, show_progress=True, sentences=not staged), True


def index_encoder(generation: Path, retriever: str) -> str | None:
    """The passage encoder a dense or hybrid index generation was built with (``None``: no encoder)."""
    config = generation / retriever / ("dense/dense.json" if retriever == "hybrid" else "dense.json")
    if retriever not in ("dense", "hybrid"):
        return "minilm"  # nothing encoded: any encoder setting fits
    try:
        return str(json.loads(config.read_text())["encoder"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def demo_settings(retriever: str) -> dict:
    """The demo encodes its corpus on the fastest path of equal quality: MiniLM in int8
    (``minilm-int8``: faster on passages, SciFact hybrid nDCG@10 within noise of fp32's; the figures
    are in docs/results.md, quantised inference) when ONNX Runtime is installed."""
    if retriever not in ("dense", "hybrid") or importlib.util.find_spec("onnxruntime") is None:
        return {}
    return {"dense": {"encoder": "minilm-int8"}}


def run_demo(
    *,
    retriever: str = "hybrid",
    index: str | os.PathLike[str] = Path(".factscout/scifact-index"),
    n_claims: int = 3,
    k: int = 5,
    dataset: str = "scifact",
    check: bool = True,
    planner: str = "decompose",
    heldout: int | None = None,
    staged: bool = True,
) -> DemoResult:
    """Index ``dataset`` (SciFact, or its mini fixture), search every train claim, score the run,
    and check ``n_claims`` example claims end to end and the first ``heldout`` held-out claims
    (``None``: all; 0: none) for their scores (``check=False`` skips both). ``staged``: a new
    index holds the passages only and the checks embed the sentences they read (the caller adds
    the sentence vectors afterwards); else they are stored before anything is checked."""
    clock = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    data = load_dataset(dataset, "train")
    engine, built = _index(data, retriever, index, staged=staged)
    lap("index")
    queries = data.queries()
    rankings = engine.search(queries, 100)
    with_evidence = [c for c in data.claims if c.meta.get("evidence")]
    picks = {c.claim_id for c in with_evidence[:: max(1, len(with_evidence) // max(n_claims, 1))][:n_claims]}
    examples = [(c, r.top(k)) for c, r in zip(data.claims, rankings, strict=True) if c.claim_id in picks]
    scores = evaluate(data.qrels, rankings, ["nDCG@10", "R@100", "MRR@10"]).means()
    lap("search")
    if not check:
        return DemoResult(engine, examples, [], scores, len(queries), built=built, timings=timings)
    # check's default path: the index's stored sentence vectors (when there) and, for a hybrid index, int8 queries
    checker_log = logging.getLogger("factscout.check")
    level = checker_log.level
    checker_log.setLevel(logging.ERROR)  # the demo says itself when its index has no sentence vectors yet
    try:
        checker = Checker.from_index(index, CheckSettings(planner=planner))
    finally:
        checker_log.setLevel(level)
    stored = checker.sentences is not None
    reports = checker.check_many([c for c, _ in examples])
    lap("examples")
    result = DemoResult(engine, examples, reports, scores, len(queries), None, built, stored, timings)
    held_ids = {line.strip() for line in HELDOUT_FILE.read_text().splitlines() if line.strip()}
    held = [(c, r) for c, r in zip(data.claims, rankings, strict=True) if c.claim_id in held_ids]
    held = [(c, r) for c, r in held if c.meta.get("label") in GOLD][:heldout]
    if not held:
        return result
    gold = [GOLD[c.meta["label"]] for c, _ in held]
    predicted = [r.verdict.label for r in checker.check_many([c for c, _ in held], batch_size=32)]
    judged = [c.claim_id for c, _ in held if any(v > 0 for v in data.qrels.get(c.claim_id, {}).values())]
    ndcg = evaluate(data.qrels, [r for _, r in held], ["nDCG@10"], queries=judged).means()["nDCG@10"]
    lap("heldout")
    score = HeldOut(
        len(held),
        ndcg,
        macro_f1(gold, predicted, RULE_VERDICT_LABELS),
        definite_calls(gold, predicted),
        checker.min_confidence,
    )
    return DemoResult(engine, examples, reports, scores, len(queries), score, built, stored, timings)
