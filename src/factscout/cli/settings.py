"""The check options of ``factscout check`` and ``factscout serve``, generated from the fields of
:class:`~factscout.settings.CheckSettings` (help, flags and defaults live there, once).

:func:`with_settings` gives a command one option per field (less those it excludes) and calls it
with ``settings``: the values given, by field name. A new ``CheckSettings`` field is therefore a
new option of both commands, and ``check --server`` refuses it when it differs from its default.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, Field, fields
from typing import Annotated, Any

import typer
from rich.markup import escape

from factscout.cli.common import one_of
from factscout.settings import PER_REQUEST, CheckSettings


def _option(f: Field[Any], hint: Any) -> inspect.Parameter:
    meta = f.metadata
    flags = meta.get("flags") or (f"--{f.name.replace('_', '-')}",)
    help = meta["help"].format(choices=one_of(meta["choices"])) if meta.get("choices") else meta["help"]
    # rich would read "[default: tuned]" as markup and print nothing of it
    opt = typer.Option(*flags, help=escape(help), metavar=meta.get("metavar"))
    return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=Annotated[hint, opt])


def settings_fields(exclude: Iterable[str] = ()) -> list[Field[Any]]:
    """The fields of :class:`CheckSettings` a command offers as options."""
    skip = set(exclude)
    return [f for f in fields(CheckSettings) if f.name not in skip]


def defaults() -> dict[str, Any]:
    """Each setting's default."""
    return {f.name: f.default for f in fields(CheckSettings) if f.default is not MISSING}


def server_decides(values: Mapping[str, Any]) -> list[str]:
    """The flags of the settings in ``values`` that differ from their defaults and that a server
    decides (all but :data:`~factscout.settings.PER_REQUEST`): ``check --server`` refuses them."""
    known = {f.name: f for f in fields(CheckSettings)}
    given = [n for n, v in values.items() if n not in PER_REQUEST and v != known[n].default]
    return [(known[n].metadata.get("flags") or (f"--{n.replace('_', '-')}",))[0].split("/")[0] for n in given]


def with_settings(*, exclude: Iterable[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command ``fn(..., settings: dict)``: typer sees ``fn``'s own parameters followed
    by one option per setting; ``fn`` gets the settings' values in ``settings``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)
        settings_hints = typing.get_type_hints(CheckSettings)
        params = [p.replace(annotation=hints[p.name]) for p in own.parameters.values() if p.name != "settings"]
        chosen = settings_fields(exclude)
        params += [_option(f, settings_hints[f.name]) for f in chosen]
        names = [f.name for f in chosen]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            settings = {name: kwargs.pop(name) for name in names}
            return fn(**kwargs, settings=settings)

        command.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the signature above, not fn's
        return command

    return wrap
