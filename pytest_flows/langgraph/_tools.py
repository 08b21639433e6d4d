"""``fake_tools`` for LangGraph: langchain-core tools answered by the test's script.

While bound, the *body* of every ``BaseTool`` (``@tool`` functions, ``StructuredTool``,
your own ``BaseTool`` subclasses; the tools a ``ToolNode`` runs) asks the script
(:class:`~pytest_flows.adapters.FakeTools`) first. langchain-core's own path around
the body still runs: argument parsing and validation, callbacks, ``handle_tool_error``,
and the ``ToolMessage`` (with its ``tool_call_id``) that ``ToolNode`` adds to the state.
Unscripted calls run the real tool unless ``fake_tools.strict()``.

Request keys: ``caller`` has ``tool`` (its name) and ``method`` (the LangGraph node
that runs it, ``"tools"`` for a ``ToolNode``); ``data["arguments"]`` are the arguments
the model gave (what LangGraph injects, ``InjectedState`` and the like, is left out).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections.abc import Iterator
from typing import Any

from langchain_core.tools import BaseTool

from pytest_flows.adapters import FakeTools, FlowsSession
from pytest_flows.langgraph._llm_seams import LLM_REGISTRY

__all__ = ["bind_tools"]

_TOOL = "langchain_core.tools:BaseTool"
#: Arguments langchain-core passes a tool's body that are not the tool's own.
_PLUMBING = frozenset({"run_manager", "config", "callbacks"})
#: Set while a faked body runs: the default ``_arun`` runs ``_run`` (asked once, not twice).
_answering: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pytest_flows_lg_tool", default=False
)


def _where() -> dict[str, Any]:
    from langgraph.config import get_config

    try:
        metadata = get_config().get("metadata") or {}
    except RuntimeError:  # called outside any runnable: no node to name
        return {}
    node = metadata.get("langgraph_node")
    return {"method": str(node)} if node else {}


def _own(tool: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments the model gave: not langchain-core's plumbing, nor what LangGraph
    injects (``InjectedState``, ``InjectedToolCallId``: not in ``tool_call_schema``)."""
    schema = getattr(tool, "tool_call_schema", None)
    fields = getattr(schema, "model_fields", None)
    return {
        key: value
        for key, value in kwargs.items()
        if key not in _PLUMBING and (not isinstance(fields, dict) or key in fields)
    }


class _Bodies:
    """Wraps each tool class's body the first time one of its tools runs."""

    def __init__(self, fake: FakeTools, stack: contextlib.ExitStack) -> None:
        self.fake = fake
        self.stack = stack
        self.done: set[type] = set()
        self.lock = threading.Lock()

    def cover(self, cls: type, name: str) -> None:
        self.fake.know(name)  # a scripted name no tool has is reported with these
        with self.lock:
            if cls in self.done:
                return
            self.done.add(cls)
            run = getattr(cls, "_run", None)
            if run is not None and not getattr(run, "__isabstractmethod__", False):
                seam = LLM_REGISTRY[f"{_TOOL}._run"]
                self.stack.enter_context(seam.shadow(cls, self._sync(run)))
            arun = getattr(cls, "_arun", None)
            if arun is not None and arun is not BaseTool._arun:
                # (BaseTool's own _arun runs _run in a thread: covered through _run)
                seam = LLM_REGISTRY[f"{_TOOL}._arun"]
                self.stack.enter_context(seam.shadow(cls, self._async(arun)))

    def _sync(self, original: Any) -> Any:
        fake = self.fake

        @functools.wraps(original)  # run() reads its signature (config=, run_manager=)
        def _run(tool: Any, *args: Any, **kwargs: Any) -> Any:
            if _answering.get():
                return original(tool, *args, **kwargs)

            def real() -> Any:
                return original(tool, *args, **kwargs)

            token = _answering.set(True)
            try:
                return fake.call(tool, args, _own(tool, kwargs), real, _where())
            finally:
                _answering.reset(token)

        return _run

    def _async(self, original: Any) -> Any:
        fake = self.fake

        @functools.wraps(original)
        async def _arun(tool: Any, *args: Any, **kwargs: Any) -> Any:
            if _answering.get():
                return await original(tool, *args, **kwargs)

            async def real() -> Any:
                return await original(tool, *args, **kwargs)

            token = _answering.set(True)
            try:
                return await fake.acall(tool, args, _own(tool, kwargs), real, _where())
            finally:
                _answering.reset(token)

        return _arun


@contextlib.contextmanager
def bind_tools(session: FlowsSession | None, fake: FakeTools) -> Iterator[None]:
    """Bind ``fake`` for one test: every langchain-core tool's body asks its script first."""
    run, arun = BaseTool.run, BaseTool.arun
    with contextlib.ExitStack() as stack:
        bodies = _Bodies(fake, stack)

        def patched_run(self: Any, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            bodies.cover(type(self), self.name)
            return run(self, tool_input, *args, **kwargs)

        async def patched_arun(self: Any, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            bodies.cover(type(self), self.name)
            return await arun(self, tool_input, *args, **kwargs)

        stack.enter_context(LLM_REGISTRY[f"{_TOOL}.run"].replace(patched_run))
        stack.enter_context(LLM_REGISTRY[f"{_TOOL}.arun"].replace(patched_arun))
        yield
