"""Counts the CLI prints at the end of a batch run."""

from __future__ import annotations

from dataclasses import dataclass, field

from factscout.report import Report


@dataclass
class CheckStats:
    """Counts for a batch run (what the CLI prints at the end)."""

    claims: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    def add(self, report: Report) -> None:
        self.claims += 1
        self.verdicts[report.verdict.label] = self.verdicts.get(report.verdict.label, 0) + 1
