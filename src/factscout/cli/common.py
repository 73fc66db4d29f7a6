"""What every ``factscout`` command shares: the consoles, error handling, progress bars, input readers.

The CLI owns the terminal: results go to ``out`` (stdout), progress, notes and errors to ``err``
(stderr). Errors a user can cause (every ``FactscoutError``) are printed as one line
(``error: ...``) with exit status 2 by :func:`friendly`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from factscout.errors import FactscoutError, InputError

out = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def quiet_libraries() -> None:
    """The CLI owns the terminal: silence third-party progress bars and logs. Hub look-ups are left
    alone: the offline defaults load from package folders, and a model id a user names may download.
    Set through the environment, which the libraries read when they load: importing transformers
    here would cost most of a second before a command has even looked at its input."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if "transformers" in sys.modules:  # already loaded (a test, a library caller): tell it directly
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def friendly(fn: F) -> F:
    """Turn factscout's errors into one readable line and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FactscoutError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


_QUIET = {"on": False}


def set_quiet(quiet: bool) -> None:
    """``factscout --quiet``: no progress bars or spinners (results and errors are still printed)."""
    _QUIET["on"] = quiet


def bars_off(console: Console) -> bool:
    """Bars are drawn only on a terminal, and never with ``--quiet``."""
    return _QUIET["on"] or not console.is_terminal


class Counted:
    """What :func:`counted` yields: ``advance(n)`` moves the bar; ``completed`` is the count so far."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self._bar, self._task = bar, task

    def advance(self, n: int = 1) -> None:
        self._bar.advance(self._task, n)

    @property
    def completed(self) -> int:
        return int(self._bar.tasks[self._task].completed)


@contextlib.contextmanager
def counted(description: str, total: int, *, console: Console | None = None) -> Iterator[Counted]:
    """A counted progress bar on stderr for a command that loops over a file: ``done/total``, elapsed
    time and ETA. Drawn only when stderr is a terminal and ``--quiet`` is not given; it counts either
    way, and it never writes to stdout, so a command's output stays machine-readable."""
    console = console or err
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=bars_off(console),
        redirect_stdout=False,  # stdout is the command's output, never the bar's
        redirect_stderr=False,
    )
    with bar:
        yield Counted(bar, bar.add_task(description, total=total))


def status(message: str) -> contextlib.AbstractContextManager[Any]:
    """A spinner on stderr for one step without a count; none off a terminal or with ``--quiet``."""
    return contextlib.nullcontext() if bars_off(err) else err.status(message)


# Every command that reads a file names it --input/-i and every command that writes one --output/-o; the
# names each command had before stay as aliases (--claims, --queries, --corpus, --pairs; --out, --run).
INPUT = ("--input", "-i")
OUTPUT = ("--output", "-o")


def one_of(names: Iterable[str]) -> str:
    """Registered names as help texts list them: ``a | b | c``."""
    return " | ".join(names)


def read_claims(path: Path, done: str = "checked") -> list[Any]:
    """The claims of a user's BEIR query file, read whole before anything loads, by the API's rules
    (texts of 1 to 2,000 characters, strict ISO 8601 dates). Rows that are not claims are named on
    stderr (file, line, problem) and skipped; a file with no claim left is an error giving the reasons
    (``done``: what the command would have done with them, for that message)."""
    from factscout.formats.beir import read_claims as read_beir_claims

    skipped: list[str] = []
    items = list(read_beir_claims(path, skipped=skipped, strict=True))
    if not items:
        reasons = "; ".join(skipped[:3]) + (f"; ... ({len(skipped)} rows in all)" if len(skipped) > 3 else "")
        raise InputError(f"no claim in {path} can be {done}" + (f": {reasons}" if reasons else " (it is empty)"))
    for line in skipped:
        err.print(f"skipped: {line}", highlight=False, soft_wrap=True)
    return items


def claim_text(value: str, what: str = "the claim") -> str:
    """A claim or query typed on the command line, by the API's rules (:func:`factscout.inputs.clean_claim`)."""
    from factscout.inputs import clean_claim

    try:
        return clean_claim(value)
    except ValueError as exc:
        raise InputError(f"{what} {exc}") from None


def output_path(path: Path | None, flag: str) -> Path | None:
    """A file to write: its folder must exist and it must not be a folder (checked before any work)."""
    if path is None:
        return None
    if path.is_dir():
        raise InputError(f"{flag} {path} is a folder: give a file name")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {path}: folder {path.parent} does not exist")
    return path


def input_path(path: Path | None, flag: str) -> Path | None:
    """A file to read: it must exist and be a file (checked before any work)."""
    if path is not None and not path.is_file():
        raise InputError(f"{flag} {path}: " + ("is a folder, not a file" if path.is_dir() else "no such file"))
    return path


def _register_ray(value: str | None) -> str | None:
    """``--ray`` given: import factscout.scale, which registers the Ray backends."""
    if value is not None:
        import factscout.scale  # noqa: F401

    return value


RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="run on Ray: 'auto' (RAY_ADDRESS, the cluster started here, or a local one) or ADDRESS",
        callback=_register_ray,
    ),
]


def parse_day(value: str | None, flag: str) -> dt.date | None:
    """A day given on the command line: strict ISO 8601 ``YYYY-MM-DD`` (``06/01/2019`` is refused, never guessed)."""
    from factscout.inputs import parse_iso_day

    if value is None:
        return None
    try:
        day = parse_iso_day(value.strip())
    except ValueError as exc:
        raise InputError(f"{flag} {exc}") from None
    if day is None:
        raise InputError(f"{flag} is empty: give a day as YYYY-MM-DD")
    return day


def print_report(report: Any, store: Any = None) -> None:
    """A check report on the terminal, every section the JSON and the page have
    (:func:`factscout.render.terminal.print_report`)."""
    from factscout.render.terminal import print_report as render

    render(report, out, store)
