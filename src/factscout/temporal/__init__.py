"""Time: date normalisation and the published-before filter (ranking methods come later)."""

from factscout.temporal.dates import parse_date

__all__ = ["parse_date"]
