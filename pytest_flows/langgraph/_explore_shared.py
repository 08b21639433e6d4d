"""What LangGraph nodes share outside the graph's state and store: a caveat, not silence.

The search records the store's accesses and the state a node mutates in place. A list a
node appends to that lives in a module global or in a closure (``LOG.append(...)``
where ``LOG = []`` sits beside the graph, ``seen.append(...)`` for a ``seen`` of the
function that built the nodes), or a closure variable a node rebinds (``nonlocal
count; count += 1``), is not recorded: two parallel nodes racing there are never
interleaved there, and a search could say complete without orders a seed shows. So, as
for crewAI's module globals (``outside_state``), each node's bytecode is read for such
objects, and when two nodes of one superstep touch one of them, one writing, the
exploration is not complete and its caveat names the object and both nodes.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
import weakref
from typing import Any

from pytest_flows.adapters import mutated_after

__all__ = ["node_function", "shared_touches", "superstep_touched"]

_DATA = (list, dict, set, bytearray)
_QUIET = ("threading", "_thread", "asyncio", "logging", "queue", "langgraph", "langchain_core")


def _is_data(value: Any) -> bool:
    """A container a node can change in place (the store, locks and loggers are not)."""
    import collections

    if not isinstance(value, (*_DATA, collections.deque)):
        return False
    return (type(value).__module__ or "").split(".")[0] not in _QUIET


def node_function(task: Any) -> Any:
    """The user's function a LangGraph task runs (None: none found)."""
    proc = getattr(task, "proc", None)
    for step in (*getattr(proc, "steps", ()), proc):
        func = getattr(step, "func", None) or getattr(step, "afunc", None)
        while isinstance(func, functools.partial):
            func = func.args[-1] if func.args and callable(func.args[-1]) else func.func
        func = inspect.unwrap(func) if callable(func) else None
        if isinstance(func, types.FunctionType):
            return func
    return None


@functools.lru_cache(maxsize=512)
def _code_touches(func: types.FunctionType) -> tuple[tuple[int, str, bool], ...]:
    """``(identity, name, writes)`` of what ``func`` touches outside its arguments."""
    found: dict[int, tuple[str, bool]] = {}
    module = func.__globals__.get("__name__", "?")
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=False))

    def note(key: int, name: str, write: bool) -> None:
        was = found.get(key, (name, False))
        found[key] = (name, was[1] or write)

    codes = [func.__code__]
    for code in codes:
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            name = str(ins.argval)
            if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                note(hash((module, name)), f"module global {module}.{name}", True)
            elif ins.opname == "LOAD_GLOBAL" and _is_data(func.__globals__.get(name)):
                value = func.__globals__[name]
                note(id(value), f"module global {module}.{name}", mutated_after(instructions, i))
            elif code is func.__code__ and name in cells:
                cell = cells[name]
                label = f"closure variable {name!r} of {func.__qualname__}"
                if ins.opname == "STORE_DEREF":
                    note(id(cell), label, True)
                elif ins.opname == "LOAD_DEREF":
                    try:
                        value = cell.cell_contents
                    except ValueError:  # not set yet
                        continue
                    if _is_data(value):
                        note(id(value), label, mutated_after(instructions, i))
                    elif any(n.opname == "STORE_DEREF" and n.argval == name for n in instructions):
                        note(id(cell), label, False)
    return tuple((key, name, write) for key, (name, write) in found.items())


def shared_touches(func: Any) -> tuple[tuple[int, str, bool], ...]:
    if not isinstance(func, types.FunctionType):
        return ()
    try:
        return _code_touches(func)
    except (TypeError, ValueError):  # code the reading cannot take apart
        return ()


#: Per run (its chooser): superstep -> object -> [(node, writes, name)]
_seen: weakref.WeakKeyDictionary[Any, dict[Any, dict[int, list[tuple[str, bool, str]]]]] = (
    weakref.WeakKeyDictionary()
)


def superstep_touched(task: Any) -> None:
    """Task ``task`` starts: note what its node shares outside the graph, and give the
    run a caveat when a sibling of its superstep touched the same object, one writing."""
    from pytest_flows.adapters import current_participant, note_caveat

    me = current_participant()
    chooser = None if me is None else me.sched.chooser
    if chooser is None:
        return
    touches = shared_touches(node_function(task))
    if not touches:
        return
    metadata = (getattr(task, "config", None) or {}).get("metadata") or {}
    ns = str(metadata.get("langgraph_checkpoint_ns", ""))
    superstep = (ns.rpartition("|")[0], metadata.get("langgraph_step"))
    node = str(getattr(task, "name", "?"))
    by_object = _seen.setdefault(chooser, {}).setdefault(superstep, {})
    for key, name, write in touches:
        users = by_object.setdefault(key, [])
        for other, other_writes, _ in users:
            if other != node and (write or other_writes):
                a, b = sorted((node, other))
                note_caveat(
                    f"{name} is shared by LangGraph nodes {a!r} and {b!r} (which ran in one "
                    "superstep; one writes it) but is neither the graph's state nor its "
                    "store: its accesses are not recorded, so their orders there are not "
                    "explored (return it as a state update, or keep it in the store, to "
                    "have them explored)."
                )
        users.append((node, write, name))
