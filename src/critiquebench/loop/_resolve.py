"""Finding an arm by what ``--arms`` says: a built-in name, an entry point, or a reference.

- ``B``: a built-in arm (``BUILTIN_ARMS``);
- ``mine``: an entry point named ``mine`` in the group ``critiquebench.arms`` of any
  installed package;
- ``mypkg.loops:my_arm`` or ``mine=mypkg.loops:my_arm``: an object in an importable
  module, named by the part before ``=`` (or by the whole reference).

The object found is an ``ArmSpec`` or a callable ``(case, provider) -> attempts``
(a user's own loop). Every failure is an ``ArmError`` naming the arm and the fix,
raised before any unit runs.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import re
import sys
from collections.abc import Sequence
from importlib import metadata

from critiquebench.loop._arms import BUILTIN_ARMS, ArmSpec, OwnLoop

ENTRY_POINT_GROUP = "critiquebench.arms"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
_REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


class ArmError(ValueError):
    """An arm that cannot be used; the message names it and says what to do."""


def arm_name(token: str) -> str:
    """The name an ``--arms`` entry gives its arm in the tables and reports."""
    name, _, reference = token.partition("=")
    return name.strip() if reference else token.strip()


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _entry_points_on(path: tuple[str, ...]) -> dict[str, metadata.EntryPoint]:
    # Scanning every installed package takes tens of milliseconds (~67 ms, dc22692), and
    # each unit looks its arm up again; what is installed changes only with the path searched.
    found = metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep for ep in found}


def available_arms() -> list[str]:
    """Built-in arms, then the names of installed entry points."""
    return [*BUILTIN_ARMS, *sorted(set(_entry_points()) - set(BUILTIN_ARMS))]


def check_token(token: str) -> None:
    """Refuse an ``--arms`` entry that cannot name an arm, without importing anything."""
    name, sep, reference = token.partition("=")
    if sep:
        if not _NAME.fullmatch(name):
            raise ArmError(
                f"arm {token!r}: the name before '=' must be a letter followed by up to 39 "
                "letters, digits, '_' or '-'"
            )
        if name in BUILTIN_ARMS:
            raise ArmError(f"arm {token!r}: {name} is a built-in arm; pick another name")
        token = reference
    if ":" in token:
        if not _REFERENCE.fullmatch(token):
            raise ArmError(f"arm {token!r}: a reference is MODULE:CALLABLE, e.g. mypkg.loops:run")
        return
    if sep or (token not in BUILTIN_ARMS and token not in _entry_points()):
        raise ArmError(
            f"unknown arm {token!r}; available: {', '.join(available_arms())}, or your own "
            f"loop as MODULE:CALLABLE (or NAME=MODULE:CALLABLE)"
        )


def resolve_arm(token: str) -> ArmSpec:
    """The spec of an ``--arms`` entry, importing a user's loop if it names one."""
    check_token(token)
    name = arm_name(token)
    reference = token.partition("=")[2] or token
    if ":" not in reference:
        if reference in BUILTIN_ARMS:
            return BUILTIN_ARMS[reference]
        entry = _entry_points()[reference]
        where = f"entry point {reference!r} ({entry.value}) of group {ENTRY_POINT_GROUP}"
        try:
            found = entry.load()
        except Exception as exc:
            raise ArmError(f"arm {name}: {where} cannot be loaded: {exc}") from exc
        return _as_spec(name, found, where)
    return _as_spec(name, _import(name, reference), reference)


def _import(name: str, reference: str) -> object:
    module_name, _, attribute = reference.partition(":")
    try:
        found: object = importlib.import_module(module_name)
    except Exception as exc:
        raise ArmError(
            f"arm {name}: module {module_name!r} cannot be imported ({type(exc).__name__}: "
            f"{exc}); is it installed or on PYTHONPATH?"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ArmError(f"arm {name}: {reference}: {module_name} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def _as_spec(name: str, found: object, where: str) -> ArmSpec:
    if isinstance(found, ArmSpec):
        if found.loop is not None:
            _check_signature(name, found.loop, where)
        return dataclasses.replace(found, name=name)
    if not callable(found):
        raise ArmError(
            f"arm {name}: {where} is a {type(found).__name__}, not callable; it must be an "
            "ArmSpec or a function (case, provider) -> list of code strings"
        )
    _check_signature(name, found, where)
    summary = (inspect.getdoc(found) or "").strip().splitlines()
    description = f"own loop {where}" + (f": {summary[0]}" if summary else "")
    return ArmSpec(name=name, description=description[:200], loop=found)


def _check_signature(name: str, loop: OwnLoop, where: str) -> None:
    try:
        signature = inspect.signature(loop)
    except (TypeError, ValueError):
        return  # a builtin or C callable: trust it, a wrong call fails its units loudly
    try:
        signature.bind(object(), object())
    except TypeError as exc:
        raise ArmError(
            f"arm {name}: {where} cannot be called as loop(case, provider): {exc}"
        ) from exc
    if signature.return_annotation in (str, "str"):
        raise ArmError(
            f"arm {name}: {where} is annotated to return str; return the list of attempts "
            "(code strings, first draft first)"
        )


def describe_arms(tokens: Sequence[str]) -> dict[str, str]:
    """Each arm's one-line description by name, for reports. An arm whose loop cannot be
    loaded where the report is built is described by its reference."""
    described: dict[str, str] = {}
    for token in tokens:
        try:
            described[arm_name(token)] = resolve_arm(token).description
        except ArmError:
            described[arm_name(token)] = f"own loop {token.partition('=')[2] or token}"
    return described
