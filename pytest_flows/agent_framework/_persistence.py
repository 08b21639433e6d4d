"""Agent Framework's side of ``flow_store``: checkpoints written into the store."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_flows.adapters import (
    CheckpointRecord,
    CrashPoint,
    FlowsUsageError,
    Outcome,
    SimulatedCrash,
)
from pytest_flows.agent_framework._checkpoints import (
    CheckpointRules,
    FlowsCheckpointStorage,
    check_rules,
)

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = ["AgentFrameworkOperations", "AgentFrameworkStoreBackend", "checkpoint_storage"]


class AgentFrameworkStoreBackend:
    """What ``flow_store`` knows about Agent Framework: its checkpoint storage.

    While ``flow_store`` is requested, ``backend.storage`` (a
    :class:`FlowsCheckpointStorage` writing into the store) is the checkpoint
    storage of every ``flows.run`` that does not pass its own. It applies the
    rules of the storage each workflow was built with (``"memory"`` for
    ``InMemoryCheckpointStorage``, ``"file"`` otherwise) until the test chooses.
    """

    framework = "agent_framework"

    def __init__(self, store: Any, session: FlowsSession | None = None) -> None:
        self.store = store
        self.session = session
        self.storage = FlowsCheckpointStorage(store=store)
        self.storage.use_rules(None)  # follow each run's workflow

    def allow(self, *types: type | str) -> None:
        """Let the restricted unpickler rebuild these types (as ``allowed_checkpoint_types``)."""
        self.storage.allow(*types)

    def accepts(self, target: object) -> bool:
        from agent_framework import Workflow, WorkflowCheckpoint

        from pytest_flows.adapters import FlowRun

        if isinstance(target, FlowRun):
            return isinstance(target.flow, Workflow)
        return isinstance(target, Workflow | WorkflowCheckpoint)

    def round_trip(self, state: Any) -> list[Any]:
        return self.storage.round_trip(state)[1]

    def state_id(self, state: Any) -> str | None:
        return None

    def operations(self, flows: FlowsSession) -> AgentFrameworkOperations:
        """What the state properties (``check_crash_resume``...) run a workflow with."""
        return AgentFrameworkOperations(flows, self)


def checkpoint_storage(
    flow_store: Any, *, rules: CheckpointRules | None = None
) -> FlowsCheckpointStorage:
    """The Agent Framework checkpoint storage behind ``flow_store`` in this test.

    By default it applies the rules of the storage each workflow was built with;
    ``rules="file"`` checks every checkpoint as ``FileCheckpointStorage`` would
    (strict: for a workflow that uses ``InMemoryCheckpointStorage`` today and a
    durable storage tomorrow), ``rules="memory"`` as ``InMemoryCheckpointStorage``.
    """
    backend = flow_store.backend("agent_framework")
    storage: FlowsCheckpointStorage = backend.storage
    if rules is not None:
        storage.use_rules(check_rules(rules, "checkpoint_storage(flow_store, rules=...)"))
    return storage


class AgentFrameworkOperations:
    """The state properties' framework work for workflows: a "save" is a checkpoint.

    ``flow`` is a factory of fresh workflows (``lambda: build_workflow()``);
    ``inputs`` are ``flows.run``'s keyword arguments (``{"message": ...}``).
    A crash stops the run right after (or just before) its k-th checkpoint
    write; resuming restores the last checkpoint written (none: a fresh run).
    """

    def __init__(self, flows: FlowsSession, backend: AgentFrameworkStoreBackend) -> None:
        self.flows = flows
        self.backend = backend
        #: checkpoint id -> the outputs the crashed run had yielded (delivered) by then
        self._delivered: dict[str, list[Any]] = {}

    def describe(self, flow: Any) -> str:
        name = getattr(flow, "__name__", "")
        return (
            str(getattr(flow, "__qualname__", name)) if name and name != "<lambda>" else repr(flow)
        )

    def _build(self, flow: Any) -> Any:
        from agent_framework import Workflow

        if isinstance(flow, Workflow) or not callable(flow):
            raise FlowsUsageError(
                f"the state properties need a factory of fresh workflows, got {flow!r}: pass "
                "e.g. lambda: build_workflow() (a workflow object runs once)."
            )
        made = flow()
        if not isinstance(made, Workflow):
            raise FlowsUsageError(
                f"the workflow factory {self.describe(flow)} returned "
                f"{type(made).__qualname__}, not an Agent Framework Workflow."
            )
        return made

    def _run(self, flow: Any, inputs: Mapping[str, Any] | None, **extra: Any) -> Any:
        call = {**copy.deepcopy(dict(inputs or {})), **extra}
        return self.flows.run(self._build(flow), raise_on_error=False, **call)

    def _outcome(self, run: Any, **extra: Any) -> Outcome:
        return Outcome(
            state=json.loads(json.dumps(run.state, default=repr, sort_keys=True)),
            typed_state=copy.deepcopy(run.state),
            output=run.output,
            trace=run.trace,
            state_id=None,
            error=run.error,
            saves=len(run.checkpoints),
            **extra,
        )

    def run(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome:
        return self._outcome(self._run(flow, inputs))

    def crash(self, flow: Any, inputs: dict[str, Any] | None, point: CrashPoint) -> str | None:
        storage = self.backend.storage
        original = storage.save
        written: list[str] = []

        async def save(checkpoint: Any) -> str:
            if len(written) + 1 == point.save and point.when == "before":
                raise self._crashed(point, written)
            checkpoint_id: str = await original(checkpoint)
            written.append(checkpoint_id)
            if len(written) == point.save:
                raise self._crashed(point, written)
            return checkpoint_id

        storage.save = save  # type: ignore[method-assign]
        try:
            self._run(flow, inputs)
        except SimulatedCrash as crash:
            return crash.state_id
        finally:
            del storage.save
        return None

    def _crashed(self, point: CrashPoint, written: list[str]) -> SimulatedCrash:
        from pytest_flows.agent_framework._tracing import active_tracer

        last = written[-1] if written else ""
        tracer = active_tracer.get()  # the crashing run's: saves run in its context
        self._delivered[last] = list(tracer.outputs) if tracer is not None else []
        self.backend.store.record("store.crashed", "checkpoint", id=last or "-", point=str(point))
        return SimulatedCrash(point, last)

    def resume(self, flow: Any, inputs: dict[str, Any] | None, state_id: str) -> Outcome:
        if not state_id:  # crashed before its first checkpoint: start over
            return self.run(flow, inputs)
        outcome = self._outcome(self._run(flow, None, checkpoint_id=state_id))
        delivered = self._delivered.get(state_id, [])
        if outcome.output is None and delivered:
            # Restored after its last output: the crashed run had already yielded it.
            outcome.output = delivered[-1]
        return outcome

    def run_with_checkpoints(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome:
        mark = len(self.backend.store.checkpoints())
        run = self._run(flow, inputs)
        return self._outcome(run, checkpoints=self.backend.store.checkpoints()[mark:])

    def restore(self, flow: Any, checkpoint: CheckpointRecord) -> Outcome:
        return self._outcome(self._run(flow, None, checkpoint_id=checkpoint.id))

    def fork(
        self, flow: Any, inputs: dict[str, Any] | None, source: str, pin: str | None
    ) -> Outcome:
        raise FlowsUsageError(
            "fork isolation is about crewai's @persist state ids; a workflow branches by "
            "restoring a checkpoint: use check_time_travel or check_restore_equivalence."
        )

    def new_id(self) -> str:
        self.fork(None, None, "", None)
        return ""
