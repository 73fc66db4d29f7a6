"""Publishers' verdicts mapped onto one scale (:data:`~.record.NORMALISED_VERDICTS`).

Fact-checkers rate on their own scales (PolitiFact's Truth-O-Meter, Snopes' ratings, the
Washington Post's Pinocchios, Gossip Cop's 0-10 scores, Truth or Fiction's "Fiction!"...).
MultiFC (Augenstein et al. 2019) keeps 26 sites' labels as published; AVeriTeC (Schlichtkrull
et al. 2023) has four classes already. The mapping, the same for every source:

* ``supported``: true, correct, accurate, verified, fact, truth!, mostly true/correct,
  correct attribution, authorship confirmed, in-the-green, promise kept, AVeriTeC "Supported";
* ``refuted``: false, fiction!, incorrect, pants on fire, fake, scam, bogus, mostly false,
  miscaptioned, misattributed, incorrect attribution, legend, 3-4 Pinocchios, in-the-red,
  a lot of baloney, promise broken, AVeriTeC "Refuted"; Gossip Cop scores 0-3 of 10;
* ``mixed``: mixture, half true, partly true, misleading, exaggerated, in-between, barely true,
  needs context, not the whole story, cherry picks, outdated, 2 Pinocchios, some baloney,
  compromise, AVeriTeC "Conflicting Evidence/Cherrypicking"; Gossip Cop 4-6;
* ``unverifiable``: unproven, unverified, unsupported, unsubstantiated, no evidence, disputed,
  unclear, AVeriTeC "Not Enough Evidence";
* ``other``: satire, opinion, commentary, promise ratings in progress ("in the works",
  "stalled", "not yet rated") and anything else the table does not know;
* ``unknown``: no verdict published in the data ("", "none"; the CheckThat! 2022 2A verified
  claims carry none).
"""

from __future__ import annotations

import re

from factscout.factchecks.record import NormalisedVerdict

# checked in order: the first pattern that matches the lower-cased verdict decides
_RULES: tuple[tuple[NormalisedVerdict, str], ...] = (
    ("unknown", r"^(none|n/?a|)$"),
    (
        "mixed",
        r"truth! & fiction!|truth! & misleading|half|mixture|mixed|partly|partially|misleading|exaggerat|"
        r"in-between|barely.true|needs context|not the whole story|cherry|outdated|2 pinn?occ?hios|some baloney|"
        r"little baloney|compromise|a stretch|spins|distorts|understated|conflicting",
    ),
    (
        "unverifiable",
        r"unproven|unverified|unsupported|unsubstantiated|no evidence|not enough evidence|disputed|"
        r"unclear|unobservable|investigation pending",
    ),
    (
        "refuted",
        r"false|fiction|incorrect|inaccurate attribution|pants on fire|pants-fire|fake|scam|bogus|"
        r"miscaption|misattribut|legend|[34] pinn?occ?hios|in-the-red|lot of baloney|promise broken|refuted|"
        r"huckster|virus|hoax",
    ),
    (
        "supported",
        r"true|correct|accurate|verified|^fact$|truth|authorship confirmed|confirmed authorship|"
        r"in-the-green|promise kept|supported",
    ),
)
_COMPILED = tuple((label, re.compile(pattern)) for label, pattern in _RULES)
_SCORE = re.compile(r"^\d{1,2}$")  # Gossip Cop's 0-10


def normalise_verdict(verdict: str) -> NormalisedVerdict:
    """The class of a published verdict (see the module docstring); unknown wordings are ``other``."""
    text = re.sub(r"\s+", " ", verdict.strip().lower())
    text = re.sub(r"^(rating|verdict|conclusion|determination|factscan score): ", "", text)
    if _SCORE.match(text):
        score = int(text)
        return "refuted" if score <= 3 else "mixed" if score <= 6 else "supported"
    for label, pattern in _COMPILED:
        if pattern.search(text):
            return label
    return "other"
