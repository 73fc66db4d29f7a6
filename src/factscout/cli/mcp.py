"""``factscout mcp``: factscout's tools for AI agents over MCP (stdio, or streamable HTTP)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from factscout.cli.common import err, friendly, quiet_libraries
from factscout.cli.settings import with_settings


@friendly
@with_settings(exclude=("date_filter",))  # each call says whether it has a date
def mcp(
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")],
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help="serve streamable HTTP at http://HOST:PORT/mcp, beside the HTTP API (/v1) of the same process and"
            " sharing its queue, instead of stdio",
        ),
    ] = False,
    host: Annotated[str, typer.Option(help="with --http: the address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="with --http: the port")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="FACTSCOUT_TOKEN",
            help="with --http: require this bearer token on /mcp and the API, as `factscout serve --token` does",
        ),
    ] = None,
    max_pending: Annotated[int, typer.Option(help="calls queued or running before one is refused as busy")] = 128,
    threads: Annotated[int, typer.Option(help="threads per model call (torch, ONNX Runtime), as for serve")] = 2,
    *,
    settings: dict[str, Any],
) -> None:
    """Serve factscout's tools to AI agents over MCP (the Model Context Protocol): check_claim,
    check_document, search_evidence and find_fact_checks (with --factchecks DIR).

    By default over stdin and stdout: an agent host (Claude Desktop, VS Code, ...) starts the command
    itself; see docs/mcp.md for the configuration. The check settings (--planner, --stance, --rerank,
    --factchecks, ...) are those of `factscout check`."""
    quiet_libraries()
    from factscout.retrieve.index import read_manifest
    from factscout.settings import CheckSettings

    checked = CheckSettings(**settings)  # unknown names are reported (with the known ones) before anything loads
    read_manifest(index)  # a missing or broken index is reported before any model loads
    try:
        from factscout.serve import mcp as server
    except ImportError as exc:
        from factscout.errors import MissingDependency

        raise MissingDependency(f"factscout mcp needs {exc.name}: pip install 'factscout[mcp]'") from None
    from factscout.check import Checker
    from factscout.serve.app import model_threads

    # over stdio, stdout is the protocol's: whatever a library prints while loading goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
        checker = Checker.from_index(index, checked, encoder=model_threads(threads))
    if not http:
        import anyio

        err.print(f"factscout MCP server on stdio over {index}", highlight=False)
        anyio.run(lambda: server.serve_stdio(checker, max_pending=max_pending))
        return
    import uvicorn

    from factscout.serve import create_app
    from factscout.serve.routes.state import ServeState

    web = create_app(checker, token=token, policy=None, max_pending=max_pending)
    shared: ServeState = web.state.serve  # the API's service and core runner: one queue for both faces
    server.mount(web, shared.service, shared.runner, token=shared.token, host=host)
    err.print(
        f"factscout MCP server on http://{host}:{port}{server.MCP_PATH} (HTTP API under /v1) over {index}",
        highlight=False,
        soft_wrap=True,
    )
    uvicorn.run(web, host=host, port=port, log_level="warning")
