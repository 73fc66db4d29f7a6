"""The ``factscout`` command line: thin typer commands over the library.

Each command lives in its own module under ``cli/`` (``cli/index.py``, ``cli/search.py``...), parses
its input, calls one core function and prints or writes the result; ``cli/common.py`` holds what they
share. This module builds the typer app and registers the commands, in the order ``--help`` lists
them. Errors a user can cause are printed as one line (``error: ...``) with exit status 2.
"""

from __future__ import annotations

from typing import Annotated

import typer

from factscout.cli import check, collect, demo, evaluate, index, plan, rewrite, search, serve, trajectories
from factscout.cli.common import friendly, out, quiet_libraries

__all__ = ["app", "main", "quiet_libraries"]  # quiet_libraries: benchmarks/_common.py imports it from here

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find and judge the evidence for a claim.")

app.command()(index.index)
app.command()(search.search)
app.command()(plan.plan)
# the measures after the first (--metrics ndcg@10 recall@100) arrive as extra arguments
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})(evaluate.evaluate)
app.command()(check.check)
app.command()(trajectories.trajectories)
app.command()(rewrite.rewrite)


TRAINERS = {
    "stance": ("factscout.verify.train_stance", []),
    "stance-cross": ("factscout.verify.train_cross_stance", []),
    "rerank": ("factscout.rerank.train", []),
    "selector": ("factscout.select.train_tagger", []),
    "classifier": ("factscout.verify.train_classifier", []),
    "qgen": ("factscout.plan.qgen", ["train"]),
    "dense": ("factscout.retrieve.train_dense", []),
    "rewrite": ("factscout.rewrite.train_policy", []),
}


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
@friendly
def train(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help=f"which model: {' | '.join(TRAINERS)}")],
) -> None:
    """Train one of factscout's models (seeded; writes weights, metrics and a model card).

    Options after MODEL go to that trainer: `factscout train stance --out DIR`;
    `factscout train stance --help` lists them.
    """
    import importlib

    from factscout.errors import UnknownName

    if model in ("--help", "-h"):
        out.print(f"usage: factscout train {{{','.join(TRAINERS)}}} [TRAINER OPTIONS]; TRAINER --help lists them")
        return
    if model not in TRAINERS:
        raise UnknownName("trainer", model, TRAINERS)
    module_name, prefix = TRAINERS[model]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise UnknownName(
                "installed trainer", model, [m for m, (n, _) in TRAINERS.items() if _importable(n)]
            ) from None
        raise
    code = module.main([*prefix, *ctx.args])
    raise typer.Exit(int(code or 0))


app.command()(demo.demo)
app.command()(serve.serve)
app.command()(collect.collect)


def main() -> None:  # pragma: no cover
    app()
