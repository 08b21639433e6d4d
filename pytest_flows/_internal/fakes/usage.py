"""What a run used - LLM calls, tokens, tool calls, virtual time - and budgets on it.

Every run collects a :class:`Usage` (``FlowRun.usage``): totals and
``by_method[name]`` for each flow method (or Agent Framework executor) that
used something. The fakes report to it as they answer (:func:`note`):

* ``llm_calls``: calls the fake LLM answered (or refused), auto replies included;
* ``tokens``: prompt + completion tokens of those calls (a reply's
  ``usage=``, else the fake's estimate of four characters a token);
* ``tool_calls``: tools an agent ran (crewai's tool-usage events);
* ``virtual_seconds``: for a method, the scripted latency its fakes took;
  in the totals, the virtual time the whole run took.

A budget (``flows.run(F, budget={...})`` or ``@pytest.mark.flows(budget=
{...})``) caps the run's totals (``{"llm_calls": 10, "tokens": 5000,
"tool_calls": 4, "virtual_seconds": 600}``) and, under ``by_method``, single
methods (``{"by_method": {"route": {"llm_calls": 3}}}``). A run over budget
fails with :class:`BudgetExceeded`, naming the key, the limit and each
method's figures: LLM calls, tokens and latency at the fake call that goes
over (so a runaway loop stops there), tool calls and the run's own virtual
time when the run ends. Like a script error, it fails the test even with
``raise_on_error=False``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.script import ScriptError
from pytest_flows._internal.runtime.participants import internal_lock

__all__ = [
    "BUDGET_KEYS",
    "BudgetExceeded",
    "MethodUsage",
    "Usage",
    "check_budget",
    "note",
    "within_budget",
]

#: What a budget can cap.
BUDGET_KEYS = ("llm_calls", "tokens", "tool_calls", "virtual_seconds")


class _Clock(Protocol):
    def monotonic(self) -> float: ...


@dataclass
class MethodUsage:
    """One method's (or the whole run's) figures."""

    llm_calls: int = 0
    tokens: int = 0
    tool_calls: int = 0
    virtual_seconds: float = 0.0

    def describe(self) -> str:
        return " ".join(f"{f.name}={_number(getattr(self, f.name))}" for f in fields(self))


@dataclass
class Usage(MethodUsage):
    """A run's totals, and ``by_method[name]`` per flow method."""

    by_method: dict[str, MethodUsage] = field(default_factory=dict)

    def describe(self) -> str:
        return " ".join(f"{key}={_number(getattr(self, key))}" for key in BUDGET_KEYS)


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class _Collector:
    def __init__(self, clock: _Clock | None, budget: Mapping[str, Any]) -> None:
        self.usage = Usage()
        self.clock = clock
        self.budget = budget
        self.started = clock.monotonic() if clock is not None else 0.0
        self.lock = internal_lock()

    def over_budget(self, keys: Iterable[str]) -> BudgetExceeded | None:
        """The run so far against its budget's ``keys`` (a runaway loop stops at the limit)."""
        if not self.budget:
            return None
        with self.lock:
            now = Usage(
                **{key: getattr(self.usage, key) for key in BUDGET_KEYS},
                by_method={k: MethodUsage(**vars(v)) for k, v in self.usage.by_method.items()},
            )
        if self.clock is not None:
            now.virtual_seconds = self.clock.monotonic() - self.started
        return check_budget(now, self.budget, keys)

    def add(self, method: str, counts: Mapping[str, float]) -> None:
        with self.lock:
            mine = self.usage.by_method.setdefault(method or "-", MethodUsage())
            for key, amount in counts.items():
                setattr(mine, key, getattr(mine, key) + amount)
                if key != "virtual_seconds":  # the run's own clock says how long it took
                    setattr(self.usage, key, getattr(self.usage, key) + amount)

    def finish(self) -> Usage:
        if self.clock is not None:
            self.usage.virtual_seconds = self.clock.monotonic() - self.started
        else:
            self.usage.virtual_seconds = sum(
                m.virtual_seconds for m in self.usage.by_method.values()
            )
        return self.usage


# The runs the current context is part of (a flow may run another flow):
# what a fake uses counts for each of them.
_collectors: contextvars.ContextVar[tuple[_Collector, ...]] = contextvars.ContextVar(
    "pytest_flows_usage", default=()
)
# The budget of the run this context is about to start (flows.run sets it).
_next_budget: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "pytest_flows_budget", default=None
)


def enforced(budget: Mapping[str, Any]) -> Mapping[str, Any]:
    """``budget`` for the run this context starts next (checked as the fakes report)."""
    _next_budget.set(budget)
    return budget


@contextlib.contextmanager
def collecting(clock: _Clock | None = None) -> Iterator[_Collector]:
    """Collect what is used in this context (and the tasks and threads it starts)."""
    collector = _Collector(clock, _next_budget.get() or {})
    token = _collectors.set((*_collectors.get(), collector))
    try:
        yield collector
    finally:
        _collectors.reset(token)


