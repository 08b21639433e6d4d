"""The human fake's patches: where crewai asks a person, the script answers.

crewai asks in three places - a ``@human_feedback`` provider, ``Flow.ask()``'s
input provider, and the console path's ``input()`` - and classifies feedback
into an outcome with an LLM. Each patch here takes one of them over for a test
(used by :mod:`pytest_flows.crewai._human`); the seams are declared in
:mod:`pytest_flows.crewai._seams`.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from typing import Any

from crewai.flow.runtime import Flow

from pytest_flows.adapters import replaced
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._seams import SEAMS

__all__ = [
    "ask_timeout",
    "ask_timeouts",
    "console_feedback",
    "explicit_outcomes",
    "fallback_persistence",
    "feedback_provider",
    "input_provider",
    "pending_context",
]

_FLOW = "crewai.flow.runtime:Flow"


def feedback_provider(provider: Any) -> contextlib.AbstractContextManager[None]:
    """``@human_feedback`` steps that have a provider (decorator or ``flow_config``)
    get ``provider`` instead; steps without one keep crewai's console path."""
    if compat.HAS_FEEDBACK_PROVIDER_RESOLVER:
        return _resolved_feedback_provider(provider)
    return _closure_feedback_provider(provider)


@contextlib.contextmanager
def _resolved_feedback_provider(provider: Any) -> Iterator[None]:
    original = Flow.__dict__["_resolve_feedback_provider"]

    def resolve(self: Any, feedback_definition: Any) -> Any:
        found = original(self, feedback_definition)
        if found is None:
            return None
        stand_in = getattr(provider, "standing_in_for", None)
        return provider if stand_in is None else stand_in(found)

    with SEAMS[f"{_FLOW}._resolve_feedback_provider"].replace(resolve):
        yield


def _scripted_config(real: Any, provider: Any) -> Any:
    """``flow_config`` as crewai 1.14's feedback step reads it: a set ``hitl_provider``
    reads as the scripted one; everything else is the real config's."""

    class ScriptedConfig:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        @property
        def hitl_provider(self) -> Any:
            return None if real.hitl_provider is None else provider

        @hitl_provider.setter
        def hitl_provider(self, value: Any) -> None:
            real.hitl_provider = value

        @property
        def input_provider(self) -> Any:
            return real.input_provider

        @input_provider.setter
        def input_provider(self, value: Any) -> None:
            real.input_provider = value

    return ScriptedConfig()


@contextlib.contextmanager
def _closure_feedback_provider(provider: Any) -> Iterator[None]:
    """crewai 1.14.x: a step's provider is the decorator closure's ``provider`` cell,
    read by ``_build_feedback_context`` right after it builds the step's
    ``PendingFeedbackContext``; that construction is where the cell is swapped (and
    put back when the block exits). A step without one reads ``flow_config``."""
    import importlib

    from crewai.flow.async_feedback import types

    # (crewai.flow's own `flow_config` is the config object, not its module)
    config_module = importlib.import_module("crewai.flow.flow_config")

    real_context = types.PendingFeedbackContext
    swapped: dict[int, tuple[Any, Any]] = {}

    def take_over(frame: Any) -> None:
        build: Any = frame.f_back.f_locals.get("_build_feedback_context") if frame.f_back else None
        code = getattr(build, "__code__", None)
        if code is None or "provider" not in code.co_freevars:
            return
        cell = build.__closure__[code.co_freevars.index("provider")]
        found = cell.cell_contents
        if found is not None and found is not provider:
            swapped.setdefault(id(cell), (cell, found))
            cell.cell_contents = provider

    class _Hooked(real_context):  # type: ignore[misc,valid-type]
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            frame = sys._getframe(1)
            if frame.f_code.co_name == "_build_feedback_context":
                take_over(frame)
            return real_context(*args, **kwargs)

    proxy = _scripted_config(config_module.flow_config, provider)
    try:
        with (
            SEAMS["crewai.flow.async_feedback.types:PendingFeedbackContext"].replace(_Hooked),
            replaced(config_module, "flow_config", proxy),
        ):
            yield
    finally:
        for cell, found in swapped.values():
            cell.cell_contents = found


@contextlib.contextmanager
def input_provider(provider: Any) -> Iterator[None]:
    """Every ``Flow.ask()`` asks ``provider`` (over per-flow and global providers)."""
    with SEAMS[f"{_FLOW}._resolve_input_provider"].replace(lambda self: provider):
        yield


