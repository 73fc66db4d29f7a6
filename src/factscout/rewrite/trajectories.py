"""The records of BFS edit trajectories (:mod:`.bfs`) and the files they are written to.

Output: a JSONL file with one row per edit step::

    {"claim_id": "12", "sequence": 0, "step": 0, "query": "...", "action": 99,
     "action_text": "remove 'rose' at 3", "next_query": "...", "reward": 0.21, "next_reward": 0.30}

and a manifest ``<name>.claims.jsonl`` with one row per finished claim (status, original and
best-reachable reward, number of sequences, candidates scored). Both are appended per claim,
rows first and the manifest line last, each flushed to disk, so a run stopped at any point
resumes where it stopped: claims in the manifest are skipped, and rows of a claim that was cut
off half-way are removed first (:func:`finished_claims`).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

Status = Literal["done", "no_improvement", "at_max", "no_relevant", "error"]


@dataclass(frozen=True, slots=True)
class Step:
    """One edit of a trajectory: the query before and after and their rewards."""

    claim_id: str
    sequence: int
    step: int
    query: str
    action: int
    action_text: str
    next_query: str
    reward: float
    next_reward: float
    negative: bool = False  # part of a random-edit sequence, not a BFS improvement

    def to_row(self) -> dict[str, Any]:
        """The JSONL row; ``negative`` appears only on random-edit steps (rows of BFS steps keep
        the original format)."""
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.negative:
            del row["negative"]
        return row


@dataclass(frozen=True, slots=True)
class Trajectory:
    """An improving edit sequence for one claim."""

    claim_id: str
    steps: tuple[Step, ...]

    @property
    def reward(self) -> float:
        return self.steps[0].reward

    @property
    def final_reward(self) -> float:
        return self.steps[-1].next_reward

    @property
    def actions(self) -> tuple[int, ...]:
        return tuple(s.action for s in self.steps)

    @property
    def negative(self) -> bool:
        """A random-edit sequence (its rewards may fall), not an improving BFS sequence."""
        return any(s.negative for s in self.steps)


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """What the search found for one claim."""

    claim_id: str
    status: Status
    reward: float
    max_reward: float
    trajectories: tuple[Trajectory, ...] = ()
    candidates: int = 0
    error: str | None = None

    def manifest_row(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "status": self.status,
            "reward": self.reward,
            "max_reward": self.max_reward,
            "sequences": len(self.trajectories),
            "candidates": self.candidates,
            "error": self.error,
        }


def manifest_path(out: str | os.PathLike[str]) -> Path:
    """The per-claim manifest next to the trajectory file: ``traj.jsonl`` -> ``traj.claims.jsonl``."""
    path = Path(out)
    return path.with_name(f"{path.stem}.claims.jsonl")


def _complete_rows(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The JSON rows of complete lines and whether anything (a cut-off last line) was dropped."""
    if not path.exists():
        return [], False
    rows, dropped = [], False
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                dropped = True
                break
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError:
                dropped = True
                break
    return rows, dropped


def _rewrite(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def finished_claims(out: str | os.PathLike[str]) -> set[str]:
    """Claim ids already finished in a previous run, repairing a run cut off mid-claim:
    trajectory rows of claims missing from the manifest and cut-off lines are removed."""
    out, manifest = Path(out), manifest_path(out)
    done_rows, manifest_cut = _complete_rows(manifest)
    if manifest_cut:
        _rewrite(manifest, done_rows)
    done = {str(r["claim_id"]) for r in done_rows}
    rows, cut = _complete_rows(out)
    kept = [r for r in rows if str(r.get("claim_id")) in done]
    if cut or len(kept) != len(rows):
        log.info("removing %d rows of unfinished claims from %s", len(rows) - len(kept), out)
        _rewrite(out, kept)
    return done


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """The trajectories of a BFS output file, in file order."""
    rows, _ = _complete_rows(Path(path))
    groups: dict[tuple[str, int], list[Step]] = {}
    for row in rows:
        groups.setdefault((str(row["claim_id"]), int(row["sequence"])), []).append(Step(**row))
    return [Trajectory(cid, tuple(sorted(steps, key=lambda s: s.step))) for (cid, _), steps in groups.items()]


class TrajectoryWriter:
    """Appends each claim's rows, then its manifest line, each flushed to disk."""

    def __init__(self, out: Path) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self.rows = out.open("a", encoding="utf-8")
        self.manifest = manifest_path(out).open("a", encoding="utf-8")

    def write(self, result: ClaimResult) -> None:
        text = "".join(
            json.dumps(step.to_row(), ensure_ascii=False) + "\n" for t in result.trajectories for step in t.steps
        )
        for f, chunk in ((self.rows, text), (self.manifest, json.dumps(result.manifest_row()) + "\n")):
            if chunk:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())

    def close(self) -> None:
        self.rows.close()
        self.manifest.close()
