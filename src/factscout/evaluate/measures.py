"""Measures as values: ``nDCG@10``, ``R@100``, ``MRR@10`` parse from strings and print back.

The same syntax is used by CLI flags, config files and the Python API (after ir_measures).
Aliases are accepted case-insensitively (``ndcg@10``, ``recall@100``, ``mrr@10``, ``map@5``);
the canonical spelling is what tables print.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from factscout.errors import InputError

# canonical name -> (ir_measures name of the per-query measure, aliases)
_MEASURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "nDCG": ("nDCG", ("ndcg",)),
    "R": ("R", ("r", "recall")),
    "P": ("P", ("p", "precision", "prec")),
    "MRR": ("RR", ("mrr", "rr", "recip_rank")),
    "AP": ("AP", ("ap", "map")),
}
_ALIASES = {alias: canon for canon, (_, aliases) in _MEASURES.items() for alias in aliases}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*(?:@\s*(\d+))?\s*$")


@dataclass(frozen=True, slots=True, order=True)
class Measure:
    """A ranking measure with an optional rank cutoff."""

    name: str
    cutoff: int | None = None

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        if isinstance(text, Measure):
            return text
        m = _PATTERN.match(text)
        canon = _ALIASES.get(m[1].lower()) if m else None
        if m is None or canon is None:
            known = ", ".join(f"{c}@k" for c in _MEASURES)
            raise InputError(f"unknown measure {text!r}; known: {known} (aliases: {', '.join(sorted(_ALIASES))})")
        cutoff = int(m[2]) if m[2] else None
        if cutoff is not None and cutoff < 1:
            raise InputError(f"measure cutoff must be >= 1 in {text!r}")
        return cls(canon, cutoff)

    @property
    def ir_measures_name(self) -> str:
        """The per-query measure in ir_measures syntax (MRR@10 is the mean of RR@10)."""
        base = _MEASURES[self.name][0]
        return f"{base}@{self.cutoff}" if self.cutoff else base

    def __str__(self) -> str:
        return f"{self.name}@{self.cutoff}" if self.cutoff else self.name


def parse_measures(texts: str | list[str] | tuple[str, ...]) -> list[Measure]:
    """Parse measures given as a list or one comma/space separated string."""
    items = re.split(r"[,\s]+", texts) if isinstance(texts, str) else list(texts)
    measures = [Measure.parse(t) for t in items if str(t).strip()]
    if not measures:
        raise InputError("no measures given")
    return list(dict.fromkeys(measures))
