"""Response bodies of the HTTP API as pydantic models, so ``/openapi.json`` describes what a
client receives.

The report of ``/v1/check`` and ``/v1/checks`` is the core's own :class:`~factscout.report.Report`
(one contract for the library, the JSON lines and this schema), not a copy; the other endpoints send
the dictionaries of :class:`~factscout.serve.service.Service`, which these models document and the
tests validate real responses against. Every model forbids unknown fields, so a field added to
(or renamed in) a response without its model fails those tests and the schemathesis run. A field
that a response only sometimes carries (``date_filter`` of a dated search, ``relevant`` of an
editor hit when qrels are loaded) is optional here and absent, not null, in the JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factscout.claims.report import DocumentReport
from factscout.report import PlannedQuery, PriorCheck, Report


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------- errors


class ErrorResponse(_Response):
    """Every 4xx/5xx answer: the message, the status, and for some errors more detail."""

    error: str = Field(description="what was wrong, naming the field or value")
    status: int = Field(description="the HTTP status again")
    details: list[FieldError] | None = Field(default=None, description="422 from validation: one entry per field")
    known: list[str] | None = Field(default=None, description="422 for an unknown component name: the valid names")


class FieldError(_Response):
    field: str = Field(description="the field's path, dotted (``claim``, ``k``)")
    message: str


# ---------------------------------------------------------------------- shared pieces


class Hit(_Response):
    """A retrieved passage (``text`` on ``/v1/search``; ``relevant`` in the editor with qrels)."""

    rank: int
    passage_id: str
    doc_id: str
    title: str
    score: float
    published: str | None = Field(description="YYYY-MM-DD, or null when undated")
    url: str | None
    text: str | None = Field(default=None, description="the passage text (``/v1/search`` only)")
    relevant: bool | None = Field(default=None, description="in the loaded qrels (editor, when the claim has qrels)")


# ---------------------------------------------------------------------- /v1/health


class HealthResponse(_Response):
    status: Literal["ok"]
    passages: int = Field(description="passages in the index")
    retriever: str
    index: str | None = Field(description="the index folder")
    planner: str = Field(description="the default planner")
    policy: str | None = Field(description="the rewrite policy of the query editor (null: none fits the index)")
    qrels: int = Field(description="claims with loaded relevance judgements")
    pending: int = Field(description="interactive requests queued or running now (503 beyond max_pending)")
    background_pending: int = Field(description="claims of batch jobs queued for the core or running now")
    max_pending: int
    done: int
    rejected: int
    largest_batch: int


# ---------------------------------------------------------------------- /v1/search


class DateFilter(_Response):
    """What the published-before filter did to the candidates."""

    published_before: str | None
    undated_policy: str
    allowed: int
    excluded_late: int
    undated_kept: int
    undated_dropped: int


class SearchResponse(_Response):
    query: str
    k: int
    date: str | None
    hits: list[Hit]
    date_filter: DateFilter | None = Field(default=None, description="present when ``date`` was given")


# ---------------------------------------------------------------------- /v1/factchecks


class FactCheckHit(PriorCheck):
    """A fact-check of the memory and its match score; ``shown``: at or above the threshold (what
    a report's "Checked before" section would show)."""

    model_config = ConfigDict(extra="forbid")

    shown: bool


class FactChecksResponse(_Response):
    query: str
    k: int
    before: str | None = Field(description="only fact-checks published before this day (YYYY-MM-DD)")
    threshold: float = Field(description="the match score a fact-check needs to be shown in a report")
    memory: str = Field(description="the fact-check memory searched")
    matches: list[FactCheckHit] = Field(description="the top k, best first")


# ---------------------------------------------------------------------- /v1/plan


class PlanResponse(_Response):
    claim_id: str
    claim: str
    date: str | None
    planner: str
    queries: list[PlannedQuery] = Field(description="the claim itself first")
    planner_error: str | None = Field(description="why the planner failed (then only the claim is searched)")


# ---------------------------------------------------------------------- /v1/rewrite


class AppliedEdit(_Response):
    """The edit action sent with the query: applied, or (not valid on this query) not applied."""

    action: int
    label: str
    description: str = Field(description="what the edit did, or why it could not be applied")
    applied: bool = Field(description="false when the query does not allow the action: the query is unchanged")


class TokenEdit(_Response):
    action: int = Field(description="the action id to send back as ``action``")
    kind: str
    label: str
    description: str


class Token(_Response):
    position: int
    text: str
    pos: str = Field(description="part of speech")
    edits: list[TokenEdit]


class Metric(_Response):
    measure: str
    value: float
    claim_id: str | None


class SuggestedStep(_Response):
    action: int
    text: str
    query: str
    reward: float | None
    label: str


class Suggestion(_Response):
    """The rewrite policy's edit trace (``RewriteTrace.to_dict()`` with a short label per step)."""

    claim_id: str
    original: str
    steps: list[SuggestedStep]
    final: str
    policy: str
    measure: str | None
    original_reward: float | None
    final_reward: float | None


class RewriteResponse(_Response):
    query: str = Field(description="the query after the edit")
    edit: AppliedEdit | None
    tokens: list[Token]
    hits: list[Hit]
    metric: Metric | None
    policy: str | None = Field(description="the policy that suggests edits; null when none fits the index")
    suggestion: Suggestion | None


# ---------------------------------------------------------------------- /v1/checks: jobs


class JobError(_Response):
    position: int = Field(description="the claim's place in the job (0 for the first)")
    claim_id: str
    error: str = Field(description="why the core refused the claim")


class JobResponse(_Response):
    """A check job (``POST /v1/checks``, ``GET /v1/checks/{job_id}``): its status, its progress
    in claims, and once it has ended the reports, one per claim in the order sent."""

    id: str = Field(description="the job id: poll GET /v1/checks/{id}")
    status: Literal["queued", "running", "done", "failed"] = Field(
        description="queued, running, done (every claim has a report) or failed (some claim has an error)"
    )
    total: int = Field(description="claims in the job")
    done: int = Field(description="claims finished (a report or an error)")
    failed: int = Field(description="claims with an error")
    created: str = Field(description="when the job was accepted (ISO 8601, UTC)")
    finished: str | None = Field(description="when its last claim finished")
    reports: list[Report | None] | None = Field(
        description="once done or failed: the report of each claim in order (null for a claim with an error)"
    )
    errors: list[JobError] = Field(description="claims the core refused")


# ---------------------------------------------------------------------- /v1/documents: jobs


class DocumentProgress(_Response):
    checked: int = Field(description="check-worthy sentences checked so far (a report or an error)")
    total: int = Field(description="check-worthy sentences to check")


class DocumentJobResponse(_Response):
    """A document job (``POST /v1/documents``, ``GET /v1/documents/{job_id}``): its status, its
    progress in checked sentences, and once it has ended the ``factscout-document-report/1`` report."""

    id: str = Field(description="the job id: poll GET /v1/documents/{id}")
    status: Literal["queued", "running", "done", "failed"] = Field(
        description="queued, running, done (every chosen sentence checked) or failed (the document was refused, "
        "or some sentence's check failed: `error`, `errors`)"
    )
    progress: DocumentProgress
    failed: int = Field(description="sentences whose check failed")
    created: str = Field(description="when the job was accepted (ISO 8601, UTC)")
    finished: str | None = Field(description="when it ended")
    error: str | None = Field(
        description="why the document was refused (binary, a malformed transcript): then no report"
    )
    errors: list[JobError] = Field(description="sentences whose check failed (their report is null)")
    report: DocumentReport | None = Field(
        description="once done or failed: the document report (every sentence's span and check-worthiness, each "
        "checked sentence's factscout-report/1 report)"
    )


ErrorResponse.model_rebuild()

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "malformed JSON or input the core refused"},
    401: {"model": ErrorResponse, "description": "missing or wrong bearer token (when the server has one)"},
    413: {"model": ErrorResponse, "description": "request body over 64 kB"},
    422: {"model": ErrorResponse, "description": "a field failed validation, or an unknown component name"},
    500: {"model": ErrorResponse, "description": "a server bug (reported as such; never bad input)"},
    503: {"model": ErrorResponse, "description": "the wait queue is full: retry after Retry-After seconds"},
}
"""The error answers every API endpoint documents."""
ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"headers": {"Location": {"description": "the job's URL to poll", "schema": {"type": "string"}}}}
}
"""A job endpoint's ``202`` answer: the job, and its URL in ``Location``."""
