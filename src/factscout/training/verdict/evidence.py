"""The verdict aggregator's pipeline pass: what ``check`` hands its verdict method for each claim
(sentence stances and the fused ranking), kept by a recording verdict method, cached as JSONL, and
the out-of-fold stance heads that give the training part's claims stances as sharp as unseen
claims get (see :mod:`factscout.training.verdict.aggregator`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl, write_jsonl
from factscout.records import Claim, PassageLookup, Ranking, Stance, Verdict
from factscout.training.splits import folds_of
from factscout.verify.verdict import CountRule

Say = Callable[[str], None]
EVIDENCE_FORMAT = "factscout-verdict-evidence/1"
OOF_STANCE = "head"
OOF_RECIPE = "out-of-fold stance heads (5 claim-group folds of the training part; the shipped head's recipe)"


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ClaimEvidence:
    """What ``check`` handed its verdict method for one claim: sentence stances and fused ranking."""

    stances: tuple[Stance, ...]
    ranking: Ranking


class _Recorder:
    """A verdict method that keeps what ``check`` hands it and answers with the count rule."""

    def __init__(self, rule: CountRule) -> None:
        self.rule = rule
        self.seen: dict[str, ClaimEvidence] = {}

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict:
        self.seen[claim.claim_id] = ClaimEvidence(tuple(stances), ranking)
        return self.rule(stances)


def pipeline_evidence(
    checker: Any, claims: Sequence[Claim], say: Say = _quiet, batch: int = 64
) -> dict[str, ClaimEvidence]:
    """Run ``checker`` (a :class:`~factscout.check.Checker`) over ``claims``; per claim id what its
    verdict method was given."""
    recorder = _Recorder(checker.rule)
    checker.verdict_method = recorder
    t0 = time.perf_counter()
    for start in range(0, len(claims), batch):
        chunk = list(claims[start : start + batch])
        checker.judge(chunk, checker.retrieve(chunk))
        done = start + len(chunk)
        say(f"  check: {done}/{len(claims)} claims, {(time.perf_counter() - t0) / done:.2f} s a claim")
    return recorder.seen


def oof_heads(train: Sequence[Claim], encoder: Any, seed: int, say: Say = _quiet) -> list[tuple[list[Claim], Any]]:
    """``(fold, head)`` for the 5 claim-group folds of the training part (:func:`folds_of`, as the
    stance head's trainer uses them to tune the count rule): each head is trained with the shipped
    head's recipe (:class:`~factscout.training.stance.head.HeadConfig` defaults, SciFact pairs of the
    cited abstracts + negation pairs) on the other folds' claims, embedding with ``encoder`` (the
    pipeline's), so its stances on the fold look like the shipped head's on unseen claims."""
    from factscout.datasets import load_abstract_sentences
    from factscout.training.stance.data import Embeddings, negation_pairs, scifact_pairs
    from factscout.training.stance.head import HeadConfig, fit_model

    pairs = scifact_pairs(train, load_abstract_sentences())
    base = pairs + negation_pairs(pairs)
    emb = Embeddings(encoder)
    say(f"out-of-fold stance heads: encoding {len(base)} pairs ...")
    emb.add([p.claim for p in base] + [p.sentence for p in base])
    out = []
    for k, fold in enumerate(folds_of(train, seed=seed)):
        ids = {c.claim_id for c in fold}
        head = fit_model([p for p in base if p.claim_id not in ids], emb, HeadConfig(seed=seed), {"oof_fold": str(k)})
        out.append((fold, head))
        say(f"  out-of-fold head {k + 1} trained without {len(fold)} claims")
    return out


def _evidence_row(claim_id: str, ev: ClaimEvidence) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "stances": [[s.passage_id, s.sentence_index, s.label, list(s.probabilities)] for s in ev.stances],
        "ranking": [[h.passage_id, h.score] for h in ev.ranking.hits],
    }


def write_evidence(path: Path, pipeline: dict[str, Any], evidence: dict[str, ClaimEvidence]) -> Path:
    """The cache file: a header ``{"format", "pipeline"}`` then one claim a line (ids sorted)."""
    header = {"format": EVIDENCE_FORMAT, "pipeline": pipeline}
    rows = [header, *(_evidence_row(cid, evidence[cid]) for cid in sorted(evidence, key=_claim_order))]
    write_jsonl(path, rows)
    return path


def read_evidence(path: Path, pipeline: dict[str, Any]) -> dict[str, ClaimEvidence]:
    """Read a cache written by :func:`write_evidence` for the same ``pipeline`` (else an error)."""
    out: dict[str, ClaimEvidence] = {}
    header = False
    for lineno, row in read_jsonl(path):
        if not header:
            if row.get("format") != EVIDENCE_FORMAT:
                raise InputError(f"{path}:{lineno}: not a verdict evidence file (format {row.get('format')!r}, "
                                 f"expected {EVIDENCE_FORMAT!r})")  # fmt: skip
            if row.get("pipeline") != pipeline:
                raise InputError(f"{path} was made by another pipeline: {row.get('pipeline')} (this run: {pipeline}); "
                                 "give another --features file")  # fmt: skip
            header = True
            continue
        try:
            stances = tuple(
                Stance(str(p), int(i), label, (float(a), float(b), float(c)))
                for p, i, label, (a, b, c) in row["stances"]
            )
            ranking = Ranking.from_scores(str(row["claim_id"]), {str(p): float(s) for p, s in row["ranking"]})
            out[str(row["claim_id"])] = ClaimEvidence(stances, ranking)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: bad evidence row ({type(exc).__name__}: {exc})") from None
    if not header:
        raise InputError(f"{path} is empty: not a verdict evidence file")
    return out


def _claim_order(claim_id: str) -> tuple[int, str]:
    return (int(claim_id), "") if claim_id.isdigit() else (1 << 62, claim_id)


__all__ = [
    "EVIDENCE_FORMAT",
    "OOF_RECIPE",
    "OOF_STANCE",
    "ClaimEvidence",
    "oof_heads",
    "pipeline_evidence",
    "read_evidence",
    "write_evidence",
]
