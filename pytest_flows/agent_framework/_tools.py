"""``fake_tools`` for Agent Framework: function tools answered by the test's script.

While bound, the body of every ``FunctionTool`` (``FunctionTool._invoke_function``:
the call of your function) asks the script
(:class:`~pytest_flows._internal.fakes.tool_script.FakeTools`) first. Agent Framework's own
path around it still runs: argument parsing and schema checks, invocation
limits, function middleware, telemetry, and parsing the result into
``Content`` for the model.

Request keys: ``caller`` has ``tool``, ``flow`` (the workflow's name) and
``method`` (the executor id) when a workflow runs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from agent_framework import FunctionTool

from pytest_flows.adapters import FakeTools
from pytest_flows.agent_framework import _patches as patches
from pytest_flows.agent_framework._seams import SEAMS

__all__ = ["install"]


def _where() -> dict[str, Any]:
    from pytest_flows.agent_framework._llm import current_workflow

    caller: dict[str, Any] = {}
    workflow = current_workflow.get()
    if workflow is not None:
        caller["flow"] = workflow.name or "workflow"
    target = getattr(patches.current_invocation(), "target", None)
    if target is not None:
        caller["method"] = target
    return caller


@contextlib.contextmanager
def install(fake: FakeTools) -> Iterator[None]:
    """Bind ``fake`` for one test: every function tool's body asks its script first."""
    original = FunctionTool.__dict__["_invoke_function"]

    async def _invoke_function(self: Any, call_kwargs: Mapping[str, Any]) -> Any:
        async def real() -> Any:
            return await original(self, call_kwargs)

        return await fake.acall(self, (), dict(call_kwargs), real, _where())

    with SEAMS["agent_framework:FunctionTool._invoke_function"].replace(_invoke_function):
        yield
