"""What a flow's code shares outside its state: module globals and attributes of the flow.

The search records accesses to the state (and sync objects) only. Two methods that race on
a module global (``LOG.append``) or on an attribute of the flow object that is not state
(``self.calls.append``) are therefore never interleaved there, and a search that ran out of
schedules would say "complete" without the orders a seed can show. This reads the
methods' bytecode instead, so that such a search says what it could not see
(:attr:`Exploration.caveat`, naming the object) rather than being plainly complete.

The reading is conservative where it can be cheaply: loading a global that holds a
mutable object and calling a mutating method on it, storing into it or assigning it
counts as a write; reading it counts as a touch (a helper's touches count for the methods
that call it through ``self``). An object is reported when two methods that touch it, one
writing, ran at the same time in a run of the search (their trace's start and end
overlap): a start method that sets ``self.guard = Lock()`` before its listeners run is
no race.
"""

from __future__ import annotations

import dis
import functools
import inspect
import itertools
import types
from typing import Any

__all__ = ["mutated_after", "outside_state", "overlapping", "shared_outside"]

_MUTATORS = frozenset(
    {
        "append",
        "appendleft",
        "extend",
        "extendleft",
        "insert",
        "pop",
        "popleft",
        "popitem",
        "remove",
        "clear",
        "update",
        "add",
        "discard",
        "setdefault",
        "sort",
        "reverse",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
        "__iadd__",
    }
)
_STORES = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR"})
_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), tuple, frozenset, range)
_NOT_DATA = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)
#: Objects that order threads (recorded by the scheduler as sync objects) or only log.
_QUIET_MODULES = ("threading", "_thread", "asyncio", "logging", "queue", "multiprocessing")


def _is_data(value: Any) -> bool:
    """A module global that can be changed in place (not a constant, function or class)."""
    if isinstance(value, _IMMUTABLE + _NOT_DATA) or callable(value):
        return False
    module = type(value).__module__ or ""
    return module.split(".")[0] not in _QUIET_MODULES


def _codes(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_codes(const))
    return found


def mutated_after(instructions: list[dis.Instruction], i: int) -> bool:
    """Whether the object loaded by instruction ``i`` is changed in place right after
    (a mutating method called on it, an item or attribute stored into it)."""
    for nxt in instructions[i + 1 : i + 4]:
        if nxt.opname in ("LOAD_METHOD", "LOAD_ATTR") and nxt.argval in _MUTATORS:
            return True
        if nxt.opname in _STORES:
            return True
        if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            return False  # reaching further in: a read of a part of it
    return False


def _touches(func: Any, ignore: frozenset[str], methods: frozenset[str]) -> dict[str, bool]:
    """``{"module global NAME" | "self.NAME": writes}`` for what ``func`` touches."""
    found: dict[str, bool] = {}
    globals_ = getattr(func, "__globals__", {})
    module = globals_.get("__name__", "?")

    def note(name: str, write: bool) -> None:
        found[name] = found.get(name, False) or write

    for code in _codes(func.__code__):
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            prev = instructions[i - 1] if i else None
            if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                note(f"module global {module}.{ins.argval}", True)
            elif ins.opname == "LOAD_GLOBAL" and _is_data(globals_.get(ins.argval)):
                note(f"module global {module}.{ins.argval}", mutated_after(instructions, i))
            elif ins.argval in ignore or ins.argval in methods:
                continue
            elif ins.opname in ("STORE_ATTR", "DELETE_ATTR") and _after_self(instructions, i):
                note(f"flow attribute self.{ins.argval}", True)
            elif (
                ins.opname == "LOAD_ATTR"
                and prev is not None
                and (prev.opname == "LOAD_FAST" and prev.argval == "self")
            ):
                note(f"flow attribute self.{ins.argval}", mutated_after(instructions, i))
    return found


