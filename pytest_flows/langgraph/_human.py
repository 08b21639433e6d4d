"""``human`` answers LangGraph's ``interrupt()`` and static breakpoints.

When a run stops with pending interrupts and the ``human`` fixture is bound,
``flows.run`` asks the human's script for each one (in LangGraph's order: by task,
then by the node's interrupt index) and continues the thread with
``Command(resume={interrupt_id: answer, ...})``, until nothing is pending or the
script pauses (``human.pause()``: the interrupt stays pending, the run returns
``status="interrupted"``). The interrupted node re-runs from its top on resume, as it
does in production: whatever it did before ``interrupt()`` happens again.

Text answers come from the human as for the other frameworks
(``human.answer("yes")``, ``human.on(method="review").answer("no")``: ``method`` is
the node that asked); any other value through :func:`interrupts`::

    interrupts(human).respond({"action": "approve"})
    interrupts(human).on(node="review", value="refund").respond(False)

A static breakpoint (``interrupt_before``/``interrupt_after``) is a request too
(kind ``"breakpoint"``): any answer continues the run (``stream(None, config)``),
a pause leaves it stopped there.

Request keys: ``caller`` has ``flow`` (the graph's name), ``method`` (the node),
``kind`` (``"interrupt"`` or ``"breakpoint"``), ``occurrence``; ``prompt`` is the
interrupt's value as text; ``data`` has ``value`` and ``interrupt_id``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from pytest_flows.adapters import (
    PAUSE,
    FlowsUsageError,
    Request,
    UnscriptedRequest,
    is_pause,
    render_value,
)

__all__ = [
    "Interrupts",
    "answer_breakpoint",
    "answer_pending",
    "interrupts",
    "pending_interrupts",
]

# What a task leaves in its superstep's pending writes besides its output: a question,
# an answer, an error. Any other write means the task finished (the channel names are
# the stored checkpoint format, which every saver keeps).
_CONTROL_WRITES = frozenset(("__error__", "__error_source_node__", "__interrupt__", "__resume__"))


def _script_of(human: Any) -> Any:
    script = getattr(human, "script", None)
    if script is None or not callable(getattr(script, "take", None)):
        raise FlowsUsageError(
            f"interrupts(human) needs the human fixture (scripted human answers), got {human!r}."
        )
    return script


@dataclasses.dataclass(frozen=True)
class _Respond:
    """A scripted resume value, or ``f(interrupt_value)`` returning one."""

    value: Any
    after: float = 0.0

    def __call__(self, request: Request) -> Any:
        return self  # the script calls callables with the request: keep this one


class Interrupts:
    """Resume values for LangGraph interrupts, scripted on the ``human`` fixture."""

    def __init__(self, human: Any, where: Callable[[Request], bool] | None = None) -> None:
        self.human = human
        self.script = _script_of(human)
        self._where = where
        self._label = ""

    def on(
        self,
        *,
        node: str | None = None,
        value: str | re.Pattern[str] | None = None,
        occurrence: int | None = None,
    ) -> Interrupts:
        """Answers for matching interrupts only: ``node`` that asked, ``value`` a regex
        searched in the interrupt's value as text, ``occurrence`` that node's n-th."""
        if node is None and value is None and occurrence is None:
            raise FlowsUsageError(
                "interrupts(human).on() needs a condition (node=, value= or occurrence=); "
                "for answers in order use interrupts(human).respond(...)."
            )
        pattern = re.compile(value) if isinstance(value, str) else value

        def where(request: Request) -> bool:
            caller = request.caller
            return (
                caller.get("kind") == "interrupt"
                and (node is None or caller.get("method") == node)
                and (occurrence is None or caller.get("occurrence") == occurrence)
                and (pattern is None or pattern.search(request.prompt) is not None)
            )

        rule = Interrupts(self.human, where)
        given = {"node": node, "value": value, "occurrence": occurrence}
        rule._label = ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None)
        return rule

    def respond(
        self, *values: Any, after: float = 0.0, times: int | str = 1, optional: bool = False
    ) -> Interrupts:
        """Resume the next (matching) interrupts with ``values``, in order: any value
        (a dict, ``True``, text...), ``PAUSE``, or ``f(interrupt_value)`` returning one.
        ``after`` is how long the human takes (virtual seconds)."""
        if not values:
            raise FlowsUsageError(
                'respond() needs at least one value: interrupts(human).respond({"ok": True}).'
            )
        prefix = "interrupts(human)" + (f".on({self._label})" if self._label else "")
        for value in values:
            reply = value if is_pause(value) else _Respond(value, float(after))
            verb = "pause()" if is_pause(value) else f"respond({render_value(value, 60)})"
            self.script.add(
                reply,
                match=self._match(),
                times=times,
                optional=optional,
                label=f"{prefix}.{verb}",
            )
        return self

    def pause(self, *, times: int | str = 1, optional: bool = False) -> Interrupts:
        """Leave the next (matching) interrupt pending: the run stops there."""
        return self.respond(PAUSE, times=times, optional=optional)

    def _match(self) -> Any:
        if self._where is None:
            return None
        from pytest_flows.adapters import Match

        return Match(where=self._where)


def interrupts(human: Any) -> Interrupts:
    """Script resume values for LangGraph ``interrupt()`` s on the ``human`` fixture."""
    return Interrupts(human)


# -- answering (called by the adapter) ----------------------------------------------------


def _prompt(value: Any) -> str:
    return value if isinstance(value, str) else render_value(value, limit=10_000)


def _take(human: Any, request: Request) -> Any:
    try:
        return human.script.take(request)
    except UnscriptedRequest as error:
        caller = request.caller
        lines = [
            f"pytest-flows: unscripted {caller['kind']} #{request.number} from node "
            f"{caller.get('method')!r} of graph {caller.get('flow')!r}: no scripted answer "
            "matches it.",
            f"  value: {request.prompt}",
            "Add one of these lines to the test (or human.pause() to leave it pending):",
            f'    human.on(method="{caller.get("method")}").answer("...")',
        ]
        if caller["kind"] == "interrupt":
            lines.append(
                f'    interrupts(human).on(node="{caller.get("method")}").respond(<value>)'
            )
        raise UnscriptedRequest("\n".join(lines), request) from error


def _value_of(human: Any, exchange: Any, interrupt_value: Any) -> tuple[Any, float] | None:
    """The resume value the script gives, with the human's delay; None: paused."""
    value = human.resolve(exchange)
    if is_pause(value):
        exchange.reply = PAUSE
        return None
    after = 0.0
    if isinstance(value, _Respond):
        after = value.after
        value = value.value
        if callable(value) and not isinstance(value, type):
            value = value(interrupt_value)
            if is_pause(value):
                exchange.reply = PAUSE
                return None
    elif hasattr(value, "text") and hasattr(value, "after"):  # human.answer("...")
        after = float(value.after or 0.0)
        value = value.text
    if isinstance(value, BaseException):
        exchange.error = value
        raise value
    exchange.reply = value
    return value, after


