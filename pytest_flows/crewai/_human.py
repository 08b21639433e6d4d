"""``human``: scripted answers to ``@human_feedback`` and ``Flow.ask()``.

While bound:

* ``@human_feedback`` steps with a provider (on the decorator or in
  ``flow_config``) ask the script instead; steps without one keep crewai's
  console path, whose ``input()`` the script answers;
* every ``Flow.ask()`` asks the script (over per-flow and global providers);
* a bare ``input(prompt)`` in flow code asks the script (kind ``input``; the
  prompt is the message), instead of pytest's captured stdin;
* an answer with an explicit outcome decides the route without the LLM that
  would classify the feedback;
* a paused step is saved where crewai saves it (the ``flow_store`` router
  that pytest-flows registers; if no persistence factory is registered, a
  small private in-memory store), so ``Flow.from_pending(flow_id)`` and
  ``resume()`` work without a database.

Request keys: ``caller`` has ``flow``, ``method``, ``kind`` (``feedback``,
``ask`` or ``input``) and ``occurrence`` (1 for the first request of that kind from that
method, 2 for the next...); ``prompt`` is the message shown to the human.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from crewai.flow.async_feedback.types import HumanFeedbackPending, PendingFeedbackContext
from crewai.flow.persistence.base import FlowPersistence
from pydantic import BaseModel, PrivateAttr

from pytest_flows.adapters import (
    PAUSE,
    STDLIB_SEAMS,
    TIMEOUT,
    USE_PROVIDER,
    FlowRun,
    FlowsUsageError,
    ScriptedHuman,
    ScriptReplyError,
    entry_label,
    short,
)
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai import _human_patches as patches

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = ["ask", "feedback", "install", "resume"]


# -- answering ------------------------------------------------------------------
def feedback(
    human: ScriptedHuman,
    flow: Any,
    method: str,
    message: str,
    output: Any,
    emit: Any,
    pending: Callable[[], Any],
    own: Callable[[], str] | None = None,
) -> str:
    """Answer one ``@human_feedback`` request from the script; ``own()`` asks the
    flow's own provider (for ``use_provider()``), where there is one."""
    request = human.request(
        _flow_name(flow),
        "feedback",
        method,
        message,
        {"output": output, "emit": list(emit) if emit else None},
    )
    exchange = human.take(request)
    try:
        value = human.resolve(exchange)
        if value is PAUSE:
            exchange.reply = PAUSE
            human.trace("human.feedback", method, message, None, None, paused=True)
            raise HumanFeedbackPending(context=pending())
        if value is USE_PROVIDER:
            return _from_own_provider(human, exchange, method, message, own)
        if value is TIMEOUT:
            raise ScriptReplyError(
                f"pytest-flows: human request #{request.number} is @human_feedback on "
                f"{method!r}, which has no timeout; {entry_label(exchange)} answers "
                "Flow.ask(timeout=...) only. Use .pause() to leave the feedback pending, "
                'or .answer("") for the default outcome.'
            )
        answer = value
        if answer.outcome is not None:
            human.check_outcome(answer.outcome, request.data["emit"], entry_label(exchange))
        human.wait(answer.after)
        if answer.outcome is not None and answer.text.strip():
            human.decide(flow, answer.text.strip(), answer.outcome)
    except HumanFeedbackPending:
        raise
    except BaseException as exc:
        exchange.error = exc
        human.trace_error("human.feedback", method, message, exc)
        raise
    text = str(answer.text)
    exchange.reply = text
    human.trace("human.feedback", method, message, text, answer.outcome)
    return text


def _from_own_provider(
    human: ScriptedHuman,
    exchange: Any,
    method: str,
    message: str,
    own: Callable[[], str] | None,
) -> str:
    if own is None:
        raise FlowsUsageError(
            f"{entry_label(exchange)}: the @human_feedback step {method!r} has no feedback "
            "provider of its own (on the decorator or in flow_config.hitl_provider"
            + ("" if compat.HAS_FEEDBACK_PROVIDER_RESOLVER else "; crewai < 1.15 cannot be asked")
            + "). Script an answer instead."
        )
    try:
        text = own()
    except HumanFeedbackPending:
        exchange.reply = PAUSE
        human.trace("human.feedback", method, message, None, None, paused=True)
        raise
    exchange.reply = text
    human.trace("human.feedback", method, message, str(text), None)
    return text


