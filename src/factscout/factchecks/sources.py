"""Loaders that turn the registered datasets holding checked claims into :class:`FactCheck` records.

Each source reuses its dataset loader (:mod:`factscout.datasets`) and keeps the dataset's
licence on every record:

* ``checkthat2022``: the 14,231 Snopes verified claims of CheckThat! 2022 task 2A; id = the
  lab's ``vclaim_id`` (runs score against the lab's qrels directly). The file holds no rating
  and no article URL, so ``verdict`` is "" and ``normalised_verdict`` "unknown" unless a merge
  with a MultiFC Snopes row adds them; the date is the article date.
* ``multifc``: MultiFC train and dev (26 sites without PolitiFact), the site's label as
  published, the fact-check's publication date and URL; publisher = the URL's host.
* ``averitec``: AVeriTeC train, its four labels; publisher = the fact-checking article's host
  (behind a web.archive.org prefix); date = the one in a PolitiFact-style article path
  (``/2020/aug/26/``) or None: the data dates the claim, not the fact-check.
* ``claimdecomp``: ClaimDecomp dev, 200 PolitiFact checks with their Truth-O-Meter rating;
  date from the article path as for AVeriTeC.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from factscout.errors import DataNotFound, UnknownName
from factscout.factchecks.record import FactCheck
from factscout.factchecks.verdicts import normalise_verdict

Loader = Callable[[Path], Iterator[FactCheck]]
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_PATH_DATE = re.compile(r"/(\d{4})/([a-z]{3})/(\d{1,2})/")
_ARCHIVE = re.compile(r"^https?://web\.archive\.org/web/\d+[a-z_]*/", re.IGNORECASE)


def publisher_of(url: str | None) -> str | None:
    """The host of a fact-check URL without ``www.`` (behind a web.archive.org prefix), or None."""
    if not url:
        return None
    host = urlsplit(_ARCHIVE.sub("", url.strip())).hostname or ""
    host = host.removeprefix("www.")
    return host or None


def url_date(url: str | None) -> dt.date | None:
    """The date in a PolitiFact-style article path (``/2020/apr/09/``), or None."""
    m = _PATH_DATE.search(_ARCHIVE.sub("", url or ""))
    if m is None or m.group(2) not in _MONTHS:
        return None
    try:
        return dt.date(int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3)))
    except ValueError:
        return None


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _checkthat(root: Path) -> Iterator[FactCheck]:
    from factscout.datasets.checkthat import SOURCE, load

    for p in load("train", root).corpus:
        claim, _, summary = p.text.partition("\n")
        yield FactCheck(
            p.passage_id, claim, "snopes.com", "", "unknown", p.url, p.published, p.title, summary,
            ("checkthat2022",), (SOURCE.license,),
        )  # fmt: skip


def _multifc(root: Path) -> Iterator[FactCheck]:
    from factscout.datasets.multifc import SOURCE, load

    for split in ("train", "dev"):
        for c in load(split, root).claims:
            url = _str(c.meta.get("claim_url")) or None
            verdict = _str(c.meta.get("label"))
            verdict = "" if verdict.lower() == "none" else verdict
            publisher = publisher_of(url) or str(c.meta.get("domain") or "unknown")
            yield FactCheck(
                c.claim_id, c.text, publisher, verdict, normalise_verdict(verdict), url, c.date,
                _str(c.meta.get("article_title")), "", ("multifc",), (SOURCE.license,),
            )  # fmt: skip


def _averitec(root: Path) -> Iterator[FactCheck]:
    from factscout.datasets.averitec import SOURCE, load

    for c in load("train", root).claims:
        url = _str(c.meta.get("fact_checking_article")) or None
        verdict = _str(c.meta.get("label"))
        yield FactCheck(
            f"averitec-{c.claim_id}", c.text, publisher_of(url) or "unknown", verdict, normalise_verdict(verdict),
            url, url_date(url), "", "", ("averitec",), (SOURCE.license,),
        )  # fmt: skip


def _claimdecomp(root: Path) -> Iterator[FactCheck]:
    from factscout.datasets.claimdecomp import SOURCE, load

    for c in load("dev", root).claims:
        url = _str(c.meta.get("url")) or None
        verdict = _str(c.meta.get("label"))
        yield FactCheck(
            f"claimdecomp-{c.claim_id}", c.text, publisher_of(url) or "politifact.com", verdict,
            normalise_verdict(verdict), url, url_date(url), "", "", ("claimdecomp",), (SOURCE.license,),
        )  # fmt: skip


# name -> (loader, the folder under the data root that must exist); the order is the merge order
SOURCES: dict[str, tuple[Loader, str]] = {
    "checkthat2022": (_checkthat, "checkthat2022-2a"),
    "multifc": (_multifc, "multifc"),
    "averitec": (_averitec, "averitec"),
    "claimdecomp": (_claimdecomp, "claimdecomp"),
}


def check_source(name: str) -> str:
    if name not in SOURCES:
        raise UnknownName("fact-check source", name, SOURCES)
    return name


def available_sources(root: Path) -> list[str]:
    """The sources whose folder exists under the data root, in merge order."""
    return [name for name, (_, folder) in SOURCES.items() if (root / folder).is_dir()]


def load_source(name: str, root: Path) -> list[FactCheck]:
    """Every record of source ``name`` read from the data root ``root``."""
    loader, folder = SOURCES[check_source(name)]
    if not (root / folder).is_dir():
        raise DataNotFound(f"fact-check source {name!r} needs {root / folder}")
    return list(loader(root))
