"""``factscout check --server URL``: check claims on a running ``factscout serve``.

A cold ``check`` pays for loading the index and the models; a server has them loaded, so a user
who checks claims by hand one at a time gets each answer in about the time the check itself takes.
The client sends each claim to ``POST /v1/check`` (the bearer token from ``$FACTSCOUT_TOKEN``
when the server asks for one) and reads each answer back into a :class:`~factscout.report.Report`,
so it is printed and written exactly as a local check's. Only what the API takes per request can
be chosen (``--date``, ``--planner``, ``--date-filter``); the other check settings are the
server's, and giving one is an error rather than silently ignored.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from factscout.errors import InputError

TIMEOUT_S = 300.0  # one check on a busy server; the server's own queue answers 503 sooner when full


def check_remote(server: str, claims: Sequence[Any], planner: str, date_filter: bool) -> Iterator[Any]:
    """Reports for ``claims`` (:class:`~factscout.records.Claim`) from the server at ``server``, in order."""
    import httpx

    from factscout.report import Report

    base = server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise InputError(f"--server {server!r}: give the server's URL, e.g. http://127.0.0.1:8000")
    token = os.environ.get("FACTSCOUT_TOKEN")
    headers = {"authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=base, headers=headers, timeout=TIMEOUT_S) as client:
        for claim in claims:
            body: dict[str, Any] = {"claim": claim.text, "planner": planner, "date_filter": date_filter}
            if claim.date is not None:
                body["date"] = claim.date.isoformat()
            if claim.claim_id != "claim":
                body["claim_id"] = claim.claim_id
            try:
                response = client.post("/v1/check", json=body)
            except httpx.HTTPError as exc:
                raise InputError(
                    f"--server {base}: no answer ({type(exc).__name__}: {exc}); is `factscout serve` running there?"
                ) from None
            if response.status_code != 200:
                raise InputError(f"--server {base} refused claim {claim.claim_id!r}: {_reason(response)}")
            yield Report.from_dict(response.json())


def _reason(response: Any) -> str:
    """The server's one-line error (``{"error": ...}``), or the status and the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        return f"{response.status_code} {body['error']}"
    return f"HTTP {response.status_code} {response.text[:200]!r}"