def ask(human: ScriptedHuman, flow: Any, message: str, metadata: Any) -> str | None:
    timeout = patches.ask_timeout()
    method = callers.flow_caller().get("method", "")
    data: dict[str, Any] = {"metadata": metadata, "timeout": timeout}
    request = human.request(_flow_name(flow), "ask", str(method), message, data)
    exchange = human.take(request)
    try:
        value = human.resolve(exchange)
        if value is PAUSE:
            raise ScriptReplyError(
                f"pytest-flows: human request #{request.number} is Flow.ask() in "
                f"{method!r}, which cannot pause; {entry_label(exchange)} answers "
                "@human_feedback only. "
                "Use .timeout() for an ask() that gets no answer."
            )
        if value is TIMEOUT or (timeout is not None and value.after >= timeout):
            if timeout is None:
                raise ScriptReplyError(
                    f"pytest-flows: human request #{request.number} is Flow.ask() in "
                    f"{method!r} without a timeout, so {entry_label(exchange)} would "
                    "wait forever. "
                    "Give the flow's ask() a timeout=, or script an answer."
                )
            human.wait(timeout)
            exchange.reply = None
            human.trace("human.ask", method, message, None, None, timed_out=timeout)
            return None
        _refuse_outcome(value, exchange, "Flow.ask()", method)
        human.wait(value.after)
    except BaseException as exc:
        exchange.error = exc
        human.trace_error("human.ask", method, message, exc)
        raise
    exchange.reply = value.text
    human.trace("human.ask", method, message, value.text, None)
    return str(value.text)


def _refuse_outcome(value: Any, exchange: Any, what: str, method: str) -> None:
    if value.outcome is not None:
        raise ScriptReplyError(
            f"pytest-flows: human request #{exchange.request.number} is {what} in {method!r}; "
            f"outcome= in {entry_label(exchange)} only routes @human_feedback. Drop it."
        )


def console_input(human: ScriptedHuman, prompt: object = "") -> str:
    """``input(prompt)`` in flow code, answered by the script (kind ``input``)."""
    caller = callers.flow_caller()
    method = str(caller.get("method", ""))
    request = human.request(str(caller.get("flow", "")), "input", method, str(prompt), {})
    exchange = human.take(request)
    try:
        value = human.resolve(exchange)
        if value is PAUSE or value is TIMEOUT:
            verb = "pause()" if value is PAUSE else "timeout()"
            where = method or "the test"
            raise ScriptReplyError(
                f"pytest-flows: human request #{request.number} is input() in {where!r}, "
                f"which waits until someone types a line; {entry_label(exchange)} cannot {verb} "
                'it. Script the line: human.answer("...").'
            )
        _refuse_outcome(value, exchange, "input()", method)
        human.wait(value.after)
    except BaseException as exc:
        exchange.error = exc
        human.trace_error("human.input", method, str(prompt), exc)
        raise
    exchange.reply = value.text
    human.trace("human.input", method, str(prompt), value.text, None)
    return str(value.text)


@contextlib.contextmanager
def _console_input(human: ScriptedHuman) -> Iterator[None]:
    # Flow code calls input() from worker threads too: only a module-wide
    # replacement reaches them. pytest's captured stdin would raise instead.
    with STDLIB_SEAMS["builtins:input"].replace(lambda prompt="": console_input(human, prompt)):
        yield


def resume(human: ScriptedHuman, paused: Any, feedback: str, outcome: str | None) -> FlowRun:
    """Resume a paused flow with ``feedback``; returns the resumed run.

    ``paused`` is the paused ``FlowRun`` (its flow is restored with
    ``from_pending``, as a webhook handler would) or a flow restored with
    ``Flow.from_pending(flow_id)``. ``outcome`` routes without the LLM
    that would classify ``feedback``.
    """
    flow = _pending_flow(paused)
    context = flow.pending_feedback
    text = feedback or (outcome or "")
    if outcome is not None:
        human.check_outcome(outcome, context.emit, f"human.resume(..., outcome={outcome!r})")
        human.decide(flow, text, outcome)
    mark = human.session.event_count() if human.session is not None else 0
    human.trace("human.resumed", context.method_name, context.message, text, outcome)
    output = flow.resume(text)
    run = FlowRun(flow=flow, output=output, state=compat.bare_state(flow))
    run.method_outputs = list(flow.method_outputs)
    if human.session is not None:
        run.trace = human.session.trace_slice(mark)
    return run


def _pending_flow(paused: Any) -> Any:
    if isinstance(paused, FlowRun):
        pending = paused.output
        if not isinstance(pending, HumanFeedbackPending):
            raise FlowsUsageError(
                f"human.resume(run): the run did not pause (its output is {short(pending)}); "
                "script human.pause() for the step that should wait."
            )
        return type(paused.flow).from_pending(pending.context.flow_id)
    if getattr(paused, "pending_feedback", None) is None:
        raise FlowsUsageError(
            f"human.resume({type(paused).__name__}): the flow is not waiting for feedback; "
            "pass the paused FlowRun, or a flow restored with Flow.from_pending(flow_id)."
        )
    return paused


