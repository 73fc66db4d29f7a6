"""``factscout serve``: the HTTP API and the web page over one checker."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.check import check as _check_command
from factscout.cli.common import err, friendly, one_of, quiet_libraries
from factscout.rewrite.io import BASELINES, shipped_policies

# The check settings are `factscout check`'s own options (name, help, default), read from its
# signature so the two commands cannot drift apart; CheckSettings validates the names.
_CHECK_OPTIONS = typing.get_type_hints(_check_command, include_extras=True)
_CHECK_DEFAULTS = {name: p.default for name, p in inspect.signature(_check_command).parameters.items()}
if typing.TYPE_CHECKING:  # the value types; typer reads the options below
    StanceOption: typing.TypeAlias = str
    VerdictOption: typing.TypeAlias = str
    RerankOption: typing.TypeAlias = bool
    SelectorOption: typing.TypeAlias = str
    FastOption: typing.TypeAlias = bool | None
    MinConfidenceOption: typing.TypeAlias = float | None
else:
    StanceOption = _CHECK_OPTIONS["stance"]
    VerdictOption = _CHECK_OPTIONS["verdict"]
    RerankOption = _CHECK_OPTIONS["rerank"]
    SelectorOption = _CHECK_OPTIONS["selector"]
    FastOption = _CHECK_OPTIONS["fast"]
    MinConfidenceOption = _CHECK_OPTIONS["min_confidence"]


@friendly
def serve(
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    planner: Annotated[str, typer.Option(help="default planner of /v1/check and the page")] = "decompose",
    passages: Annotated[int, typer.Option(help="top passages read for evidence sentences")] = 5,
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
            "the jobs left unfinished [default: INDEX/serve-state]"
        ),
    ] = None,
    threads: Annotated[
        int, typer.Option(help="threads per model call (torch, ONNX Runtime); 1 is fastest on a busy machine")
    ] = 1,
    stance: StanceOption = _CHECK_DEFAULTS["stance"],
    verdict: VerdictOption = _CHECK_DEFAULTS["verdict"],
    rerank: RerankOption = _CHECK_DEFAULTS["rerank"],
    selector: SelectorOption = _CHECK_DEFAULTS["selector"],
    fast: FastOption = _CHECK_DEFAULTS["fast"],
    min_confidence: MinConfidenceOption = _CHECK_DEFAULTS["min_confidence"],
) -> None:
    """Serve the HTTP API (/v1/check, /v1/checks, /v1/search, /v1/plan, /v1/rewrite) and the web page.

    The check settings (--stance, --verdict, --rerank, --selector, --fast/--no-fast, --min-confidence)
    are those of `factscout check`."""
    quiet_libraries()
    from factscout.check import Checker, CheckSettings
    from factscout.formats.trec import read_qrels
    from factscout.serve import create_app
    from factscout.serve.app import model_threads

    try:
        import uvicorn
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("factscout serve needs uvicorn: pip install 'factscout[serve]'") from None
    from factscout.retrieve.index import read_manifest

    settings = CheckSettings(  # unknown names are reported (with the known ones) before anything loads
        planner=planner,
        passages=passages,
        stance=stance,
        verdict=verdict,
        rerank=rerank,
        selector=selector,
        fast=fast,
        min_verdict_confidence=min_confidence,
    )
    read_manifest(index)  # a missing or broken index is reported before any model loads
    from factscout.serve.jobs import JobStore

    state = state if state is not None else index / "serve-state"
    JobStore(state).close()  # so is a job folder that cannot be written
    encoder = model_threads(threads)
    checker = Checker.from_index(index, settings, encoder=encoder)
    judgements = read_qrels(qrels) if qrels else None
    web = create_app(checker, token=token, policy=policy, qrels=judgements, max_pending=max_pending, state=state)
    err.print(
        f"factscout serving {index} on http://{host}:{port}/ (API under /v1, schema at /openapi.json; "
        f"check jobs in {state})"
    )
    uvicorn.run(web, host=host, port=port, log_level="warning")
