"""Property-based API tests generated from ``/openapi.json`` by schemathesis (issue 19), against a
live server on the loopback interface over the small test index.

Every operation gets valid requests (positive mode) and invalid ones (negative mode), bounded in
examples, and every check schemathesis has runs on each answer: no 5xx, a documented status code,
content type and headers, a body that matches the documented schema (the response models of
``factscout.serve.responses``), and the schema saying exactly what the server accepts: a request
the schema calls valid is answered 2xx (``positive_data_acceptance``), one it calls invalid 4xx
(``negative_data_rejection``). Runs are derandomised, so a failure reproduces; a failure lists the
request that caused it.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

schemathesis = pytest.importorskip("schemathesis")
uvicorn = pytest.importorskip("uvicorn")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import CHECKS as CHECK_REGISTRY  # noqa: E402
from schemathesis.checks import load_all_checks  # noqa: E402
from schemathesis.core.failures import FailureGroup  # noqa: E402  (a BaseExceptionGroup)

# imported (so assertion-rewritten by pytest, schemathesis being a plugin) at collection, not inside the
# test: under CPython 3.11.7 its rewrite failed once deep in a full run with "SystemError: AST
# constructor recursion depth mismatch" (a CPython bug fixed in 3.11.8)
from schemathesis.specs.openapi.schemas import OpenApiSchema  # noqa: E402, F401

from factscout.serve import create_app  # noqa: E402

MAX_EXAMPLES = 25  # per operation and generation mode
load_all_checks()
CHECKS = list(CHECK_REGISTRY.get_all())  # every built-in check, as `st run --checks all`
ENDPOINTS = {
    "GET /v1/health",
    "POST /v1/check",
    "POST /v1/checks",
    "GET /v1/checks/{job_id}",
    "POST /v1/documents",
    "GET /v1/documents/{job_id}",
    "POST /v1/search",
    "GET /v1/factchecks",
    "POST /v1/plan",
    "POST /v1/rewrite",
}


# GET /v1/health takes no input, and a job id is any text (an unknown one is a 404): neither has an
# invalid form to generate
NO_INVALID_FORM = {"GET /v1/health", "GET /v1/checks/{job_id}", "GET /v1/documents/{job_id}"}


@pytest.fixture(scope="module")
def live_server(checker, mini):
    """The app served by uvicorn on 127.0.0.1 (a free port), in a thread; its base URL."""
    app = create_app(checker, qrels=mini.qrels, warm_up=False)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_every_endpoint_fuzzed_from_the_openapi_schema(live_server):
    schema = schemathesis.openapi.from_url(f"{live_server}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.label for op in operations} == ENDPOINTS  # every endpoint, and nothing unexpected
    assert {"negative_data_rejection", "positive_data_acceptance"} <= {check.__name__ for check in CHECKS}
    failures: list[str] = []
    started = time.monotonic()
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            calls = 0

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case):  # type: ignore[no-untyped-def]
                nonlocal calls
                calls += 1
                case.call_and_validate(base_url=live_server, checks=CHECKS, timeout=60)

            try:
                run()
            except Unsatisfiable:
                if mode is GenerationMode.POSITIVE or operation.label not in NO_INVALID_FORM:
                    raise
            except (Exception, FailureGroup) as exc:  # the failing case: record it, fuzz the other operations
                failures.append(f"{operation.label} ({mode.value}): {exc}")
            if mode is GenerationMode.POSITIVE:
                assert calls > 0, f"{operation.label}: no request was generated"
    elapsed = time.monotonic() - started
    assert not failures, "\n\n".join(failures)
    assert elapsed < 120, f"schemathesis took {elapsed:.0f} s"
