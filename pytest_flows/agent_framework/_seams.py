"""Every reach into Agent Framework that it does not promise to keep, declared once.

Each :class:`~pytest_flows._internal.contract.seams.Seam` names what the harness patches (or
shadows on one workflow's runner objects), the private functions it calls and
the private attributes it reads, why, and what it relies on there.
:func:`check_patch_points` resolves all of them (the test suite calls it): after
an upgrade it fails once, listing each seam that moved, the installed
agent-framework-core and the supported range. A new private reach gets its line
here in the same change; code patches through ``SEAMS[...].replace``/``.shadow``.
"""

from __future__ import annotations

import inspect
from typing import Any

from pytest_flows.adapters import Registry, Seam, framework_versions
from pytest_flows.adapters import check_seams as check

__all__ = ["RECORDER_SEAMS", "SEAMS", "check_patch_points"]

_WF = "agent_framework._workflows"
_EDGE = f"{_WF}._edge_runner"
_RUNNER = f"{_WF}._runner:RunnerImpl"
_CONTEXT = f"{_WF}._runner_context:InProcRunnerContext"
_STATE = f"{_WF}._state:State"
_GATHER = "gather_cancelling_siblings_on_error"
_OBSERVE = "observe() reports it for one workflow (an instance attribute shadows it)"


def _no_overrides(method: Any) -> str | None:
    from agent_framework._workflows._edge_runner import EdgeRunner

    overriding = [
        c.__name__ for c in EdgeRunner.__subclasses__() if "_execute_on_target" in vars(c)
    ]
    return f"is overridden by {overriding}" if overriding else None


def _commit_then_checkpoint(converge: Any) -> str | None:
    source = inspect.getsource(converge)
    steps = ("self._state.commit()", "create_checkpoint_if_enabled()", "superstep_completed(")
    where = [source.find(step) for step in steps]
    if -1 in where or where != sorted(where):
        return "no longer commits, then checkpoints, then reports superstep_completed"
    return None


def _through_super(layer: Any) -> str | None:
    if "super().get_response" in inspect.getsource(layer):
        return None
    return "no longer reaches the client through super().get_response"


WORKFLOWS = (
    *(
        Seam(
            f"{module}:{_GATHER}",
            "patch",
            "the seed orders each superstep's concurrent deliveries",
            params=("coroutines",),
            source=("ensure_future(",) if module == _EDGE else (),
        )
        for module in (_EDGE, f"{_WF}._runner")
    ),
    Seam(
        f"{_RUNNER}._run_iteration",
        "read",
        "deliveries are gathered per source (the call the seed orders)",
        source=(f"await {_GATHER}(", "drain_messages()"),
    ),
    Seam(
        f"{_EDGE}:FanOutEdgeRunner.send_message",
        "read",
        "a fan-out gathers its targets (the call the seed orders)",
        source=(f"{_GATHER}(",),
    ),
    Seam(
        f"{_EDGE}:EdgeRunner._execute_on_target",
        "patch",
        f"each delivery along an edge: {_OBSERVE}",
        params=("self", "target_id", "source_ids", "message"),
        probe=_no_overrides,
    ),
    Seam(
        f"{_EDGE}:EdgeRunner.__init__",
        "read",
        "a delivery is named by its edge group",
        source=("_edge_group",),
    ),
    Seam(
        f"{_RUNNER}.__init__",
        "read",
        "the runner's edge runners and iteration count",
        source=("self._edge_runners = ", "self._iteration = "),
    ),
    Seam(
        f"{_RUNNER}.run_until_convergence",
        "patch",
        f"the superstep event stream: {_OBSERVE}",
        source=("superstep_started", "superstep_completed"),
        probe=_commit_then_checkpoint,
    ),
    Seam(f"{_RUNNER}.restore_from_checkpoint", "patch", f"restores: {_OBSERVE}"),
    Seam(f"{_RUNNER}.context", "read", "the runner's context"),
    Seam(f"{_RUNNER}.state", "read", "the runner's shared state"),
    Seam(
        "agent_framework:Workflow",
        "read",
        "the workflow drives its runner's event stream",
        source=("self._runner.run_until_convergence()",),
    ),
    Seam(
        "agent_framework:Workflow.__init__",
        "read",
        "a workflow's runner and runner context",
        source=("self._runner_context = ", "self._runner: RunnerImpl = "),
    ),
    Seam(
        "agent_framework:Workflow.run",
        "patch",
        f"a sub-workflow's runs, traced under its WorkflowExecutor: {_OBSERVE}",
        params=("self", "message"),
    ),
    Seam(
        "agent_framework:WorkflowExecutor.process_workflow",
        "read",
        "a WorkflowExecutor runs its inner workflow through its run()",
        source=("await self.workflow.run(",),
    ),
    Seam(
        "agent_framework:WorkflowExecutor._handle_response",
        "read",
        "a WorkflowExecutor sends the answers back through its inner workflow's run()",
        source=("await self.workflow.run(",),
    ),
    Seam(f"{_CONTEXT}.send_message", "patch", f"sent messages: {_OBSERVE}"),
    Seam(f"{_CONTEXT}.add_event", "patch", f"events: {_OBSERVE}"),
    Seam(
        f"{_CONTEXT}.create_checkpoint",
        "patch",
        f"checkpoints: {_OBSERVE}",
        params=(
            "self",
            "workflow_name",
            "graph_signature_hash",
            "state",
            "previous_checkpoint_id",
            "iteration_count",
        ),
    ),
    Seam(f"{_CONTEXT}.send_request_info_response", "patch", f"responses: {_OBSERVE}"),
    Seam(
        f"{_CONTEXT}.add_request_info_event",
        "read",
        "request_info events reach the observer through add_event",
        source=("self.add_event(",),
    ),
    Seam(
        f"{_CONTEXT}.__init__",
        "read",
        "the checkpoint storage a workflow was built with",
        source=("self._checkpoint_storage = ",),
    ),
    Seam(f"{_CONTEXT}.get_pending_request_info_events", "call", "the requests a workflow awaits"),
    Seam(f"{_CONTEXT}.has_checkpointing", "call", "whether a workflow checkpoints"),
    Seam(f"{_STATE}.set", "patch", f"state writes: {_OBSERVE}"),
    Seam(f"{_STATE}.delete", "patch", f"state deletes: {_OBSERVE}"),
    Seam(
        f"{_STATE}.commit",
        "patch",
        f"state commits, with the pending writes in self._pending: {_OBSERVE}",
        source=("self._pending",),
    ),
    Seam(f"{_WF}._state:_DeleteSentinel", "read", "a pending delete is told from a write"),
    Seam(
        f"{_WF}._runner_context:MessageType",
        "read",
        "a delivered message is told apart as a response",
    ),
    Seam(f"{_WF}._const:INTERNAL_SOURCE_PREFIX", "read", "the workflow's own message sources"),
)

