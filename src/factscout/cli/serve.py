"""``factscout serve``: the HTTP API and the web page over one checker."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from factscout.cli.common import err, friendly, one_of, quiet_libraries
from factscout.cli.settings import with_settings
from factscout.rewrite.io import BASELINES, shipped_policies


@friendly
@with_settings(exclude=("date_filter",))  # each request says whether it filters by date
def serve(
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    policy: Annotated[
        str,
        typer.Option(
            help="query editor suggestions: `auto` (the shipped policy made for the index's retriever and "
            "dataset; no suggestions when none fits), a `factscout train rewrite` folder, a shipped policy: "
            f"{one_of(shipped_policies())}, or a baseline: {one_of(BASELINES)}"
        ),
    ] = "auto",
    qrels: Annotated[Path | None, typer.Option(help="qrels (BEIR TSV or TREC): the editor shows the metric")] = None,
    token: Annotated[
        str | None, typer.Option(envvar="FACTSCOUT_TOKEN", help="require this bearer token on the API (page off)")
    ] = None,
    max_pending: Annotated[int, typer.Option(help="requests queued or running before 503")] = 128,
    state: Annotated[
        Path | None,
        typer.Option(
            help="folder of the check jobs' database (POST /v1/checks); the same command restarted resumes "
            "the jobs left unfinished \\[default: INDEX/serve-state]"  # \\[: text, not rich markup
        ),
    ] = None,
    threads: Annotated[
        int,
        typer.Option(
            help="threads per model call (torch, ONNX Runtime): 2 served 50 clients on this 2-core machine at 11.8"
            " checks/s against 9.3 with 1; 1 is faster where other jobs keep the cores busy"
        ),
    ] = 2,
    *,
    settings: dict[str, Any],
) -> None:
    """Serve the HTTP API (/v1/check, /v1/checks, /v1/search, /v1/plan, /v1/rewrite) and the web page.

    The check settings (--planner: the default of /v1/check and the page, --stance, --verdict, --rerank,
    --selector, --fast/--no-fast, --min-confidence, ...) are those of `factscout check`."""
    quiet_libraries()
    from factscout.check import Checker
    from factscout.formats.trec import read_qrels
    from factscout.serve import create_app
    from factscout.serve.app import model_threads
    from factscout.settings import CheckSettings

    try:
        import uvicorn
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("factscout serve needs uvicorn: pip install 'factscout[serve]'") from None
    from factscout.retrieve.index import read_manifest

    checked = CheckSettings(**settings)  # unknown names are reported (with the known ones) before anything loads
    read_manifest(index)  # a missing or broken index is reported before any model loads
    from factscout.serve.jobs import JobStore

    state = state if state is not None else index / "serve-state"
    JobStore(state).close()  # so is a job folder that cannot be written
    encoder = model_threads(threads)
    checker = Checker.from_index(index, checked, encoder=encoder)
    judgements = read_qrels(qrels) if qrels else None
    web = create_app(checker, token=token, policy=policy, qrels=judgements, max_pending=max_pending, state=state)
    err.print(
        f"factscout serving {index} on http://{host}:{port}/ (API under /v1, schema at /openapi.json; "
        f"check jobs in {state})"
    )
    uvicorn.run(web, host=host, port=port, log_level="warning")
