"""Which state fields each flow method reads and writes, while a schedule is explored.

crewai hands parallel listeners the one shared ``flow.state``; while a schedule is
explored or replayed, user code reading ``self.state`` gets a thin view that tells
the schedule (:func:`pytest_flows._internal.runtime.participants.record_access`) about every
field it reads or writes. crewai's own reads get the real object, so persistence, events
and ``model_dump`` see nothing new. A read of a field holding a container (list,
dict, set, nested model) counts as a write too: the caller may mutate it in place.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from pytest_flows.adapters import current_participant as current
from pytest_flows.adapters import record_access, running_task, track_container

__all__ = ["StateView", "observed", "user_frame"]

# Installed packages only: a user's own "tests/crewai/" folder is user code.
_INTERNAL = (
    "-packages/crewai/",
    "/pytest_flows/",
    "-packages/pydantic/",
    "/asyncio/",
    "/concurrent/",
)
_MUTABLE = (list, dict, set, bytearray)
_DICT_READERS = frozenset({"keys", "values", "items", "copy", "__len__", "__iter__"})
#: pydantic's methods of a model that only read it (anything else may write it).
_MODEL_READERS = frozenset(
    {
        "model_copy",
        "model_dump",
        "model_dump_json",
        "copy",
        "dict",
        "json",
        "__repr__",
        "__str__",
        "__eq__",
        "__iter__",
        "__copy__",
        "__deepcopy__",
        "__getstate__",
        "model_json_schema",
    }
)
_SCALARS = (str, int, float, bool, bytes, type(None))


def _flat(value: Any) -> bool:
    """Whether a list, set or bytearray holds only immutable scalars (or tuples of them):
    comparing a shallow copy then shows every change made to it."""
    if isinstance(value, bytearray):
        return True
    return all(
        isinstance(item, _SCALARS)
        or (isinstance(item, tuple) and all(isinstance(x, _SCALARS) for x in item))
        for item in value
    )


def _snapshot(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, bytearray):
        return bytes(value)
    return set(value)


def user_frame(depth: int = 2) -> Any:
    """The innermost frame outside crewai, pydantic and the harness (None if there is none)."""
    frame: Any = sys._getframe(depth)
    while frame is not None and any(part in frame.f_code.co_filename for part in _INTERNAL):
        frame = frame.f_back
    return frame


def _where(frame: Any) -> str:
    name = frame.f_code.co_filename.rsplit("/", 1)[-1]
    return f"{name}:{frame.f_lineno}"


def _method_of(flow: Any, frame: Any) -> str:
    methods = getattr(flow, "_methods", {})
    while frame is not None:
        if frame.f_code.co_name in methods and frame.f_locals.get("self") is flow:
            return str(frame.f_code.co_name)
        frame = frame.f_back
    return ""


def observed(flow: Any, state: Any) -> Any:
    """``state`` itself for crewai's own reads; a recording view for user code while a
    schedule is explored."""
    me = current()
    if me is None or me.sched.chooser is None:
        return state
    frame: Any = sys._getframe(2)  # whoever read flow.state
    if any(part in frame.f_code.co_filename for part in _INTERNAL):
        return state
    method = _method_of(flow, frame)
    if method:
        me.sched.chooser.name_method(me.seq, method, task=running_task(me), loop=me.is_loop)
    return StateView(state, _where(frame))


def _mutable(value: Any) -> bool:
    return isinstance(value, _MUTABLE) or hasattr(value, "model_fields")


def _nested(value: Any) -> bool:
    """A dict or model inside the state: it gets a view of its own, so its keys and
    fields are recorded one by one (``state.cfg.retries``), like the state's own."""
    return isinstance(value, dict) or hasattr(value, "model_fields")


class StateView:
    """Forwards to the flow's state (or a dict or model inside it), recording reads and
    writes of each field or key under its path (``state.n``, ``state.cfg.retries``)."""

    __slots__ = ("_flows_path", "_flows_state", "_flows_where")

    def __init__(self, state: Any, where: str, path: str = "state") -> None:
        object.__setattr__(self, "_flows_state", state)
        object.__setattr__(self, "_flows_where", where)
        object.__setattr__(self, "_flows_path", path)

    def _note(self, key: str, *, write: bool, value: Any = None) -> None:
        if not write and _nested(value):
            return  # reaching into a dict or model: its view records what is done there
        where = self._flows_where
        frame = user_frame(3)
        if frame is not None:
            where = _where(frame)
        path = f"{self._flows_path}.{key}" if key else self._flows_path
        if not write and _mutable(value) and not _nested(value):
            # The caller may keep the list or set and mutate it later (after a sleep):
            # one of scalars read on a pool thread is watched, its change a write when
            # it happens; any other may change inside an element (or, on the event
            # loop, among other tasks' steps), so reading it counts as writing it.
            write = not (_flat(value) and track_container(path, value, _snapshot, where))
        record_access(path, write=write, where=where)

    def _wrap(self, key: str, value: Any) -> Any:
        if _nested(value):
            return StateView(value, self._flows_where, f"{self._flows_path}.{key}")
        return value

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._flows_state, name)
        if not callable(value) or _mutable(value):
            self._note(name, write=False, value=value)
            return self._wrap(name, value)
        if isinstance(self._flows_state, dict):
            # keys(), items(), copy() read the whole dict; update(), pop() write it.
            self._note("", write=name not in _DICT_READERS)
        elif hasattr(self._flows_state, "model_fields"):
            # model_copy(), model_dump() read the whole model; its own methods (and
            # pydantic's others) may also write it.
            writes = name not in _MODEL_READERS
            self._note("", write=writes)
            if writes and not inspect.iscoroutinefunction(value):
                return _written_again_on_return(value, self._note)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._note(name, write=True)
        setattr(self._flows_state, name, _plain(value))

    def __getitem__(self, key: Any) -> Any:
        value = self._flows_state[key]
        self._note(str(key), write=False, value=value)
        return self._wrap(str(key), value)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._note(str(key), write=True)
        self._flows_state[key] = _plain(value)

    def __delitem__(self, key: Any) -> None:
        self._note(str(key), write=True)
        del self._flows_state[key]

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._flows_state.get(key, default)
        self._note(str(key), write=False, value=value)
        return self._wrap(str(key), value)

    def __contains__(self, key: Any) -> bool:
        self._note(str(key), write=False)
        return key in self._flows_state

    def _whole(self) -> Any:
        """Reading every key at once (iterating, comparing, copying) reads the whole."""
        self._note("", write=False)
        return self._flows_state

    def __iter__(self) -> Any:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    def __eq__(self, other: object) -> bool:
        return bool(self._whole() == _plain(other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._flows_state)


def _written_again_on_return(method: Any, note: Any) -> Any:
    """``method`` (a nested model's own) may read the model, sleep and write it (a
    read-modify-write inside one call): the call is a write when it begins and again when
    it returns, so another thread's call can be ordered after all of it, not only before
    its start (a model's ``bump()`` lost update: seeds reached both counts, the search
    one)."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        finally:
            note("", write=True)

    return call


def _plain(value: Any) -> Any:
    """What a view stands for: a view never ends up stored inside the state."""
    return value._flows_state if isinstance(value, StateView) else value
