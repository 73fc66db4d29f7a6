"""Duplicate fact-checks across sources merged into one record.

The same Snopes article can be in CheckThat! 2A and in MultiFC; a PolitiFact check in AVeriTeC
and in ClaimDecomp. Two records are the same fact-check when they share a URL (compared
without scheme, ``www.``, a web.archive.org prefix or a trailing slash), or when their claim
texts are equal after :func:`claim_key` and the publisher is the same. Merged records keep the
first record's id (sources are read in :data:`~.sources.SOURCES` order, so a CheckThat record
keeps its ``vclaim_id``), fill each empty field from the later ones and list every source and
licence. Records of one and the same source are never merged on text or URL (a dataset's
own ids stay, e.g. two Snopes articles on one claim are two CheckThat ids), only on a
repeated id.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable

from factscout.factchecks.record import FactCheck

_ARCHIVE = re.compile(r"^(?:https?://)?web\.archive\.org/web/\d+[a-z_]*/", re.IGNORECASE)
_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)
_NON_WORD = re.compile(r"[^\w]+")


def claim_key(text: str) -> str:
    """Claim text compared for duplicates: NFKC, lower case, letters and digits only."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def url_key(url: str | None) -> str | None:
    """A URL compared for duplicates: no scheme, ``www.``, archive prefix, query or trailing slash."""
    if not url:
        return None
    u = _SCHEME.sub("", _ARCHIVE.sub("", url.strip()))
    u = u.split("#")[0].split("?")[0].rstrip("/").lower()
    return u or None


def _combine(first: FactCheck, other: FactCheck) -> FactCheck:
    changes: dict[str, object] = {}
    for field in ("verdict", "url", "date", "title", "summary"):
        if not getattr(first, field) and getattr(other, field):
            changes[field] = getattr(other, field)
    if first.normalised_verdict == "unknown" and other.normalised_verdict != "unknown":
        changes["normalised_verdict"] = other.normalised_verdict
    pairs = list(zip(first.sources, first.licenses, strict=True))
    pairs += [p for p in zip(other.sources, other.licenses, strict=True) if p not in pairs]
    changes["sources"] = tuple(s for s, _ in pairs)
    changes["licenses"] = tuple(lic for _, lic in pairs)
    return dataclasses.replace(first, **changes)  # type: ignore[arg-type]


def merge_duplicates(records: Iterable[FactCheck]) -> list[FactCheck]:
    """``records`` with duplicates merged (see the module docstring), in first-seen order.

    Records with the same ``fact_check_id`` are merged too (ids stay unique)."""
    merged: list[FactCheck] = []
    slot: dict[tuple[str, str], int] = {}
    for record in records:
        keys = [("id", record.fact_check_id), ("claim", f"{record.publisher.lower()}\0{claim_key(record.claim)}")]
        if (u := url_key(record.url)) is not None:
            keys.append(("url", u))
        found = next((slot[k] for k in keys if k in slot), None)
        same_source = found is not None and bool(set(record.sources) & set(merged[found].sources))
        if found is not None and record.fact_check_id != merged[found].fact_check_id and same_source:
            found = None  # one source's own near-duplicates stay apart (their ids are its ids)
        if found is None:
            found = len(merged)
            merged.append(record)
        else:
            merged[found] = _combine(merged[found], record)
        for k in keys:
            slot.setdefault(k, found)
        if (u := url_key(merged[found].url)) is not None:
            slot.setdefault(("url", u), found)
    return merged
