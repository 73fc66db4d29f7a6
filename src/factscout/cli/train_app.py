"""The ``factscout train`` typer app and what its sub-commands share (:mod:`factscout.cli.train`
generates the sub-commands, :mod:`factscout.cli.train_options` says how)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from factscout.cli.common import err
from factscout.cli.train_options import option
from factscout.errors import UnknownName
from factscout.training.base import TRAINERS


class _TrainerGroup(TyperGroup):
    """Sub-commands in registry order; an unknown one lists the registered trainers."""

    def list_commands(self, ctx: Any) -> list[str]:
        order = {name: i for i, name in enumerate(TRAINERS)}
        return sorted(self.commands, key=lambda name: (order.get(name, len(order)), name))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            err.print(
                f"[bold red]error:[/] {UnknownName('trainer', args[0], TRAINERS)}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(2)
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=_TrainerGroup,
    add_completion=False,
    no_args_is_help=True,
    help="Train one of factscout's models (seeded; writes weights, metrics and a model card).",
)


def say(msg: str) -> None:
    """Print one progress line to stderr (the trainers' ``say``)."""
    print(msg, file=sys.stderr, flush=True)


def command_line(name: str) -> str:
    """The command line as the user typed it (``factscout train NAME OPTIONS``), for model cards."""
    argv = sys.argv[1:]
    rest = argv[argv.index(name) + 1 :] if name in argv else []
    return " ".join(["factscout train", name, *rest])


def set_torch_threads(n: int) -> None:
    """Let torch use ``n`` CPU threads (nothing when torch is not installed); idle OpenMP threads
    sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE`` unless set): on a machine whose cores
    another process shares, spinning threads made a stance fit about seven times slower (measured)."""
    import os

    if "torch" not in sys.modules:  # read by OpenMP when torch loads it
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(n)


def trainer_summary(name: str) -> str:
    """The one-line summary of trainer ``name`` (:data:`~factscout.training.base.TRAINERS`), for help texts."""
    return TRAINERS[name].summary


OUT = option("out", Path, ..., "--out", help="folder for the weights, model card and metrics")
"""The ``--out`` option most trainers share."""
