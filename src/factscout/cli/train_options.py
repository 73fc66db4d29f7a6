"""``factscout train <model>`` commands generated from each trainer's config dataclass.

A trainer's command is built from the config dataclass its ``TRAINERS`` entry names (the one
that holds the trainer's defaults) and a :class:`CommandSpec`: the options in the order
``--help`` shows them and the body that runs the trainer. An option bound to a config field (:func:`setting`) takes its name, type, default and
help from that field (help from the field's ``metadata["help"]``); the command fills those
fields into the config and hands the body the finished config. An option bound to a field of
another dataclass (``of=``) takes its default, type and help from there and reaches the body as a
keyword argument, as do the options that are no config field (:func:`option`: paths, stages,
``--quick``), which carry their own default and help. ``override`` options default to None and
change the config only when given (their default depends on another option, e.g. ``--quick``).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import typing
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Annotated, Any

import typer

from factscout.cli.common import friendly


@dataclasses.dataclass(frozen=True, slots=True)
class Opt:
    """One option of a trainer command (build it with :func:`setting` or :func:`option`)."""

    name: str
    field: str | None = None
    of: type | None = None
    flags: tuple[str, ...] = ()
    type: Any = None
    default: Any = None
    help: str | None = None
    override: bool = False
    parse: Callable[[Any], Any] | None = None
    to_cli: Callable[[Any], Any] | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def sets_config(self) -> bool:
        return self.field is not None and self.of is None


def setting(
    field: str,
    *flags: str,
    name: str | None = None,
    of: type | None = None,
    type: Any = None,
    help: str | None = None,
    override: bool = False,
    parse: Callable[[Any], Any] | None = None,
    to_cli: Callable[[Any], Any] | None = None,
    **extra: Any,
) -> Opt:
    """An option bound to config field ``field`` (of the command's config, or of ``of``): its
    default is the field's (None with ``override``), its type the field's unless ``type`` is given
    (then ``parse`` turns the option's value into the field's and ``to_cli`` the default back)."""
    return Opt(name or field, field, of, flags, type, None, help, override, parse, to_cli, tuple(extra.items()))


def option(name: str, type: Any, default: Any, *flags: str, help: str | None = None, **extra: Any) -> Opt:
    """An option that is no config field (a path, a stage, ``--quick``); default ``...``: required."""
    return Opt(name, None, None, flags, type, default, help, extra=tuple(extra.items()))


@dataclasses.dataclass(frozen=True, slots=True)
class CommandSpec:
    """How ``factscout train <name>`` is built besides its config dataclass: its options, the body
    ``run(config, **other_options)`` and the help line; ``base(other_options)`` is the config the
    given options are filled into (default: ``config()``)."""

    options: tuple[Opt, ...]
    run: Callable[..., None]
    help: str
    base: Callable[[Mapping[str, Any]], Any] | None = None


def comma_tuple(text: str) -> tuple[str, ...]:
    """``"a, b,,c"`` -> ``("a", "b", "c")``."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _field_of(cls: type, name: str) -> tuple[dataclasses.Field[Any], Any]:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if name not in fields:
        raise TypeError(f"{cls.__name__} has no field {name!r}")
    return fields[name], typing.get_type_hints(cls)[name]


def field_default(cls: type, name: str) -> Any:
    """The default of field ``name`` of dataclass ``cls``."""
    f, _ = _field_of(cls, name)
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    raise TypeError(f"{cls.__name__}.{name} has no default")


def resolved(opt: Opt, config: type | None) -> tuple[Any, Any, str | None]:
    """``(type, default, help)`` of an option as its command shows it."""
    if opt.field is None:
        return opt.type, opt.default, opt.help
    cls = opt.of or config
    if cls is None:
        raise TypeError(f"option {opt.name} names field {opt.field!r} of a command without a config")
    f, hint = _field_of(cls, opt.field)
    cli_type = opt.type if opt.type is not None else hint
    help_text = opt.help if opt.help is not None else f.metadata.get("help")
    if opt.override:
        return cli_type | None, None, help_text
    default = field_default(cls, opt.field)
    return cli_type, opt.to_cli(default) if opt.to_cli else default, help_text


def _parameter(opt: Opt, config: type | None) -> inspect.Parameter:
    cli_type, default, help_text = resolved(opt, config)
    info = typer.Option(*opt.flags, help=help_text, **dict(opt.extra))
    default = inspect.Parameter.empty if default is ... else default
    return inspect.Parameter(
        opt.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[cli_type, info]
    )


def quick_or_full(module: str) -> Callable[[Mapping[str, Any]], Any]:
    """The base config of a trainer with a ``--quick`` smoke run: its ``QUICK`` or its default
    ``TrainConfig()`` (``module`` is imported when the command runs)."""

    def base(given: Mapping[str, Any]) -> Any:
        trainer = import_module(module)
        return trainer.QUICK if given["quick"] else trainer.TrainConfig()

    return base


def add_command(app: typer.Typer, name: str, spec: CommandSpec, config: type | None) -> None:
    """Register ``factscout train <name>`` on ``app``, built from its ``config`` dataclass and ``spec``."""
    parameters = [_parameter(opt, config) for opt in spec.options]

    def command(**given: Any) -> None:
        fields: dict[str, Any] = {}
        others: dict[str, Any] = {}
        for opt in spec.options:
            value = given[opt.name]
            if opt.parse is not None and value is not None:
                value = opt.parse(value)
            if opt.sets_config and opt.parse is None and isinstance(value, enum.Enum):
                value = value.value
            if not opt.sets_config:
                others[opt.name] = value
            elif not (opt.override and value is None):
                fields[typing.cast(str, opt.field)] = value
        if config is None:
            spec.run(None, **others)
            return
        start = spec.base(others) if spec.base is not None else config()
        spec.run(dataclasses.replace(start, **fields), **others)

    command.__name__ = name.replace("-", "_")
    command.__doc__ = spec.run.__doc__
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    app.command(name, help=spec.help)(friendly(command))
