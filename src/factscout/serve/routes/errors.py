"""The one error body every failure answers with (``ErrorResponse``: ``{"error": message,
"status": code, ...}``) and the app's exception handlers that write it: 400 for malformed JSON or
a core input error, 422 for a field that fails validation or an unknown name (with the known ones),
503 with ``Retry-After`` when the wait queue is full, the status of an HTTP error, and 500 (logged)
for anything else."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from factscout.errors import FactscoutError, UnknownName
from factscout.serve.runner import Saturated

log = logging.getLogger(__name__)


def error_response(status: int, message: str, *, headers: Any = None, **extra: Any) -> JSONResponse:
    """The ``ErrorResponse`` body for ``status`` (``extra``: more fields, e.g. ``details``)."""
    body = {"error": printable(message), "status": status, **extra}
    return JSONResponse(body, status_code=status, headers=headers)


def field_detail(error: Any) -> dict[str, str]:
    """One of pydantic's validation errors as ``{"field": "a.b", "message": ...}`` (the field
    without where it was: body, query, path or header)."""
    loc = list(error.get("loc", ()))
    if loc and loc[0] in ("body", "query", "path", "header"):  # where the field was, not its name
        loc = loc[1:]
    loc = [printable(str(p)) for p in loc]
    message = printable(str(error.get("msg", "invalid")))
    message = message.removeprefix("Value error, ")
    return {"field": ".".join(loc) or "body", "message": message}


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX``: an error that quotes a client's field
    name or value must still encode as UTF-8 (else the error answer itself would fail with a 500)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, "the request body is not valid JSON")
    details = [field_detail(e) for e in errors]
    return error_response(422, "; ".join(f"{d['field']}: {d['message']}" for d in details), details=details)


async def unknown(_: Request, exc: UnknownName) -> JSONResponse:
    return error_response(422, str(exc), known=exc.known)


async def bad_input(_: Request, exc: FactscoutError) -> JSONResponse:
    return error_response(400, str(exc))


async def busy(_: Request, exc: Saturated) -> JSONResponse:
    return error_response(503, str(exc), headers={"Retry-After": str(exc.retry_after)})


async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    return error_response(exc.status_code, str(exc.detail), headers=exc.headers)


async def crash(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error")
    return error_response(500, f"internal error: {type(exc).__name__}")


ERROR_HANDLERS: dict[Any, Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    RequestValidationError: invalid,
    UnknownName: unknown,
    FactscoutError: bad_input,
    Saturated: busy,
    StarletteHTTPException: http_error,
    Exception: crash,
}
"""The handlers ``create_app`` installs, by exception type (the most specific type's handler answers)."""
