"""The options of ``factscout train claim-match`` with their defaults (the CLI derives its options from them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClaimMatchConfig:
    """``cs``: the inverse L2 strengths tried (chosen on dev MAP@5); ``depth``: candidates per view
    (BM25 and dense); ``precision``: the shown-match precision the dev threshold must reach."""

    cs: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
    depth: int = 30
    precision: float = 0.9
    seed: int = 13
