"""The end-to-end demo behind ``make demo``: index SciFact, search its claims, score the runs.

It runs the whole check pipeline (plan -> retrieve -> fuse -> select -> stance -> verdict) on a
few example claims, scores retrieval over all train claims (nDCG@10, R@100, MRR@10), and checks
the train claims held out from every model's training (``verify/models/scifact_heldout_ids.txt``)
to score them: nDCG@10, the verdict macro-F1 (supported / refuted / not enough evidence) and the
precision and coverage of the definite verdicts at the default ``--min-confidence``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.errors import BadIndex
from factscout.evaluate import evaluate
from factscout.evaluate.calibration import SelectiveScore, definite_calls
from factscout.records import NOT_ENOUGH_EVIDENCE, REFUTED, RULE_VERDICT_LABELS, SUPPORTED, Claim, Ranking
from factscout.report import Report
from factscout.retrieve import Retriever, build_index, load_index
from factscout.retrieve.index import read_manifest
from factscout.verify.verdict import macro_f1

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


def _index(dataset, retriever: str, index: str | os.PathLike[str]) -> Retriever:  # type: ignore[no-untyped-def]
    """The demo's index, reused when it holds this corpus with this retriever and the sentence
    vectors ``check`` reads (else rebuilt with them: an index made for checking stores them)."""
    from factscout.retrieve.sentences import load_sentence_data

    try:
        gen, manifest = read_manifest(index)
        if (
            manifest["retriever"] == retriever
            and manifest["n_passages"] == len(dataset.corpus)
            and load_sentence_data(gen, len(dataset.corpus)) is not None
        ):
            return load_index(index)
    except BadIndex:
        pass
    log.info(
        "building a %s index of %d passages with their sentence vectors in %s", retriever, len(dataset.corpus), index
    )
    return build_index(dataset.corpus, index, retriever, demo_settings(retriever), show_progress=True, sentences=True)


def demo_settings(retriever: str) -> dict:
    """The demo encodes its corpus on the fastest path of equal quality: MiniLM in int8
    (``minilm-int8``, 1.7x faster on passages; SciFact hybrid nDCG@10 0.7323 against fp32's
    0.7335, within noise: docs/results.md, quantised inference) when ONNX Runtime is installed."""
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
) -> DemoResult:
    """Index ``dataset`` (SciFact, or its mini fixture), search every train claim, score the run,
    and check ``n_claims`` example claims end to end and the first ``heldout`` held-out claims
    (``None``: all; 0: none) for their scores (``check=False`` skips both)."""
    data = load_dataset(dataset, "train")
    engine = _index(data, retriever, index)
    queries = data.queries()
    rankings = engine.search(queries, 100)
    with_evidence = [c for c in data.claims if c.meta.get("evidence")]
    picks = {c.claim_id for c in with_evidence[:: max(1, len(with_evidence) // max(n_claims, 1))][:n_claims]}
    examples = [(c, r.top(k)) for c, r in zip(data.claims, rankings, strict=True) if c.claim_id in picks]
    scores = evaluate(data.qrels, rankings, ["nDCG@10", "R@100", "MRR@10"]).means()
    if not check:
        return DemoResult(engine, examples, [], scores, len(queries))
    # check's default path: the index's stored sentence vectors and, for a hybrid index, int8 queries
    checker = Checker.from_index(index, CheckSettings(planner=planner))
    reports = checker.check_many([c for c, _ in examples])
    held_ids = {line.strip() for line in HELDOUT_FILE.read_text().splitlines() if line.strip()}
    held = [(c, r) for c, r in zip(data.claims, rankings, strict=True) if c.claim_id in held_ids]
    held = [(c, r) for c, r in held if c.meta.get("label") in GOLD][:heldout]
    if not held:
        return DemoResult(engine, examples, reports, scores, len(queries))
    gold = [GOLD[c.meta["label"]] for c, _ in held]
    predicted = [r.verdict.label for r in checker.check_many([c for c, _ in held], batch_size=32)]
    ndcg = evaluate(data.qrels, [r for _, r in held], ["nDCG@10"]).means()["nDCG@10"]
    result = HeldOut(
        len(held),
        ndcg,
        macro_f1(gold, predicted, RULE_VERDICT_LABELS),
        definite_calls(gold, predicted),
        checker.min_confidence,
    )
    return DemoResult(engine, examples, reports, scores, len(queries), result)
