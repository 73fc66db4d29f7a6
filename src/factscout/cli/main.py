"""The ``factscout`` command line: thin typer commands over the library.

Each command lives in its own module under ``cli/`` (``cli/index.py``, ``cli/search.py``...), parses
its input, calls one core function and prints or writes the result; ``cli/common.py`` holds what they
share. This module builds the typer app and registers the commands, in the order ``--help`` lists
them. Errors a user can cause are printed as one line (``error: ...``) with exit status 2.
"""

from __future__ import annotations

import typer

from factscout.cli import check, collect, demo, evaluate, index, plan, rewrite, search, serve, stance, trajectories
from factscout.cli.data import app as data_app
from factscout.cli.train import app as train_app

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find and judge the evidence for a claim.")

app.command()(index.index)
app.command()(search.search)
app.command()(plan.plan)
# the measures after the first (--metrics ndcg@10 recall@100) arrive as extra arguments
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})(evaluate.evaluate)
app.command()(check.check)
app.command()(stance.stance)
app.command()(trajectories.trajectories)
app.command()(rewrite.rewrite)
app.add_typer(train_app, name="train")
app.command()(demo.demo)
app.command()(serve.serve)
app.command()(collect.collect)
app.add_typer(data_app, name="data")


def main() -> None:  # pragma: no cover
    app()
