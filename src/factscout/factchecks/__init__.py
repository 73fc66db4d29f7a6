"""Published fact-checks as records: the fact-check memory and claim matching.

A fact-checker's first question about a claim is whether someone has already checked it. This
package keeps published fact-checks (:class:`FactCheck`, loaded from the datasets that hold
them by :mod:`.sources`, duplicates merged by :mod:`.merge`) in a :class:`FactCheckMemory` and
finds the ones that check a given claim or tweet (:mod:`.match`, after :mod:`.clean`). These are
shown apart from the evidence: factscout's own verdict is computed from evidence alone.
"""

from factscout.factchecks.clean import clean_tweet
from factscout.factchecks.match import MatchModel
from factscout.factchecks.memory import FactCheckMemory, Match, read_records
from factscout.factchecks.merge import merge_duplicates
from factscout.factchecks.record import NORMALISED_VERDICTS, FactCheck
from factscout.factchecks.sources import SOURCES, available_sources, load_source
from factscout.factchecks.verdicts import normalise_verdict

__all__ = [
    "NORMALISED_VERDICTS",
    "SOURCES",
    "FactCheck",
    "FactCheckMemory",
    "Match",
    "MatchModel",
    "available_sources",
    "clean_tweet",
    "load_source",
    "merge_duplicates",
    "normalise_verdict",
    "read_records",
]