def _after_self(instructions: list[dis.Instruction], i: int) -> bool:
    """Whether the STORE_ATTR at ``i`` stores into ``self`` (``self.x = v``, ``self.x += v``)."""
    prev = instructions[i - 1] if i else None
    if prev is not None and prev.opname == "LOAD_FAST" and prev.argval == "self":
        return True
    name = instructions[i].argval
    return any(
        a.opname == "LOAD_FAST"
        and a.argval == "self"
        and b.opname == "COPY"
        and c.opname == "LOAD_ATTR"
        and c.argval == name
        for a, b, c in zip(instructions, instructions[1:], instructions[2:], strict=False)
    )


@functools.lru_cache(maxsize=256)
def outside_state(cls: type, framework: tuple[str, ...]) -> tuple[tuple[str, dict[str, bool]], ...]:
    """What the methods of ``cls`` (not of its base classes from the ``framework``
    packages) touch outside the state: ``(object, {method: writes})`` for each object a
    method writes, a helper's touches counted for the methods that call it. Attributes
    the framework's classes define (the state among them) are the framework's."""
    functions: dict[str, Any] = {}
    ignored: set[str] = set()
    for klass in cls.__mro__:
        if (klass.__module__ or "").split(".")[0] in framework or klass is object:
            ignored.update(dir(klass))
            continue
        for name, value in vars(klass).items():
            if name in functions or name == "__init__":
                continue
            func = inspect.unwrap(value) if callable(value) else None
            if isinstance(func, types.FunctionType):
                functions[name] = func
    names = frozenset(functions)
    ignore = frozenset(ignored)
    touches = {name: _touches(func, ignore, names) for name, func in functions.items()}
    calls = {name: _calls(func, names) for name, func in functions.items()}
    changed = True
    while changed:  # a method touches what the helpers it calls touch
        changed = False
        for name, callees in calls.items():
            for callee in callees:
                for what, write in touches[callee].items():
                    if touches[name].get(what, False) < write or what not in touches[name]:
                        touches[name][what] = touches[name].get(what, False) or write
                        changed = True
    by_object: dict[str, dict[str, bool]] = {}
    for name, found in sorted(touches.items()):
        for what, write in found.items():
            by_object.setdefault(what, {})[name] = write
    return tuple((what, users) for what, users in sorted(by_object.items()) if any(users.values()))


def _calls(func: Any, names: frozenset[str]) -> set[str]:
    """The functions of the class ``func`` calls through ``self``."""
    found: set[str] = set()
    for code in _codes(func.__code__):
        instructions = list(dis.get_instructions(code))
        for prev, ins in itertools.pairwise(instructions):
            if (
                prev.opname == "LOAD_FAST"
                and prev.argval == "self"
                and ins.opname in ("LOAD_ATTR", "LOAD_METHOD")
                and ins.argval in names
            ):
                found.add(ins.argval)
    return found


def overlapping(events: list[tuple[str, str]]) -> set[frozenset[str]]:
    """The pairs of methods that ran at the same time in a run, from its trace's
    ``(kind, method)`` events (``started``, then ``finished``/``failed``/``paused``)."""
    running: dict[str, int] = {}
    found: set[frozenset[str]] = set()
    for kind, name in events:
        if kind == "started":
            found.update(frozenset((name, other)) for other in running if other != name)
            running[name] = running.get(name, 0) + 1
        elif running.get(name):
            running[name] -= 1
            if not running[name]:
                del running[name]
    return found


def shared_outside(
    cls: type, framework: tuple[str, ...], together: set[frozenset[str]]
) -> list[str]:
    """The caveats for a run of ``cls`` whose methods in ``together`` ran at the same time:
    one per object two of them touch, one writing, naming the object and them."""
    found: list[str] = []
    for what, users in outside_state(cls, framework):
        pairs = sorted(
            tuple(sorted(pair))
            for pair in together
            if pair <= users.keys() and any(users[m] for m in pair)
        )
        if pairs:
            a, b = pairs[0]
            found.append(
                f"{what} is shared by {cls.__name__}.{a} and {cls.__name__}.{b} (which ran "
                "at the same time; one writes it) but is not state: its accesses are not "
                "recorded, so "
                "their orders there are not explored (keep it in flow.state to have them "
                "explored)."
            )
    return found
