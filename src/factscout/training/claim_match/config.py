"""The options of ``factscout train claim-match`` with their defaults (the CLI derives its options from them)."""

from __future__ import annotations

from dataclasses import dataclass

from factscout.training.base import described


@dataclass(frozen=True, slots=True)
class ClaimMatchConfig:
    """``cs``: the inverse L2 strengths tried (chosen on dev MAP@5); ``depth``: candidates per view
    (BM25 and dense); ``precision``: the shown-match precision the dev threshold must reach."""

    cs: tuple[float, ...] = described(
        (0.1, 1.0, 10.0, 100.0), "comma-separated L2 inverse strengths tried (chosen on dev MAP@5)"
    )
    depth: int = described(30, "candidates per view (BM25, dense)")
    precision: float = described(0.9, "shown-match precision the dev threshold must reach")
    seed: int = described(13, "random seed")
