"""``factscout train claim-match``: options derived from :class:`~factscout.training.claim_match.config.ClaimMatchConfig`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import friendly
from factscout.cli.train_app import Out, app, command_line, say, set_torch_threads, trainer_summary
from factscout.training.claim_match.config import ClaimMatchConfig

_D = ClaimMatchConfig()


@app.command("claim-match", help=f"Train, choose and write {trainer_summary('claim-match')}.")
@friendly
def claim_match(
    out: Out,
    cs: Annotated[
        str, typer.Option(help="comma-separated L2 inverse strengths tried (chosen on dev MAP@5)")
    ] = ",".join(f"{c:g}" for c in _D.cs),
    depth: Annotated[int, typer.Option(help="candidates per view (BM25, dense)")] = _D.depth,
    precision: Annotated[float, typer.Option(help="shown-match precision the dev threshold must reach")] = _D.precision,
    seed: Annotated[int, typer.Option()] = _D.seed,
    data: Annotated[Path | None, typer.Option(help="data folder (default: $FACTSCOUT_DATA or ../shared/data)")] = None,
) -> None:
    from factscout.errors import InputError
    from factscout.training.claim_match.train import run

    try:
        strengths = tuple(float(c) for c in cs.split(",") if c.strip())
    except ValueError:
        raise InputError(f"--cs must be comma-separated numbers, got {cs!r}") from None
    set_torch_threads(2)
    config = ClaimMatchConfig(cs=strengths, depth=depth, precision=precision, seed=seed)
    run(out, config, root=data, say=say, command=command_line("claim-match"))
