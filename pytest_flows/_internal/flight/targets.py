"""Turning a record's ``module:qual.name`` into the object it names, safely.

A record is data: the flow (or workflow factory, or module-level graph) it names is
imported only from a
module the user allowed, and the dotted name after ``:`` is followed without running
anything (no property, no module ``__getattr__``, no call). The object reached must
itself be defined in an allowed module: ``app:other.function`` reaches
``other.function`` through ``app``'s namespace, and is refused unless ``other`` is
allowed too. What a record is replayed with (:func:`replay_target`) is here too: the
export CLI and the ``--flows-replay`` suite both ask.
"""

from __future__ import annotations

import importlib
import inspect
import keyword
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.contract.registry import recorder_part

if TYPE_CHECKING:
    from pytest_flows._internal.flight.format import Record

__all__ = [
    "TargetError",
    "built_by_factory",
    "check_target",
    "in_allowed",
    "replay_target",
    "resolve",
]

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class TargetError(ValueError):
    """A target that cannot, or may not, be resolved."""


def in_allowed(module: str, allow: Sequence[str]) -> bool:
    """Whether ``module`` is one of ``allow`` or inside one of those packages."""
    return any(module == name or module.startswith(name + ".") for name in allow)


def _module_of(obj: Any) -> str | None:
    if inspect.ismodule(obj):
        return obj.__name__
    module = getattr(obj, "__module__", None) if inspect.isclass(obj) or callable(obj) else None
    return module if isinstance(module, str) else None


def _instance_of_a_module(obj: Any, holder: Any) -> bool:
    """``obj`` is an object (not a class, function or module) a module binds by name."""
    return (
        inspect.ismodule(holder)
        and not inspect.ismodule(obj)
        and not inspect.isclass(obj)
        and hasattr(type(obj), "__module__")
    )


def check_target(target: str) -> tuple[str, str]:
    """``target``'s module and dotted name, if both are Python names (else TargetError)."""
    module, _, qualname = target.partition(":")
    names = [*module.split("."), *qualname.split(".")]
    bad = any(keyword.iskeyword(name) for name in names)
    if bad or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(qualname):
        raise TargetError(
            f"{target!r} does not name an object as 'package.module:ClassName' (dotted "
            "Python names on both sides of one ':')"
        )
    return module, qualname


def resolve(target: str, allow: Sequence[str] | None = None) -> Any:
    """The object ``target`` (``package.module:Qual.Name``) names; with ``allow``, only
    if both its module and the module the object is defined in are allowed."""
    module, qualname = check_target(target)
    if allow is not None and not in_allowed(module, allow):
        raise TargetError(f"{target!r}: module {module} is not allowed")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise TargetError(f"{target!r}: cannot import {module} ({exc})") from None
    holder = obj  # what the object reached is an attribute of
    for part in qualname.split("."):
        holder = obj
        try:
            # Statically: a property, a descriptor or a module __getattr__ never runs.
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            raise TargetError(f"{target!r}: {module} has no {qualname}") from None
        if isinstance(obj, staticmethod | classmethod):
            raise TargetError(f"{target!r}: {part} is not a class, function or module")
    defined_in = _module_of(obj)
    if defined_in is None and _instance_of_a_module(obj, holder):
        # An object a module binds by name (a compiled LangGraph graph), not one reached
        # through a class (a property): built where it is held.
        defined_in = holder.__name__
    if defined_in is None:
        raise TargetError(f"{target!r} names a {type(obj).__name__}, not a class or function")
    if allow is not None and not in_allowed(defined_in, allow):
        raise TargetError(
            f"{target!r} reaches {defined_in}.{getattr(obj, '__qualname__', qualname)}, "
            f"defined in {defined_in}, which is not allowed"
        )
    if defined_in not in sys.modules:
        raise TargetError(f"{target!r}: {defined_in} is not an imported module")
    return obj


def built_by_factory(record: Record) -> bool:
    """Whether ``record``'s framework replays from a function that builds the run's
    object (its recorder part's ``target == "factory"``) rather than from a class."""
    part = recorder_part(record.framework)
    return part is not None and part.target == "factory"


def replay_target(record: Record) -> str:
    """What a test replays ``record`` with, ``module:name``: the flow class, or (for a
    framework whose recorder part replays from a ``"factory"``) the function that
    builds the run's object (ValueError if unknown)."""
    if not built_by_factory(record):
        return record.target
    factory = record.header.get("factory")
    if isinstance(factory, str) and ":" in factory:
        return factory
    workflow = record.header.get("workflow") or "the workflow"
    raise ValueError(
        f"{record.path.name} does not name the function that builds {workflow!r} (it was "
        "not built by a module-level function taking no arguments), so it cannot be "
        "rebuilt from the record. Record with record_flows(..., factories={"
        f"{workflow!r}: 'myapp.workflows:build_workflow'}}), or replay it in a test: "
        "flows.replay(path, build_workflow())."
    )
