"""The ``factscout`` command line: thin typer commands over the library.

Each command lives in its own module under ``cli/`` (``cli/index.py``, ``cli/search.py``...), parses
its input, calls one core function and prints or writes the result; ``cli/common.py`` holds what they
share. This module builds the typer app and registers the commands, in the order ``--help`` lists
them. Errors a user can cause are printed as one line (``error: ...``) with exit status 2.

The top-level options live on the app's callback: ``--version``, and ``-v``/``--verbose``
(repeatable: INFO, then DEBUG) or ``--log-level LEVEL``, which set the root logger's level and
send library log messages to stderr through :func:`logging.basicConfig` (default WARNING);
``-q``/``--quiet`` turns off the progress bars and spinners (drawn on stderr, and only on a terminal).
"""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Annotated

import typer

from factscout.cli import (
    check,
    claims,
    collect,
    demo,
    evaluate,
    index,
    plan,
    rewrite,
    search,
    serve,
    stance,
    trajectories,
)
from factscout.cli.common import set_quiet
from factscout.cli.data import app as data_app
from factscout.cli.factchecks import app as factchecks_app
from factscout.cli.mcp import mcp as mcp_command
from factscout.cli.train import app as train_app

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find and judge the evidence for a claim.")

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def version_string() -> str:
    """The installed distribution's version; a source checkout that is not installed falls back to
    ``factscout.__version__``."""
    try:
        return package_version("factscout")
    except PackageNotFoundError:
        import factscout

        return str(getattr(factscout, "__version__", "unknown"))


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"factscout {version_string()}")
        raise typer.Exit()


def _check_level(value: str | None) -> str | None:
    if value is None:
        return None
    level = value.strip().upper()
    if level not in LEVELS:
        raise typer.BadParameter(f"no log level {value!r}; known: {', '.join(LEVELS)}")
    return level


def log_level(verbose: int, level: str | None) -> int:
    """``--log-level`` when given, else WARNING lowered one step per ``-v`` (INFO, then DEBUG)."""
    if level is not None:
        return int(getattr(logging, level))
    return (logging.WARNING, logging.INFO)[verbose] if verbose < 2 else logging.DEBUG


def configure_logging(level: int) -> None:
    """Library log messages go to stderr at ``level`` and above. ``basicConfig`` adds the stderr
    handler only when the root logger has none yet; the level is set either way, on the root
    logger and on the handler added here: a library that sets its own logger to DEBUG on import
    (bm25s does) would otherwise print its debug lines through it."""
    root = logging.getLogger()
    before = list(root.handlers)
    logging.basicConfig(level=level, format=LOG_FORMAT)
    root.setLevel(level)
    for handler in root.handlers:
        if handler not in before:
            handler._factscout = True  # type: ignore[attr-defined]
        if getattr(handler, "_factscout", False):
            handler.setLevel(level)


@app.callback()
def root(
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose", "-v", count=True, show_default=False, help="Log more to stderr: -v for INFO, -vv for DEBUG."
        ),
    ] = 0,
    level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            metavar="LEVEL",
            callback=_check_level,
            help=f"Log level for stderr, one of {', '.join(LEVELS)} (default WARNING); overrides -v.",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress bars or spinners on stderr (they are never drawn off a terminal)."
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Find and judge the evidence for a claim."""
    configure_logging(log_level(verbose, level))
    set_quiet(quiet)


app.command()(index.index)
app.command()(search.search)
app.command()(plan.plan)
# the measures after the first (--metrics ndcg@10 recall@100) arrive as extra arguments
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})(evaluate.evaluate)
app.command()(check.check)
app.command()(claims.claims)
app.command()(stance.stance)
app.command()(trajectories.trajectories)
app.command()(rewrite.rewrite)
app.add_typer(train_app, name="train")
app.command()(demo.demo)
app.command()(serve.serve)
app.command()(mcp_command)
app.command()(collect.collect)
app.add_typer(data_app, name="data")
app.add_typer(factchecks_app, name="factchecks")


def main() -> None:  # pragma: no cover
    app()
