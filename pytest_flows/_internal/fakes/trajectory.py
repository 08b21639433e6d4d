"""Trajectory matching: did the calls a test cares about happen, in whichever order?

``fake_llm.calls``, ``fake_llm.tool_calls`` and ``fake_tools.calls`` are
:class:`Calls` lists; :meth:`Calls.match` compares them with a list of
expected calls:

* ``"strict"``: the same calls in the same order;
* ``"unordered"``: the same calls, in any order;
* ``"subset"``: every call that happened is one of the expected (nothing
  beyond them happened; some may be missing);
* ``"superset"``: every expected call happened (others may have, too).

An expected call is a dict of conditions (``{"method": "research", "agent":
"Researcher"}``; for tool calls ``{"name": "search", "arguments": {"query":
re.compile("AI")}}``), a ``call_tool("search", query=ANY)``, a string (a
tool's name, or for LLM calls the flow method), or a predicate ``f(call)``.
A condition is a value, ``unittest.mock.ANY``, a compiled regex, a
predicate or a dict (the keys it names must match); tool arguments match as
a subset: arguments the expectation leaves out may have any value. Each
expected call is used once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.replies import ToolCall
from pytest_flows._internal.fakes.script import _condition_holds, _describe_condition, short

__all__ = ["MODES", "Calls", "TrajectoryMismatch"]

MODES = ("strict", "unordered", "subset", "superset")
Mode = Literal["strict", "unordered", "subset", "superset"]

T = TypeVar("T")


class TrajectoryMismatch(AssertionError):
    """The calls that happened do not match the expected trajectory."""


class Calls(list[T]):
    """A list of calls (LLM exchanges or tool calls) that can be matched as a trajectory."""

    def __init__(self, items: Iterable[T] = (), *, noun: str = "call") -> None:
        super().__init__(items)
        self.noun = noun

    def match(self, expected: Iterable[Any], *, mode: Mode = "strict") -> bool:
        """Raise :class:`TrajectoryMismatch` unless the calls fit ``expected`` (see module doc).

        Returns True, so ``assert fake_llm.calls.match([...])`` reads too.
        """
        __tracebackhide__ = True
        if mode not in MODES:
            raise FlowsUsageError(
                f"calls.match(..., mode={mode!r}): mode is one of {', '.join(map(repr, MODES))}."
            )
        if isinstance(expected, str | bytes | Mapping) or not isinstance(expected, Iterable):
            raise FlowsUsageError(
                f"calls.match({expected!r}): pass a list of expected calls, e.g. "
                'calls.match([call_tool("search", query=ANY), "fetch"]).'
            )
        wanted = list(expected)
        actual = list(self)
        fits = [[_fits(pattern, call) for call in actual] for pattern in wanted]
        problem = _problem(mode, wanted, actual, fits)
        if problem is None:
            return True
        lines = [f"pytest-flows: the {self.noun}s do not match (mode={mode!r}): {problem}"]
        lines.append(f"  expected ({len(wanted)}):")
        lines.extend(f"    {i}. {_describe_pattern(p)}" for i, p in enumerate(wanted, 1))
        lines.append(f"  actual ({len(actual)}):")
        lines.extend(f"    {i}. {_describe_call(c)}" for i, c in enumerate(actual, 1))
        raise TrajectoryMismatch("\n".join(lines))


def _problem(mode: str, wanted: list[Any], actual: list[Any], fits: list[list[bool]]) -> str | None:
    if mode == "strict":
        for i, (pattern, call) in enumerate(zip(wanted, actual, strict=False), 1):
            if not fits[i - 1][i - 1]:
                return f"call {i} is {_describe_call(call)}, expected {_describe_pattern(pattern)}"
        if len(wanted) != len(actual):
            return f"{len(actual)} calls happened, {len(wanted)} expected"
        return None
    pairing = _pairing(fits, len(actual))
    unmatched_expected = [i for i in range(len(wanted)) if i not in pairing]
    matched_actual = set(pairing.values())
    unmatched_actual = [j for j in range(len(actual)) if j not in matched_actual]
    missing = ", ".join(f"#{i + 1} {_describe_pattern(wanted[i])}" for i in unmatched_expected)
    extra = ", ".join(f"#{j + 1} {_describe_call(actual[j])}" for j in unmatched_actual)
    if mode in ("unordered", "superset") and unmatched_expected:
        return f"expected but not found: {missing}"
    if mode in ("unordered", "subset") and unmatched_actual:
        return f"happened but not expected: {extra}"
    return None


def _pairing(fits: list[list[bool]], n_actual: int) -> dict[int, int]:
    """A maximum matching expected -> actual (augmenting paths; trajectories are short)."""
    owner: dict[int, int] = {}  # actual -> expected

    def place(i: int, seen: set[int]) -> bool:
        for j in range(n_actual):
            if fits[i][j] and j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(fits)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def _fits(pattern: Any, call: Any) -> bool:
    if isinstance(pattern, ToolCall):
        return _fits(
            {"name": pattern.name, "arguments": dict(pattern.arguments)},
            call,
        )
    if isinstance(pattern, str):
        if _is_tool_call(call):
            return pattern in _names(call)
        return bool(_field(call, "method") == pattern)
    if isinstance(pattern, Mapping):
        for key, condition in pattern.items():
            value = _field(call, key, _MISSING)
            if value is _MISSING:
                return False
            values = _names(call) if key == "name" and _is_tool_call(call) else (value,)
            if not any(_condition_holds(condition, v) for v in values):
                return False
        return True
    if callable(pattern):
        return bool(pattern(call))
    raise FlowsUsageError(
        f"calls.match(): {pattern!r} is no expected call; use a dict of conditions, "
        'call_tool("name", arg=...), a name, or a predicate f(call).'
    )


_MISSING: Any = object()


def _is_tool_call(call: Any) -> bool:
    caller = getattr(call, "caller", None)
    return isinstance(call, ToolCall) or (isinstance(caller, Mapping) and "tool" in caller)


def _names(call: Any) -> tuple[Any, ...]:
    """A tool call's names: the one it was called by, and a ledger line's aliases
    (a crewai tool's declared and sanitized names both match)."""
    request = getattr(call, "request", None)
    aliases = getattr(request, "aliases", None) or {}
    return (_field(call, "name"), *aliases.get("tool", ()))


def _field(call: Any, key: str, default: Any = None) -> Any:
    if isinstance(call, ToolCall):
        if key == "name":
            return call.name
        if key == "arguments":
            return dict(call.arguments)
        return call.arguments.get(key, default)
    caller = getattr(call, "caller", None)
    if isinstance(caller, Mapping) and "tool" in caller:  # a fake_tools ledger line
        if key == "name":
            return caller["tool"]
        if key == "arguments":
            return dict(call.data.get("arguments") or {})
    if isinstance(caller, Mapping) and key in caller:
        return caller[key]
    return getattr(call, key, default)


def _describe_pattern(pattern: Any) -> str:
    if isinstance(pattern, ToolCall):
        args = ", ".join(f"{k}={_describe_condition(v)}" for k, v in pattern.arguments.items())
        return f"{pattern.name}({args})"
    if isinstance(pattern, Mapping):
        return "{" + ", ".join(f"{k}: {_describe_condition(v)}" for k, v in pattern.items()) + "}"
    return _describe_condition(pattern) if not isinstance(pattern, str) else pattern


def _describe_call(call: Any) -> str:
    if isinstance(call, ToolCall):
        args = ", ".join(f"{k}={short(v, 30)}" for k, v in call.arguments.items())
        return f"{call.name}({args})"
    caller = getattr(call, "caller", None)
    if isinstance(caller, Mapping) and "tool" in caller:
        arguments = dict(call.data.get("arguments") or {})
        args = ", ".join(f"{k}={short(v, 30)}" for k, v in arguments.items())
        return f"{caller['tool']}({args})"
    describe: Callable[[], str] | None = getattr(
        getattr(call, "request", None), "describe_caller", None
    )
    if describe is not None:
        return describe()
    return short(call)