def _flow_name(flow: Any) -> str:
    definition = getattr(flow, "_definition", None)
    name = getattr(definition, "name", None)
    return str(name or type(flow).__name__) if flow is not None else ""


# -- the providers crewai asks -----------------------------------------------------------
class _FeedbackProvider:
    """A ``HumanFeedbackProvider`` answered by the script."""

    def __init__(self, human: ScriptedHuman, own: Any = None) -> None:
        self._human = human
        self._own = own  # the step's own provider, for use_provider()

    def standing_in_for(self, own: Any) -> _FeedbackProvider:
        """This provider in place of the step's ``own`` one."""
        return _FeedbackProvider(self._human, own)

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        own = self._own
        return feedback(
            self._human,
            flow,
            context.method_name,
            context.message,
            context.method_output,
            context.emit,
            lambda: context,
            None if own is None else (lambda: str(own.request_feedback(context, flow))),
        )


class _InputProvider:
    """An ``InputProvider`` (for ``Flow.ask``) answered by the script."""

    def __init__(self, human: ScriptedHuman) -> None:
        self._human = human

    def request_input(
        self, message: str, flow: Any, metadata: dict[str, Any] | None = None
    ) -> str | None:
        return ask(self._human, flow, message, metadata)


# -- pending feedback kept in memory ---------------------------------------------------
class _InMemoryPendingStore(FlowPersistence):
    """A minimal in-memory ``FlowPersistence`` for paused feedback (the human fake's own).

    States and pending contexts go through JSON, as a database would store
    them. The full store with history and checks is the ``flow_store`` fixture.
    """

    persistence_type: str = "pytest-flows-human"
    _states: dict[str, list[tuple[str, str]]] = PrivateAttr(default_factory=dict)
    _pending: dict[str, tuple[str, str]] = PrivateAttr(default_factory=dict)

    def init_db(self) -> None:
        return None

    def save_state(self, flow_uuid: str, method_name: str, state_data: Any) -> None:
        self._states.setdefault(flow_uuid, []).append((method_name, _dumps(state_data)))

    def load_state(self, flow_uuid: str) -> dict[str, Any] | None:
        history = self._states.get(flow_uuid)
        return json.loads(history[-1][1]) if history else None

    def save_pending_feedback(
        self, flow_uuid: str, context: PendingFeedbackContext, state_data: Any
    ) -> None:
        self.save_state(flow_uuid, context.method_name, state_data)
        self._pending[flow_uuid] = (_dumps(state_data), json.dumps(context.to_dict()))

    def load_pending_feedback(
        self, flow_uuid: str
    ) -> tuple[dict[str, Any], PendingFeedbackContext] | None:
        found = self._pending.get(flow_uuid)
        if found is None:
            return None
        state, context = found
        return json.loads(state), PendingFeedbackContext.from_dict(json.loads(context))

    def clear_pending_feedback(self, flow_uuid: str) -> None:
        self._pending.pop(flow_uuid, None)

    @property
    def pending_ids(self) -> list[str]:
        """Flow ids with feedback pending, oldest first."""
        return list(self._pending)


def _dumps(state: Any) -> str:
    if isinstance(state, BaseModel):
        state = state.model_dump(mode="json")
    return json.dumps(state, default=str)


@contextlib.contextmanager
def install(session: FlowsSession, human: ScriptedHuman) -> Iterator[None]:
    """Bind ``human`` for one test (see the module docstring)."""

    def console(flow: Any, asked: dict[str, Any]) -> str:
        # crewai 1.14.x does not pass the method's name to _request_human_feedback
        method = str(asked["method_name"] or callers.flow_caller().get("method", ""))
        return feedback(
            human,
            flow,
            method,
            str(asked["message"]),
            asked["output"],
            asked["emit"],
            lambda: patches.pending_context(flow, method, asked["output"]),
        )

    with contextlib.ExitStack() as stack:
        stack.enter_context(callers.tracking())
        stack.enter_context(patches.feedback_provider(_FeedbackProvider(human)))
        stack.enter_context(patches.console_feedback(console))
        stack.enter_context(patches.input_provider(_InputProvider(human)))
        stack.enter_context(patches.explicit_outcomes(human.decided_outcome))
        stack.enter_context(patches.ask_timeouts())
        stack.enter_context(_console_input(human))
        fallback = _InMemoryPendingStore()  # only if no persistence factory is registered
        stack.enter_context(patches.fallback_persistence(lambda: fallback))
        yield