def note(
    method: str,
    *,
    llm_calls: int = 0,
    tokens: int = 0,
    tool_calls: int = 0,
    virtual_seconds: float = 0.0,
    enforce: bool = True,
) -> None:
    """A fake used something on behalf of ``method`` (a no-op outside any run).

    With ``enforce``, a run now over its budget on what this call counts fails
    here, in the fake's call, so a runaway loop stops at the limit; callers
    that cannot fail (event handlers) pass False and leave it to the check
    after the run.
    """
    collectors = _collectors.get()
    if not collectors:
        return
    counts = {
        key: value
        for key, value in (
            ("llm_calls", llm_calls),
            ("tokens", tokens),
            ("tool_calls", tool_calls),
            ("virtual_seconds", virtual_seconds),
        )
        if value
    }
    for collector in collectors:
        collector.add(method, counts)
    if enforce:
        for collector in collectors:
            error = collector.over_budget(counts)
            if error is not None:
                raise error


class BudgetExceeded(ScriptError):
    """A run used more than its budget allows."""


def check_budget_spec(budget: Any, where: str) -> dict[str, Any]:
    """``budget`` validated (a usage error names what is wrong); ``{}`` for None."""
    if budget is None:
        return {}
    example = '{"llm_calls": 10, "by_method": {"route": {"llm_calls": 3}}}'
    if not isinstance(budget, Mapping):
        raise FlowsUsageError(f"{where}: budget={budget!r} is a dict, e.g. budget={example}.")
    for key, limit in budget.items():
        if key == "by_method":
            if not isinstance(limit, Mapping):
                raise FlowsUsageError(
                    f"{where}: budget['by_method'] maps method names to budgets, e.g. "
                    f"budget={example}."
                )
            for method, sub in limit.items():
                if not isinstance(sub, Mapping) or "by_method" in sub:
                    raise FlowsUsageError(
                        f"{where}: budget['by_method'][{method!r}] is a dict of limits "
                        f"({', '.join(BUDGET_KEYS)}), e.g. {{'llm_calls': 3}}."
                    )
                check_budget_spec(sub, where)
            continue
        if key not in BUDGET_KEYS:
            raise FlowsUsageError(
                f"{where}: {key!r} is not something a budget caps; use "
                f"{', '.join(BUDGET_KEYS)} or by_method, e.g. budget={example}."
            )
        if isinstance(limit, bool) or not isinstance(limit, int | float) or not limit >= 0:
            raise FlowsUsageError(
                f"{where}: budget[{key!r}]={limit!r} is not a limit; use a number >= 0."
            )
    return dict(budget)


def merged_budget(marked: Any, given: Any) -> dict[str, Any]:
    """The marker's budget, with what ``flows.run(budget=...)`` says on top."""
    merged = check_budget_spec(marked, "@pytest.mark.flows(budget=...)")
    merged.update(check_budget_spec(given, "flows.run(..., budget=...)"))
    return merged


def check_budget(
    usage: Usage, budget: Mapping[str, Any], keys: Iterable[str] = BUDGET_KEYS
) -> BudgetExceeded | None:
    """The first limit on ``keys`` that ``usage`` exceeds, as an error to fail the run
    with (or None)."""
    keys = [key for key in BUDGET_KEYS if key in set(keys)]
    for key in keys:
        if key in budget and getattr(usage, key) > budget[key]:
            return _exceeded(usage, key, budget[key], None)
    for method, limits in (budget.get("by_method") or {}).items():
        figures = usage.by_method.get(method, MethodUsage())
        for key in keys:
            if key in limits and getattr(figures, key) > limits[key]:
                return _exceeded(usage, key, limits[key], method)
    return None


def within_budget(run: Any, budget: Mapping[str, Any]) -> Any:
    """``run`` (a FlowRun); raise :class:`BudgetExceeded` if it went over ``budget``.

    Like a script error, an exceeded budget fails the test whatever
    ``raise_on_error`` says. A run that failed on its own keeps its own error:
    that is the news.
    """
    if budget and run.error is None:
        error = check_budget(run.usage, budget)
        if error is not None:
            raise error
    return run


def _exceeded(usage: Usage, key: str, limit: float, method: str | None) -> BudgetExceeded:
    if method is None:
        figure = getattr(usage, key)
        what = f"the run used {key}={_number(figure)}, over its budget of {_number(limit)}"
        worst = sorted(
            usage.by_method.items(), key=lambda item: getattr(item[1], key), reverse=True
        )
        if worst and getattr(worst[0][1], key):
            name, figures = worst[0]
            what += f"; most in {name!r} ({key}={_number(getattr(figures, key))})"
        where = f"budget={{{key!r}: {_number(limit)}}}"
    else:
        figure = getattr(usage.by_method[method], key)
        what = (
            f"method {method!r} used {key}={_number(figure)}, over its budget of {_number(limit)}"
        )
        where = f"budget={{'by_method': {{{method!r}: {{{key!r}: {_number(limit)}}}}}}}"
    lines = [f"pytest-flows: budget exceeded: {what}.", f"  run: {usage.describe()}"]
    for name, figures in usage.by_method.items():
        lines.append(f"  {name}: {figures.describe()}")
    lines.append(
        f"Find why the flow used that much, or raise the limit ({where}) if it is expected."
    )
    return BudgetExceeded("\n".join(lines))
