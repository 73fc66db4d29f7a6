"""factscout: find the evidence for or against a claim, show how it was found, judge the claim."""

from factscout.records import Claim, DateFilterStats, Hit, Passage, Query, Ranking

__version__ = "0.1.0"
__all__ = ["Claim", "DateFilterStats", "Hit", "Passage", "Query", "Ranking", "__version__"]
