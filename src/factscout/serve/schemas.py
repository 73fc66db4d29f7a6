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

The OpenAPI schema states the same rules, so that what it calls valid the server accepts and what
it calls invalid the server refuses (checked by schemathesis): the text rules as one ``pattern``
(:mod:`factscout.serve.patterns`), planner names as an ``enum``, days as ``YYYY-MM-DD`` or
null (not ``""``), booleans and integers as JSON's own types (``0`` is not false, ``"5"`` not 5), and
``POST /v1/checks``'s "`claim` or `claims`" as a ``oneOf``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StrictBool,
    StrictFloat,
    model_validator,
)
from pydantic.json_schema import JsonDict, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from factscout.claims.document import DocumentFormat
from factscout.inputs import MAX_CLAIM_CHARS, clean_text, parse_iso_day
from factscout.serve.patterns import DAY_PATTERN, text_pattern

MAX_SEARCH_K = 100
MAX_EDITOR_K = 20
MAX_NAME_CHARS = 200
_ID_PATTERN = r"^[A-Za-z0-9_.:#-]{1,64}$"
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True, slots=True)
class CleanText:
    """A text field checked and normalised by :func:`clean_text` (at most ``max_chars``) and
    described in the schema by :func:`~factscout.serve.patterns.text_pattern`: one shared schema
    component (``ClaimText``) rather than the pattern copied into every field."""

    max_chars: int = MAX_CLAIM_CHARS
    name: str = "ClaimText"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        check = partial(clean_text, max_chars=self.max_chars)
        return core_schema.no_info_before_validator_function(check, core_schema.str_schema(), ref=self.name)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        reference = handler(schema)
        handler.resolve_ref_schema(reference).update(
            pattern=text_pattern(self.max_chars),
            description=(
                f"1 to {self.max_chars:,} characters once invisible characters are trimmed from both ends "
                "(counted after NFC normalisation); no control character other than tab, line feed and "
                "carriage return, no lone surrogate"
            ),
        )
        return reference


def api_day(value: Any) -> dt.date | None:
    """A day field: ``null`` or ``YYYY-MM-DD`` exactly (no empty string, no ISO week or basic forms)."""
    if value is None or isinstance(value, dt.date):
        return parse_iso_day(value)
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        raise ValueError(f"must be an ISO date YYYY-MM-DD (or null), got {value!r}")
    return parse_iso_day(value)


def json_integer(value: Any) -> int:
    """A JSON integer: an integer, or a number without a fractional part (``5.0``, which JSON
    Schema's ``integer`` admits); never a boolean or a string."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"must be an integer, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"must be an integer, got {value!r}")
    return int(value)


def planner_schema(schema: dict[str, Any]) -> None:
    """The ``planner`` field's schema: one of the registered planner names, or null."""
    from factscout.plan import PLANNERS

    schema["anyOf"] = [{"type": "string", "enum": sorted(PLANNERS)}, {"type": "null"}]


def clean_planner(value: Any) -> str | None:
    """A planner name: ``None``, or the name as sent once :func:`clean_text` found nothing wrong with it
    (so that `` claim `` is an unknown planner, as the schema's ``enum`` says, not ``claim``)."""
    if value is not None:
        clean_text(value, MAX_NAME_CHARS)
    return value


Text = Annotated[str, CleanText()]
Day = Annotated[
    dt.date | None,
    BeforeValidator(api_day),
    Field(
        json_schema_extra={"anyOf": [{"type": "string", "format": "date", "pattern": DAY_PATTERN}, {"type": "null"}]}
    ),
]
Integer = Annotated[int, BeforeValidator(json_integer)]
ActionId = Annotated[int, Field(ge=0, le=127), BeforeValidator(json_integer)]
Planner = Annotated[
    str | None,
    BeforeValidator(clean_planner),
    Field(default=None, description="planner name (default: the server's)", json_schema_extra=planner_schema),
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClaimFields(_Request):
    claim: Text = Field(description="the claim (NFC, trimmed)", examples=["Vitamin D prevents falls."])
    date: Day = Field(
        default=None, description="the claim's date (YYYY-MM-DD): evidence must predate it", examples=["2019-06-01"]
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="your id for the claim (default: one assigned by the server)"
    )


class CheckRequest(ClaimFields):
    """``POST /v1/check``: the whole pipeline for one claim."""

    planner: Planner
    date_filter: StrictBool = Field(default=True, description="only evidence published before the claim's date")


class PlanRequest(ClaimFields):
    """``POST /v1/plan``: the queries a planner makes for a claim."""

    planner: Planner


class SearchRequest(_Request):
    """``POST /v1/search``: one query against the index."""

    query: Text = Field(description="the query (NFC, trimmed)")
    k: Integer = Field(default=10, ge=1, le=MAX_SEARCH_K, description=f"hits, 1 to {MAX_SEARCH_K}")
    date: Day = Field(default=None, description="keep passages published before this day (YYYY-MM-DD)")


MAX_FACTCHECK_K = 50


class FactChecksQuery(_Request):
    """``GET /v1/factchecks?q=...``: look a claim (or tweet) up in the fact-check memory."""

    q: Text = Field(description="the claim or tweet (NFC, trimmed)")
    k: int = Field(default=5, ge=1, le=MAX_FACTCHECK_K, description=f"fact-checks returned, 1 to {MAX_FACTCHECK_K}")
    before: Day = Field(default=None, description="only fact-checks published before this day (YYYY-MM-DD)")


class RewriteRequest(_Request):
    """``POST /v1/rewrite``: apply one edit action to a query (or none) and search the result;
    optionally the learned rewriter's suggested edit trace for the query. An action that is not
    valid on the query leaves it unchanged; the answer's ``edit`` says so and why."""

    query: Text = Field(description="the current query (NFC, trimmed)")
    action: ActionId | None = Field(
        default=None,
        description="edit action id (Kazemi et al. Table 1: kind x 32 + position); one the query does not "
        "allow is not applied (`edit.applied` is false)",
    )
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="the claim's id in the loaded qrels: adds the metric"
    )
    k: Integer = Field(default=5, ge=1, le=MAX_EDITOR_K, description=f"hits shown, 1 to {MAX_EDITOR_K}")
    suggest: StrictBool = Field(default=False, description="also run the rewrite policy on the (edited) query")


