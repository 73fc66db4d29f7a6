"""The published fact-check as a record: :class:`FactCheck`, and its JSON form.

One record is one fact-checker's published verdict on one claim: the claim as the fact-checker
worded it, the verdict in the publisher's own words and in one of :data:`NORMALISED_VERDICTS`
(:mod:`.verdicts` holds the mapping), who published it, where and when, and which datasets it
came from under which licences. A record found in several datasets is merged into one
(:mod:`.merge`), so ``sources`` and ``licenses`` are tuples.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal, get_args

from factscout.errors import InputError

NormalisedVerdict = Literal["supported", "refuted", "mixed", "unverifiable", "other", "unknown"]
NORMALISED_VERDICTS: tuple[str, ...] = get_args(NormalisedVerdict)

# the JSON fields, in order: the first three are required, the others optional
FIELDS = (
    "fact_check_id",
    "claim",
    "publisher",
    "verdict",
    "normalised_verdict",
    "url",
    "date",
    "title",
    "summary",
    "sources",
    "licenses",
)


def _text(value: object, what: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"{what} must be a non-empty string, got {value!r}")
    return value.strip()


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One published fact-check.

    ``fact_check_id`` is stable and explicit (CheckThat! 2A: its ``vclaim_id``, so runs score
    against the lab's qrels); ``claim`` is the claim as checked; ``verdict`` the rating as
    published ("" where the dataset has none) and ``normalised_verdict`` its class; ``date``
    the day the fact-check was published (None when unknown); ``title`` and ``summary`` the
    article's headline and one-line summary where the dataset has them (they help matching).
    """

    fact_check_id: str
    claim: str
    publisher: str
    verdict: str = ""
    normalised_verdict: NormalisedVerdict = "unknown"
    url: str | None = None
    date: dt.date | None = None
    title: str = ""
    summary: str = ""
    sources: tuple[str, ...] = ()
    licenses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("fact_check_id", "claim", "publisher"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"fact-check {self.fact_check_id!r}: {name} must be a non-empty string, got {value!r}")
        if self.normalised_verdict not in NORMALISED_VERDICTS:
            raise InputError(
                f"fact-check {self.fact_check_id!r}: no normalised verdict {self.normalised_verdict!r}; "
                f"known: {', '.join(NORMALISED_VERDICTS)}"
            )
        if self.date is not None and (not isinstance(self.date, dt.date) or isinstance(self.date, dt.datetime)):
            raise InputError(f"fact-check {self.fact_check_id!r}: date must be a datetime.date, got {self.date!r}")
        if len(self.sources) != len(self.licenses):
            raise InputError(f"fact-check {self.fact_check_id!r}: one licence per source expected")

    @property
    def contents(self) -> str:
        """Title, claim and summary as one text: what the matchers index (the summary only when it adds)."""
        parts = [self.title] if self.title else []
        parts.append(self.claim)
        if self.summary and self.summary != self.claim:
            parts.append(self.summary)
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (``date`` as ISO text, tuples as lists)."""
        return {
            "fact_check_id": self.fact_check_id,
            "claim": self.claim,
            "publisher": self.publisher,
            "verdict": self.verdict,
            "normalised_verdict": self.normalised_verdict,
            "url": self.url,
            "date": self.date.isoformat() if self.date else None,
            "title": self.title,
            "summary": self.summary,
            "sources": list(self.sources),
            "licenses": list(self.licenses),
        }

    @classmethod
    def from_json(cls, row: dict[str, Any], *, where: str = "fact-check") -> FactCheck:
        """A record from its JSON object; a bad field raises :class:`InputError` naming ``where`` and the field."""
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object")
        unknown = sorted(set(row) - set(FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}")
        try:
            date = row.get("date")
            if date is not None and not isinstance(date, str):
                raise InputError(f"date must be YYYY-MM-DD text, got {date!r}")
            try:
                day = dt.date.fromisoformat(date) if date else None
            except ValueError:
                raise InputError(f"date must be YYYY-MM-DD, got {date!r}") from None
            url = row.get("url")
            if url is not None and not isinstance(url, str):
                raise InputError(f"url must be text, got {url!r}")
            sources, licenses = row.get("sources", []), row.get("licenses", [])
            for name, value in (("sources", sources), ("licenses", licenses)):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise InputError(f"{name} must be a list of strings, got {value!r}")
            return cls(
                fact_check_id=_text(row.get("fact_check_id"), "fact_check_id", required=True),
                claim=_text(row.get("claim"), "claim", required=True),
                publisher=_text(row.get("publisher"), "publisher", required=True),
                verdict=_text(row.get("verdict"), "verdict"),
                normalised_verdict=row.get("normalised_verdict") or "unknown",
                url=url or None,
                date=day,
                title=_text(row.get("title"), "title"),
                summary=_text(row.get("summary"), "summary"),
                sources=tuple(sources),
                licenses=tuple(licenses),
            )
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