def _request(
    human: Any, graph: Any, node: str, kind: str, value: Any, data: dict[str, Any]
) -> Request:
    caller: dict[str, Any] = {"flow": str(graph.name), "method": node, "kind": kind}
    caller["occurrence"] = human.occurrence(caller)
    return Request(caller=caller, prompt=_prompt(value), purpose=kind, data=data)


def pending_interrupts(graph: Any, state: Any) -> list[Any]:
    """The interrupts ``state`` (``graph.get_state(config)``) still waits on, in
    LangGraph's order.

    LangGraph < 1.2.13 lists in ``get_state()`` the answered interrupt of a task that
    has since finished (of two parallel interrupts, the one ``Command(resume={id: ...})``
    answered; langgraph #5952), and later releases do not: a task with an output write
    in its superstep's pending writes is finished and waits on nothing, the rule
    LangGraph itself applies since. The saver is read only when something is pending.
    """
    from pytest_flows.langgraph._run import PendingInterrupt

    pending = PendingInterrupt.all_of(state)
    if not pending:
        return pending
    try:
        saved = graph.checkpointer.get_tuple(state.config)
    except Exception:  # an async-only saver: LangGraph's own list stands
        return pending
    finished = {
        str(task_id)
        for task_id, channel, _ in (getattr(saved, "pending_writes", None) or ())
        if channel not in _CONTROL_WRITES
    }
    answered = {
        str(interrupt.id)
        for task in getattr(state, "tasks", ()) or ()
        if str(task.id) in finished
        for interrupt in getattr(task, "interrupts", ()) or ()
    }
    return [item for item in pending if item.id not in answered]


def answer_pending(human: Any, graph: Any, pending: Sequence[Any], clock: Any) -> dict[str, Any]:
    """Ask ``human``'s script for each pending interrupt; ``{interrupt_id: answer}``
    for those it answers (a paused one stays pending)."""
    answers: dict[str, Any] = {}
    for item in pending:
        request = _request(
            human,
            graph,
            item.node,
            "interrupt",
            item.value,
            {"value": item.value, "interrupt_id": item.id},
        )
        exchange = _take(human, request)
        got = _value_of(human, exchange, item.value)
        if got is None:
            continue
        value, after = got
        if after:
            clock.advance(after)
        answers[item.id] = value
    return answers


def answer_breakpoint(human: Any, graph: Any, state: Any) -> bool:
    """Whether the human lets a run stopped at a static breakpoint go on."""
    nodes = sorted(str(n) for n in state.next)
    request = _request(
        human,
        graph,
        ", ".join(nodes),
        "breakpoint",
        f"before {', '.join(nodes)}",
        {"next": nodes},
    )
    exchange = _take(human, request)
    return _value_of(human, exchange, None) is not None
