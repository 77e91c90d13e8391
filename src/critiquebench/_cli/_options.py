"""Command-line options generated from a pydantic model's fields (``RunConfig``).

One option per field: ``--field-name`` (plus aliases declared on the field as
``json_schema_extra={"cli_aliases": [...]}``), its help from the field's
description and constraints, its default from the field. Values reach the model as
typed (strings), so types, ranges, choices and cross-field rules are checked by
the model alone and every error names the option the user typed. Conventions:
``none`` sets an optional field to None; a sequence is comma-separated; a bool is a
``--x/--no-x`` flag.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import typer
import typer.core
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

NONE = "none"
"""What an optional field's option takes to mean None (no budget, no limit, ...)."""

_METAVARS: dict[type, str] = {int: "INTEGER", float: "FLOAT", Path: "PATH", str: "TEXT"}


@dataclass(frozen=True)
class FieldOption:
    """How one model field appears on the command line."""

    field: str
    names: tuple[str, ...]
    help: str
    metavar: str
    default_text: str | None
    """The default as typed on the command line; None when computed at run time."""
    flag: bool
    sequence: bool
    optional: bool
    repeatable: bool = False
    """A sequence the option may be given several times for (each may still hold commas)."""


def _without_none(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _metavar(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "[" + "|".join(str(choice) for choice in get_args(annotation)) + "]"
    return _METAVARS.get(annotation, "TEXT")


def _cli_text(value: object) -> str:
    if value is None:
        return NONE
    if isinstance(value, tuple | list):
        return ",".join(_cli_text(item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _range_text(info: FieldInfo) -> str:
    """Click's notation for a field's bounds: ``[x>=1]``, ``[0<=x<=20]``, ``[0<x<=1]``."""
    lower: tuple[str, object] | None = None
    upper: tuple[str, object] | None = None
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            lower = ("<=", item.ge)
        elif isinstance(item, annotated_types.Gt):
            lower = ("<", item.gt)
        elif isinstance(item, annotated_types.Le):
            upper = ("<=", item.le)
        elif isinstance(item, annotated_types.Lt):
            upper = ("<", item.lt)
    if lower and upper:
        return f"  [{lower[1]}{lower[0]}x{upper[0]}{upper[1]}]"
    if lower:
        return f"  [x{lower[0].replace('<', '>')}{lower[1]}]"
    if upper:
        return f"  [x{upper[0]}{upper[1]}]"
    return ""


def field_option(name: str, info: FieldInfo) -> FieldOption:
    """The option of one field (see the module docstring for the conventions)."""
    annotation, optional = _without_none(info.annotation)
    sequence = get_origin(annotation) in (tuple, list)
    flag = annotation is bool
    metavar = _metavar(get_args(annotation)[0]) if sequence else _metavar(annotation)
    if sequence:
        metavar = f"{metavar},..."
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    declared = extra.get("cli_aliases")
    aliases = [str(alias) for alias in declared] if isinstance(declared, list) else []
    dashed = name.replace("_", "-")
    names = (f"--{dashed}/--no-{dashed}",) if flag else (f"--{dashed}", *aliases)
    factory = info.default is PydanticUndefined
    return FieldOption(
        field=name,
        names=names,
        help=(info.description or "") + _range_text(info),
        metavar=metavar,
        default_text=None if factory else _cli_text(info.default),
        flag=flag,
        sequence=sequence,
        optional=optional,
        repeatable=sequence and bool(extra.get("cli_repeatable")),
    )


def model_options(model: type[BaseModel]) -> list[FieldOption]:
    """One option per field of ``model``, in field order."""
    return [field_option(name, info) for name, info in model.model_fields.items()]


def typer_option(option: FieldOption) -> Any:
    """The ``typer.Option`` of a field's option, for ``Annotated[str | None, ...]``
    (``bool`` for a flag) with ``option_default(option)`` as default."""
    return typer.Option(
        *option.names,
        help=option.help,
        metavar=None if option.flag else option.metavar,
        show_default=option.default_text is not None,
    )


def option_default(option: FieldOption) -> str | bool | None:
    """The option's default as typed (None: computed by the field when the run starts)."""
    if option.flag:
        return option.default_text == "True"
    return option.default_text


def typer_parameter(option: FieldOption) -> inspect.Parameter:
    """A keyword parameter that Typer turns into the option."""
    info = typer_option(option)
    annotation: Any = Annotated[bool, info] if option.flag else Annotated[str | None, info]
    default = option_default(option)
    if option.repeatable:
        annotation, default = Annotated[list[str] | None, info], None
    return inspect.Parameter(
        option.field,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=annotation,
    )


def keyword_parameter(
    name: str, annotation: Any, default: object = inspect.Parameter.empty
) -> inspect.Parameter:
    """A keyword-only parameter (for the options a command adds to the generated ones)."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def with_parameters(
    function: Callable[..., None], parameters: Sequence[inspect.Parameter]
) -> Callable[..., None]:
    """``function`` (which takes ``**values``) presenting ``parameters`` to Typer."""
    signature = inspect.Signature(list(parameters))
    target: Any = function
    target.__signature__ = signature
    target.__annotations__ = {p.name: p.annotation for p in parameters}
    return function


def given_values(options: Sequence[FieldOption], raw: Mapping[str, object]) -> dict[str, Any]:
    """The values in ``raw`` (None: not given), converted by the conventions: ``none``
    is None for an optional field, a sequence is split at commas."""
    values: dict[str, Any] = {}
    for option in options:
        value = raw.get(option.field)
        if isinstance(value, list | tuple) and option.repeatable:
            # each use of a repeatable option may itself list several, comma-separated
            value = [part.strip() for item in value for part in str(item).split(",")]
            value = [part for part in value if part] or None
        if value is None:
            continue
        if isinstance(value, str) and option.optional and value.strip().lower() == NONE:
            value = None
        elif isinstance(value, str) and option.sequence:
            value = [part.strip() for part in value.split(",") if part.strip()]
        values[option.field] = value
    return values


def describe_errors(
    error: ValidationError, typed: Mapping[str, str], raw: Mapping[str, object]
) -> str:
    """One line naming, for each error, the option as typed and the value given."""
    parts = []
    for item in error.errors():
        message = str(item["msg"]).removeprefix("Value error, ")
        field = str(item["loc"][0]) if item["loc"] else ""
        if not field:
            parts.append(message)
            continue
        name = typed.get(field, "--" + field.replace("_", "-"))
        value = raw.get(field, item.get("input"))
        parts.append(f"{name} {_cli_text(value)}: {message}")
    return "; ".join(parts)


class TypedNamesCommand(typer.core.TyperCommand):
    """A command that remembers which spelling of each option the user typed
    (``ctx.meta["typed_options"]``), so an error names ``--rpm``, not its long form.

    Its help is Click's plain layout: Rich's option table cuts words longer than its
    description column (model specs, URLs, paths) with an ellipsis; Click wraps them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        typed: dict[str, str] = {}
        for arg in args:
            if arg == "--":
                break
            for param in self.params:
                for spelling in (*param.opts, *param.secondary_opts):
                    if param.name and (arg == spelling or arg.startswith(spelling + "=")):
                        typed[param.name] = spelling
        ctx.meta["typed_options"] = typed
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed
