"""Time: date extraction and normalisation, the four temporal evidence rankings and their learned
mixture with Δt features (``mixture``), ListMLE, the time-aware re-ranking stage and the joint
veracity + evidence-ranking models (``joint``; trained by :mod:`factscout.training.temporal.trainer`; they
need torch). The published-before filter lives inside each retriever."""

from factscout.dates import parse_date
from factscout.temporal.rankings import METHODS, RANKINGS, TemporalScores, temporal_scores
from factscout.temporal.timestamps import date_coverage, delta_days, extract_date, html_date, snippet_date

__all__ = [
    "METHODS",
    "RANKINGS",
    "TemporalScores",
    "date_coverage",
    "delta_days",
    "extract_date",
    "html_date",
    "parse_date",
    "snippet_date",
    "temporal_scores",
]
