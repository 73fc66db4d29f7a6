"""Evidence collection from the web (the QuanTemp++ pipeline) with frozen, replayable snapshots.

``collect(claims, out_dir, CollectSettings(provider="brave"))`` plans sub-queries, searches the
web before each claim's date, keeps relevant results, crawls them safely and writes a BEIR
corpus, qrels and a snapshot manifest (:mod:`factscout.collect.pipeline`). The stages, one module
each: ``providers/`` (SerpAPI, Brave, Bing, Google Programmable Search), ``search`` (rate limit,
retries, snapshot), ``relevance`` (cosine filter), ``factcheck`` (leakage sites), ``netguard``
(no private addresses), ``crawl`` (robots.txt, limits, trafilatura + htmldate), ``corpus``
(outputs), ``snapshot`` (content-addressed store, replay, drift).
"""

from factscout.collect.pipeline import CollectReport, CollectSettings, collect
from factscout.collect.snapshot import Drift, Snapshot, compare_snapshots

__all__ = ["CollectReport", "CollectSettings", "Drift", "Snapshot", "collect", "compare_snapshots"]