CHECKPOINTS = (
    Seam(
        "agent_framework:FileCheckpointStorage.__init__",
        "read",
        "a file storage's allowed checkpoint types",
        source=("self._allowed_types",),
    ),
    Seam(
        "agent_framework:FileCheckpointStorage.save",
        "read",
        "the codec FlowsCheckpointStorage mirrors: encode, then restrict-decode",
        source=(
            "encode_checkpoint_value(",
            "decode_checkpoint_value(encoded_checkpoint, allowed_types=self._allowed_types)",
        ),
    ),
    Seam(
        f"{_WF}._checkpoint_encoding:encode_checkpoint_value",
        "call",
        "checkpoints are encoded as FileCheckpointStorage encodes them",
    ),
    Seam(
        f"{_WF}._checkpoint_encoding:decode_checkpoint_value",
        "call",
        "checkpoints are decoded as FileCheckpointStorage decodes them",
    ),
)

CHAT_AND_TOOLS = (
    Seam(
        "agent_framework:BaseChatClient.get_response",
        "patch",
        "every chat client's model call goes to the fake (below the tool loop)",
        params=("self", "messages", "stream", "options"),
        source=("self._inner_get_response(",),
    ),
    Seam(
        "agent_framework:FunctionInvocationLayer",
        "read",
        "the tool loop reaches the client below it",
        probe=_through_super,
    ),
    Seam(
        "agent_framework._middleware:ChatMiddlewareLayer",
        "read",
        "chat middleware reaches the client below it",
        probe=_through_super,
    ),
    Seam(
        "agent_framework:BaseChatClient._inner_get_response",
        "patch",
        "the fake chat client implements the provider step",
        params=("self", "messages", "stream", "options"),
    ),
    Seam(
        "agent_framework:BaseChatClient._build_response_stream",
        "call",
        "the fake chat client streams as a provider does",
        params=("self", "stream", "response_format"),
    ),
    Seam(
        "agent_framework:FunctionTool._invoke_function",
        "patch",
        "fake_tools answers a tool's body",
        params=("self", "call_kwargs"),
    ),
    Seam(
        "agent_framework:FunctionTool.invoke",
        "read",
        "invoke() runs the body through _invoke_function",
        source=("self._invoke_function(",),
    ),
)

SEAMS = Registry("agent_framework", __name__, *WORKFLOWS, *CHECKPOINTS, *CHAT_AND_TOOLS)

# -- the flight recorder (pytest_flows/recorder/_agent_framework.py) ---------------------
# Its own registry: the recorder patches in production, through capture.Patches (it
# imports no harness), some of the targets the harness patches too.
_REC = "the flight recorder"
RECORDER = (
    Seam(
        "agent_framework:Workflow._run_core",
        "patch",
        f"{_REC} records a run: its start, events, checkpoints and end",
        params=("self", "message"),
    ),
    Seam(
        "agent_framework:Executor.execute",
        "patch",
        f"{_REC} attributes each model request to the executor running it",
    ),
    Seam(
        "agent_framework:BaseChatClient.get_response",
        "patch",
        f"{_REC} records each model request and response (streamed or not)",
        params=("self", "messages"),
    ),
    Seam(
        "agent_framework:FunctionInvocationLayer.get_response",
        "patch",
        f"{_REC} adds its function middleware to the tool loop (tool calls, results)",
    ),
    Seam(
        "agent_framework:WorkflowBuilder.build",
        "patch",
        f"{_REC} notes the module-level function that built a workflow (its factory)",
    ),
    Seam(
        "agent_framework:Workflow.__init__",
        "read",
        f"{_REC} finds the builder's checkpoint storage on the runner context",
        source=("self._runner_context",),
    ),
    Seam(
        f"{_CONTEXT}.__init__",
        "read",
        f"{_REC} wraps the runner context's checkpoint storage to record the saves",
        source=("self._checkpoint_storage",),
    ),
)
RECORDER_SEAMS = Registry("agent_framework", __name__, *RECORDER)


def check_patch_points() -> None:
    """Raise :class:`~pytest_flows._internal.contract.seams.SeamsMoved` naming every seam
    that moved.

    Covers every declaration above (the flight recorder's too) and the stdlib's
    seams, so one call vets every patch an Agent Framework test or recording gets.
    """
    from pytest_flows.adapters import check_stdlib_seams

    installed, supported = framework_versions("agent_framework")
    check(
        (*SEAMS, *RECORDER_SEAMS),
        owner="agent_framework",
        installed=installed,
        supported=supported,
    )
    check_stdlib_seams()