_ask_timeout: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "pytest_flows_ask_timeout", default=None
)


def ask_timeout() -> float | None:
    """The ``timeout`` of the ``Flow.ask()`` being answered (under :func:`ask_timeouts`)."""
    return _ask_timeout.get()


@contextlib.contextmanager
def ask_timeouts() -> Iterator[None]:
    """Let the scripted provider see ``ask(timeout=...)`` (crewai does not pass it on)."""
    original = Flow.__dict__["ask"]

    def ask(self: Any, message: str, timeout: float | None = None, metadata: Any = None) -> Any:
        token = _ask_timeout.set(timeout)
        try:
            return original(self, message, timeout=timeout, metadata=metadata)
        finally:
            _ask_timeout.reset(token)

    ask.__doc__ = original.__doc__
    with SEAMS[f"{_FLOW}.ask"].replace(ask):
        yield


ConsoleAnswer = Callable[[Any, dict[str, Any]], str]


@contextlib.contextmanager
def console_feedback(answer: ConsoleAnswer) -> Iterator[None]:
    """Answer the console path's ``input("Your feedback: ")`` with ``answer``.

    crewai's runtime module reads ``input`` from its globals, so a module-level
    ``input`` there shadows the builtin for that module only.
    ``answer(flow, request)`` gets what ``_request_human_feedback`` was asked
    (``message``, ``output``, ``metadata``, ``emit``, ``method_name``).
    """
    import builtins

    import crewai.flow.runtime as runtime

    def scripted_input(prompt: object = "") -> str:
        frame = sys._getframe(1)
        if frame.f_code.co_name != "_request_human_feedback":
            return builtins.input(prompt)
        local = frame.f_locals
        asked = {key: local.get(key) for key in ("message", "output", "metadata", "emit")}
        asked["method_name"] = local.get("method_name", "")
        return answer(local.get("self"), asked)

    # The seam is Flow._request_human_feedback, which calls input() by name.
    with replaced(runtime, "input", scripted_input):
        yield


@contextlib.contextmanager
def explicit_outcomes(lookup: Callable[[Any, str, Any], str | None]) -> Iterator[None]:
    """``lookup(flow, feedback, outcomes)`` may decide the outcome of a feedback,
    skipping the LLM that would classify it (``None``: classify as usual)."""
    original = Flow.__dict__["_collapse_to_outcome"]

    def collapse(self: Any, feedback: str, outcomes: Any, llm: Any) -> str:
        decided = lookup(self, feedback, outcomes)
        if decided is not None:
            return decided
        result: str = original(self, feedback, outcomes, llm)
        return result

    with SEAMS[f"{_FLOW}._collapse_to_outcome"].replace(collapse):
        yield


def pending_context(flow: Any, method_name: str, output: Any) -> Any:
    """The ``PendingFeedbackContext`` crewai's provider path builds for a paused step."""
    from crewai.flow.async_feedback.types import PendingFeedbackContext
    from crewai.flow.human_feedback import _serialize_llm_for_context

    definition = compat.flow_definition(flow).methods[method_name].human_feedback
    llm = definition.llm
    return PendingFeedbackContext(
        flow_id=flow.flow_id or "unknown",
        flow_class=f"{type(flow).__module__}.{type(flow).__name__}",
        method_name=method_name,
        method_output=output,
        message=definition.message,
        emit=list(definition.emit) if definition.emit else None,
        default_outcome=definition.default_outcome,
        metadata=definition.metadata or {},
        llm=llm if llm is None or isinstance(llm, str | dict) else _serialize_llm_for_context(llm),
        **compat.execution_uuid_fields(),
    )


@contextlib.contextmanager
def fallback_persistence(factory: Callable[[], Any]) -> Iterator[bool]:
    """Make ``factory`` crewai's default flow persistence if no one registered one.

    Yields whether it did: a store someone else registered (the ``flow_store``
    fixture, the application) is left alone.
    """
    import crewai.flow.persistence.factory as persistence_factory

    if persistence_factory._factory is not None:
        yield False
        return
    persistence_factory.set_flow_persistence_factory(factory)
    try:
        yield True
    finally:
        if persistence_factory._factory is factory:
            persistence_factory.set_flow_persistence_factory(None)
