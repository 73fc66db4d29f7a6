"""``factscout stance``: the stance of each claim–sentence pair of a JSONL file, with any stance model."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from factscout import settings
from factscout.cli.common import (
    INPUT,
    OUTPUT,
    counted,
    err,
    friendly,
    one_of,
    output_path,
    quiet_libraries,
    status,
)
from factscout.verify import STANCE_MODELS

STANCE_HELP = settings.STANCE_HELP.format(choices=one_of(STANCE_MODELS))


@friendly
def stance(
    pairs: Annotated[Path, typer.Option(*INPUT, "--pairs", help='pairs JSONL: {"id"?, "claim", "sentence"} per line')],
    out_path: Annotated[
        Path, typer.Option(*OUTPUT, "--out", help="JSONL to write: each pair with label and probabilities")
    ],
    stance: Annotated[str, typer.Option(help=STANCE_HELP)] = "cross",
    device: Annotated[str, typer.Option(help="torch device: cpu | cuda | mps (cross and nli models)")] = "cpu",
    batch_size: Annotated[int, typer.Option(help="pairs scored at a time")] = 64,
) -> None:
    """Classify the stance of each claim–sentence pair: supports, refutes or not enough info.

    The output copies each row and adds "label" and "probabilities" (supports, refutes, not enough
    info); a row's own label or probabilities are kept as input_label / input_probabilities.
    """
    quiet_libraries()
    from factscout.errors import InputError
    from factscout.formats.jsonl import write_jsonl
    from factscout.verify import make_stance_model, read_pairs, score_pairs
    from factscout.verify.base import stance_model_takes
    from factscout.verify.nli import check_device

    if batch_size < 1:
        raise typer.BadParameter(f"--batch-size must be positive, got {batch_size}")
    if out_path.is_dir():  # reported before any pair is scored (a missing folder is made, as always)
        output_path(out_path, "--output")
    rows = read_pairs(pairs)  # every row checked before a model loads
    options: dict[str, object] = {}
    if device != "cpu":
        if not stance_model_takes(stance, "device"):
            raise InputError(f"stance model {stance!r} runs on the CPU only: --device {device} needs cross or nli:...")
        options["device"] = check_device(device)
    with status(f"loading stance model {stance}"):
        model = make_stance_model(stance, **options)
    with counted("scoring pairs", len(rows)) as bar:
        scored = score_pairs(model, rows, batch_size=batch_size, progress=bar.advance)
    write_jsonl(out_path, scored)
    counts = Counter(r["label"] for r in scored)
    labels = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))
    err.print(f"wrote {len(scored)} pairs to {out_path} ({labels})", highlight=False, soft_wrap=True)
