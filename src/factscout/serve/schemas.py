"""Request bodies of the HTTP API (pydantic): validated at the boundary, with messages that
name the field and the accepted values. Responses are the core's own dictionaries
(``Report.to_dict()`` is the ``factscout-report/1`` layout), documented in the OpenAPI schema."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_CLAIM_CHARS = 2_000
MAX_SEARCH_K = 100
MAX_EDITOR_K = 20
_ID_PATTERN = r"^[A-Za-z0-9_.:#-]{1,64}$"


def parse_iso_day(value: Any) -> dt.date | None:
    """``YYYY-MM-DD`` (or empty: no date) to a date; anything else is a ``ValueError`` that says so."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or len(value) != 10:
        raise ValueError(f"must be an ISO date YYYY-MM-DD, got {value!r}")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"must be an ISO date YYYY-MM-DD, got {value!r}") from None


def clean_claim(value: Any) -> str:
    """A claim or query text: 1 to 2,000 characters after stripping surrounding whitespace."""
    if not isinstance(value, str):
        raise ValueError("must be a string")
    text = value.strip()
    if not 1 <= len(text) <= MAX_CLAIM_CHARS:
        raise ValueError(f"must be 1 to {MAX_CLAIM_CHARS} characters (got {len(text)} after stripping whitespace)")
    return text


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimFields(_Request):
    claim: str = Field(description="the claim, 1 to 2,000 characters", examples=["Vitamin D prevents falls."])
    date: dt.date | None = Field(
        default=None, description="the claim's date (YYYY-MM-DD): evidence must predate it", examples=["2019-06-01"]
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="your id for the claim (default: one assigned by the server)"
    )

    @field_validator("claim", mode="before")
    @classmethod
    def _claim(cls, value: Any) -> str:
        return clean_claim(value)

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return parse_iso_day(value)


class CheckRequest(ClaimFields):
    """``POST /v1/check``: the whole pipeline for one claim."""

    planner: str | None = Field(default=None, description="planner name (default: the server's)")
    date_filter: bool = Field(default=True, description="only evidence published before the claim's date")


class PlanRequest(ClaimFields):
    """``POST /v1/plan``: the queries a planner makes for a claim."""

    planner: str | None = Field(default=None, description="planner name (default: the server's)")


class SearchRequest(_Request):
    """``POST /v1/search``: one query against the index."""

    query: str = Field(description="the query, 1 to 2,000 characters")
    k: int = Field(default=10, ge=1, le=MAX_SEARCH_K, description=f"hits, 1 to {MAX_SEARCH_K}")
    date: dt.date | None = Field(default=None, description="keep passages published before this day (YYYY-MM-DD)")

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: Any) -> str:
        return clean_claim(value)

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return parse_iso_day(value)


class RewriteRequest(_Request):
    """``POST /v1/rewrite``: apply one edit action to a query (or none) and search the result;
    optionally the learned rewriter's suggested edit trace for the query."""

    query: str = Field(description="the current query, 1 to 2,000 characters")
    action: int | None = Field(
        default=None, ge=0, le=127, description="edit action id (Kazemi et al. Table 1: kind x 32 + position)"
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="the claim's id in the loaded qrels: adds the metric"
    )
    k: int = Field(default=5, ge=1, le=MAX_EDITOR_K, description=f"hits shown, 1 to {MAX_EDITOR_K}")
    suggest: bool = Field(default=False, description="also run the rewrite policy on the (edited) query")

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: Any) -> str:
        return clean_claim(value)
