"""Request bodies of the HTTP API (pydantic): validated at the boundary, with messages that
name the field and the accepted values. Responses are the core's own dictionaries
(``Report.to_dict()`` is the ``factscout-report/1`` layout), described for the OpenAPI schema by
the models in :mod:`factscout.serve.responses`.

Every free-text field (``claim``, ``query``, ``planner``) goes through :func:`factscout.inputs.clean_text`
(the CLI checks claims with the same function and the same 2,000-character limit):

* refused with a 422 naming the field: a lone surrogate (``"\\ud800"``, which JSON can carry but
  UTF-8 cannot), and a control character other than tab, line feed and carriage return;
* normalised: Unicode NFC (a composed and a decomposed ``é`` are the same claim, so they give the
  same tokens and the same report), then whitespace and invisible characters (zero-width
  spaces, joiners, byte-order marks, bidi marks, soft hyphens, combining marks on nothing,
  Hangul fillers) are stripped from both ends;
* refused as empty when nothing visible is left: a claim of only a zero-width space is empty.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from factscout.inputs import MAX_CLAIM_CHARS, clean_claim, clean_text, parse_iso_day

MAX_SEARCH_K = 100
MAX_EDITOR_K = 20
MAX_NAME_CHARS = 200
_ID_PATTERN = r"^[A-Za-z0-9_.:#-]{1,64}$"


def clean_optional_claim(value: Any) -> str | None:
    """An optional claim: ``None``, or :func:`clean_claim`."""
    return None if value is None else clean_claim(value)


def clean_name(value: Any) -> str | None:
    """A component name (``planner``): ``None``, or :func:`clean_text` with at most 200 characters."""
    return None if value is None else clean_text(value, MAX_NAME_CHARS)


Text = Annotated[str, BeforeValidator(clean_claim)]
Name = Annotated[str | None, BeforeValidator(clean_name)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimFields(_Request):
    claim: Text = Field(
        min_length=1,
        max_length=MAX_CLAIM_CHARS,
        description="the claim, 1 to 2,000 characters (NFC, trimmed)",
        examples=["Vitamin D prevents falls."],
    )
    date: dt.date | None = Field(
        default=None, description="the claim's date (YYYY-MM-DD): evidence must predate it", examples=["2019-06-01"]
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="your id for the claim (default: one assigned by the server)"
    )

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return parse_iso_day(value)


class CheckRequest(ClaimFields):
    """``POST /v1/check``: the whole pipeline for one claim."""

    planner: Name = Field(default=None, description="planner name (default: the server's)")
    date_filter: bool = Field(default=True, description="only evidence published before the claim's date")


class PlanRequest(ClaimFields):
    """``POST /v1/plan``: the queries a planner makes for a claim."""

    planner: Name = Field(default=None, description="planner name (default: the server's)")


class SearchRequest(_Request):
    """``POST /v1/search``: one query against the index."""

    query: Text = Field(
        min_length=1, max_length=MAX_CLAIM_CHARS, description="the query, 1 to 2,000 characters (NFC, trimmed)"
    )
    k: int = Field(default=10, ge=1, le=MAX_SEARCH_K, description=f"hits, 1 to {MAX_SEARCH_K}")
    date: dt.date | None = Field(default=None, description="keep passages published before this day (YYYY-MM-DD)")

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return parse_iso_day(value)


class RewriteRequest(_Request):
    """``POST /v1/rewrite``: apply one edit action to a query (or none) and search the result;
    optionally the learned rewriter's suggested edit trace for the query."""

    query: Text = Field(
        min_length=1, max_length=MAX_CLAIM_CHARS, description="the current query, 1 to 2,000 characters (NFC, trimmed)"
    )
    action: int | None = Field(
        default=None, ge=0, le=127, description="edit action id (Kazemi et al. Table 1: kind x 32 + position)"
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="the claim's id in the loaded qrels: adds the metric"
    )
    k: int = Field(default=5, ge=1, le=MAX_EDITOR_K, description=f"hits shown, 1 to {MAX_EDITOR_K}")
    suggest: bool = Field(default=False, description="also run the rewrite policy on the (edited) query")


MAX_JOB_CLAIMS = 100


class ChecksRequest(_Request):
    """``POST /v1/checks``: a check job, run in the background and kept across restarts. Either
    one claim (the fields of ``POST /v1/check``) or a batch (``claims``: 1 to 100 claims with
    their own date and id), checked with one planner and date-filter setting."""

    claim: Annotated[str | None, BeforeValidator(clean_optional_claim)] = Field(
        default=None,
        min_length=1,
        max_length=MAX_CLAIM_CHARS,
        description="one claim, 1 to 2,000 characters (NFC, trimmed); or give `claims`",
        examples=["Vitamin D prevents falls."],
    )
    date: dt.date | None = Field(default=None, description="the claim's date (YYYY-MM-DD), with `claim`")
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="your id for the claim, with `claim` (default: assigned)"
    )
    claims: list[ClaimFields] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_JOB_CLAIMS,
        description=f"a batch of 1 to {MAX_JOB_CLAIMS} claims instead of `claim`",
    )
    planner: Name = Field(default=None, description="planner name (default: the server's)")
    date_filter: bool = Field(default=True, description="only evidence published before each claim's date")

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: Any) -> dt.date | None:
        return parse_iso_day(value)

    @model_validator(mode="after")
    def _one_form(self) -> ChecksRequest:
        if (self.claim is None) == (self.claims is None):
            raise ValueError("give either `claim` (one claim) or `claims` (a batch), not both and not neither")
        if self.claims is not None and (self.date is not None or self.claim_id is not None):
            raise ValueError("`date` and `claim_id` go inside each entry of `claims`")
        return self

    def claim_list(self) -> list[ClaimFields]:
        """The job's claims, one or many, in order."""
        if self.claims is not None:
            return list(self.claims)
        return [ClaimFields(claim=self.claim or "", date=self.date, claim_id=self.claim_id)]