MAX_JOB_CLAIMS = 100

# `claim` or `claims`, exactly one (null counts as absent); with `claims`, no top-level date or id
_ONE_FORM: JsonDict = {
    "oneOf": [
        {
            "title": "one claim",
            "required": ["claim"],
            "properties": {"claim": {"type": "string"}, "claims": {"type": "null"}},
        },
        {
            "title": "a batch",
            "required": ["claims"],
            "properties": {
                "claims": {"type": "array"},
                "claim": {"type": "null"},
                "date": {"type": "null"},
                "claim_id": {"type": "null"},
            },
        },
    ]
}


class ChecksRequest(_Request):
    """``POST /v1/checks``: a check job, run in the background and kept across restarts. Either
    one claim (the fields of ``POST /v1/check``) or a batch (``claims``: 1 to 100 claims with
    their own date and id), checked with one planner and date-filter setting."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_ONE_FORM)

    claim: Text | None = Field(
        default=None, description="one claim (NFC, trimmed); or give `claims`", examples=["Vitamin D prevents falls."]
    )
    date: Day = Field(default=None, description="the claim's date (YYYY-MM-DD), with `claim`")
    claim_id: str | None = Field(
        default=None, pattern=_ID_PATTERN, description="your id for the claim, with `claim` (default: assigned)"
    )
    claims: list[ClaimFields] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_JOB_CLAIMS,
        description=f"a batch of 1 to {MAX_JOB_CLAIMS} claims instead of `claim`",
    )
    planner: Planner
    date_filter: StrictBool = Field(default=True, description="only evidence published before each claim's date")

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


# ---------------------------------------------------------------------- documents

MAX_DOCUMENT_CHARS = 50_000
"""The longest document the service checks, in characters: a long article or a debate hour (the
request body limit is 64 kB)."""
MAX_DOCUMENT_CLAIMS = 20
# what factscout.claims.document refuses in a text: control characters other than tab, line feed,
# vertical tab, form feed and carriage return, and lone surrogates
_DOCUMENT_FORBIDDEN = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
DOCUMENT_PATTERN = r"^[^\u0000-\u0008\u000E-\u001F\u007F-\u009F]*$"
""":data:`_DOCUMENT_FORBIDDEN` as the schema says it (a lone surrogate is refused too: no pattern
over Unicode scalar values can name one)."""


def document_text(value: str) -> str:
    """A document as sent (never trimmed or normalised: the spans point into it as it is), refused
    when it holds binary data or a control character other than whitespace."""
    if bad := _DOCUMENT_FORBIDDEN.search(value):
        ch = bad.group()
        what = "a NUL byte (binary data)" if ch == "\x00" else f"the control character U+{ord(ch):04X}"
        raise ValueError(f"the document contains {what} at character {bad.start()}: give text")
    return value


DocumentText = Annotated[
    str,
    Field(min_length=1, max_length=MAX_DOCUMENT_CHARS, json_schema_extra={"pattern": DOCUMENT_PATTERN}),
    AfterValidator(document_text),
]
Probability = Annotated[StrictFloat, Field(ge=0.0, le=1.0)]


class DocumentRequest(_Request):
    """``POST /v1/documents``: a document whose sentences are scored for check-worthiness and whose
    most check-worthy ones are checked, each with the sentences before it that it needs; run in the
    background as a job and kept across restarts, like ``POST /v1/checks``."""

    text: DocumentText = Field(
        description=f"the document, 1 to {MAX_DOCUMENT_CHARS:,} characters, as it is (not trimmed: the "
        "report's spans point into it; for html, into its extracted main text); no control character "
        "other than whitespace",
        examples=[
            "The minister spoke on Tuesday. Folic acid supplements lowered homocysteine levels by 25 percent "
            "in the 2005 trial, she said. I think it was a lovely speech."
        ],
    )
    format: DocumentFormat = Field(
        default="text",
        description="text, markdown, html (its main text is read; scripts never run) or transcript "
        "(line<TAB>speaker<TAB>text lines)",
    )
    top: Integer = Field(
        default=5,
        ge=1,
        le=MAX_DOCUMENT_CLAIMS,
        description=f"the most check-worthy sentences to check, 1 to {MAX_DOCUMENT_CLAIMS}",
    )
    min_score: Probability | None = Field(
        default=None,
        description="check the sentences whose check-worthiness is at least this (default: the model's threshold)",
    )
    date: Day = Field(
        default=None, description="the document's date (YYYY-MM-DD): evidence must predate it", examples=["2019-06-01"]
    )
    planner: Planner
    date_filter: StrictBool = Field(default=True, description="only evidence published before the document's date")
