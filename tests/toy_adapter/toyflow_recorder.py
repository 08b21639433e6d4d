"""toyflow's part of the flight recorder: production runs recorded, replays shadowed.

Named by ``toyflow_adapter.SPEC`` (``RecorderPart(module="toyflow_recorder")``); it
imports only ``pytest_flows.recorder.parts`` (no pytest, nothing of the harness), and
each attribute it replaces is declared in ``toyflow_adapter.SEAMS``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
from collections.abc import Callable
from typing import Any

import toyflow

from pytest_flows.recorder.parts import (
    LOG,
    Patches,
    RunRecording,
    begin,
    current,
    error_fields,
    recording,
    render_value,
)

FRAMEWORK = "toyflow"
_replaying: contextvars.ContextVar[RunRecording | None] = contextvars.ContextVar(
    "toyflow_replaying", default=None
)
_calls = itertools.count(1)


def _run() -> RunRecording | None:
    return current() or _replaying.get()


def _patch(patches: Patches) -> None:
    Flow = toyflow.Flow
    kickoff, llm, ask, tool = Flow.kickoff, Flow.llm, Flow.ask, Flow.tool

    @functools.wraps(kickoff)
    def _kickoff(self: Any, inputs: Any = None, listener: Any = None) -> Any:
        cls = type(self)
        own = begin(FRAMEWORK, "0", f"{cls.__module__}:{cls.__qualname__}", {"inputs": inputs})
        run = own or _run()
        if run is None:
            return kickoff(self, inputs, listener)
        given = listener or self._listener

        def listen(what: str, step: str, value: Any) -> None:
            if what == "started":
                run.note("method.started", method=step)
            elif what == "finished":
                run.note("method.finished", method=step, rendered=render_value(value))
            given(what, step, value)

        run.note("flow.started", flow=cls.__name__)
        with recording(own) if own is not None else contextlib.nullcontext():
            try:
                output = kickoff(self, inputs, listen)
            except BaseException as exc:
                if own is not None:
                    own.finish("failed", error=error_fields(exc))
                raise
        if own is not None:
            own.finish("finished", output=output, rendered=render_value(output))
        return output

    @functools.wraps(llm)
    def _llm(self: Any, prompt: str, *, tools: tuple[str, ...] = ()) -> Any:
        run = _run()
        if run is None:
            return llm(self, prompt, tools=tools)
        call_id = f"call-{next(_calls)}"
        run.note(
            "llm.request",
            call_id=call_id,
            method=self.current,
            model="toy-model",
            messages=[{"role": "user", "content": prompt}],
            tools=list(tools),
        )
        reply = llm(self, prompt, tools=tools)
        try:
            if isinstance(reply, dict):
                called = [{"name": reply["tool"], "arguments": dict(reply["args"])}]
                run.note(
                    "llm.response",
                    call_id=call_id,
                    method=self.current,
                    response=called,
                    response_type="tool_calls",
                )
            else:
                run.note(
                    "llm.response",
                    call_id=call_id,
                    method=self.current,
                    response=str(reply),
                    response_type="text",
                )
        except Exception:
            LOG.exception("toyflow recorder: recording a model reply failed")
        return reply

    @functools.wraps(ask)
    def _ask(self: Any, question: str) -> str:
        answer = ask(self, question)
        run = _run()
        if run is not None:
            run.note("human.answered", method=self.current, answer=answer, via="ask")
        return answer

    @functools.wraps(tool)
    def _tool(self: Any, name: str, **args: Any) -> Any:
        run = _run()
        if run is None:
            return tool(self, name, **args)
        run.note("tool.started", method=self.current, tool=name, args=dict(args))
        output = tool(self, name, **args)
        run.note("tool.finished", method=self.current, tool=name, output=output)
        return output

    patches.replace(Flow, "kickoff", _kickoff)
    patches.replace(Flow, "llm", _llm)
    patches.replace(Flow, "ask", _ask)
    patches.replace(Flow, "tool", _tool)


def install() -> Callable[[], None]:
    """Record every toyflow run while a recorder is on; returns the undo."""
    if Patches.installed(toyflow.Flow, "kickoff"):
        return lambda: None
    patches = Patches()
    _patch(patches)
    return patches.undo


def shadow(
    run: RunRecording, *, answer_tool: Callable[..., Any] | None = None
) -> Callable[[], None]:
    """Record the toyflow runs of this context into ``run`` (``flows.replay`` compares)."""
    undo = install()
    token = _replaying.set(run)

    def done() -> None:
        _replaying.reset(token)
        undo()

    return done
