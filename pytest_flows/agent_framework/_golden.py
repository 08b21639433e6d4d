"""Agent Framework's side of golden replay: checkpoints, graph signature, restores.

A recorded run keeps every checkpoint it wrote (the JSON the file storage's
codec produced) and the workflow's graph signature (executors and edge groups,
as Agent Framework fingerprints them for restore). On today's workflow - the
one the test ran - each checkpoint is decoded under today's allow-list
(``codec``; always by the restricted unpickler, allowed what the test declared
and, under in-memory rules, what its own run pickled - never what the file
names), the graph is compared with the stored one (``topology``: Agent
Framework refuses such a restore with "graph has changed"), and each
checkpoint is restored and run to the end (``behaviour``) with the replies and
answers the test's fakes gave, bound afresh for each restore through the
adapter's own bind hooks. Workflow state is an untyped dict, so there is no
``schema`` check here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from agent_framework import FileCheckpointStorage, InMemoryCheckpointStorage, WorkflowCheckpoint

from pytest_flows.adapters import (
    FlowsUsageError,
    GoldenBreak,
    ScriptedHuman,
    bind_fake,
    render_value,
)
from pytest_flows.agent_framework import _patches as patches
from pytest_flows.agent_framework._checkpoints import FlowsCheckpointStorage
from pytest_flows.agent_framework._human import requests
from pytest_flows.agent_framework._pickle_types import pickled_type_keys

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowRun, FlowsSession, Scripted

__all__ = ["ADAPTER", "FRAMEWORK_FIELDS", "AgentFrameworkGolden", "graph_lines"]

#: Fields Agent Framework owns whose names look secret but are not credentials, with
#: why: the golden writer's secret check does not refuse them by name (an environment
#: secret's value in them is still refused, as anywhere).
FRAMEWORK_FIELDS = {
    "continuation_token": "the id of a long-running (background) response the service "
    "returned, to poll or resume it (AgentResponse, ChatResponse, their updates and the "
    "WorkflowMessage that carries them in a checkpoint); usually None",
}


def graph_lines(signature: dict[str, Any]) -> list[str]:
    """A workflow's graph signature as sorted, diffable lines."""
    lines = [f"start {signature.get('start_executor')}"]
    for executor_id, kind in sorted(signature.get("executors", {}).items()):
        shown = kind if isinstance(kind, str) else json.dumps(kind, sort_keys=True)
        lines.append(f"executor {executor_id}: {shown}")
    for group in signature.get("edge_groups", []):
        for edge in group.get("edges", []):
            condition = f" if {edge['condition']}" if edge.get("condition") else ""
            lines.append(
                f"edge {edge['source']} -> {edge['target']}{condition} ({group['group_type']})"
            )
    return sorted(lines)


def _storages(session: FlowsSession, workflow: Any, kwargs: dict[str, Any]) -> list[Any]:
    """The checkpoint storages the run could have used, the one it did use first: one
    passed to ``flows.run``, else ``flow_store``'s (it stands in for the built one), else
    the one the workflow was built with."""
    found = [kwargs.get("checkpoint_storage")]
    store = session.bound("store")
    if store is not None:
        found.append(_flow_store_storage(store))
    found.append(patches.built_storage(workflow))
    return [storage for storage in found if storage is not None]


def _flow_store_storage(store: Any) -> FlowsCheckpointStorage | None:
    try:
        backend = store.backend("agent_framework")
    except FlowsUsageError:  # a store without an Agent Framework side
        return None
    storage = getattr(backend, "storage", None)
    return storage if isinstance(storage, FlowsCheckpointStorage) else None


def _declared_types(storages: list[Any]) -> frozenset[str]:
    """What the test declared the restricted unpickler may rebuild: every allow-list of
    the storages in play (``allowed_checkpoint_types``, ``checkpoint_storage(flow_store)
    .allow(...)``, a ``FlowsCheckpointStorage(allowed_types=...)``)."""
    allowed: set[str] = set()
    for storage in storages:
        if isinstance(storage, FlowsCheckpointStorage):
            allowed |= storage.allowed_types
        elif not isinstance(storage, InMemoryCheckpointStorage):
            allowed |= patches.allowed_types_of(storage)
    return frozenset(allowed)


class _Allowed:
    """Per workflow the test ran: the types the golden check may unpickle.

    The declared allow-lists, plus - when the run's rules were in-memory ones, which
    declare none - the types the run's own checkpoints pickled. Never widened by what a
    golden file says.
    """

    def __init__(self) -> None:
        self._types: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()

    def note(self, workflow: Any, types: frozenset[str]) -> None:
        self._types[workflow] = self._types.get(workflow, frozenset()) | types

    def of(self, session: FlowsSession, workflow: Any) -> frozenset[str]:
        found = self._types.get(workflow)
        if found is None:
            found = _declared_types(_storages(session, workflow, {}))
        return found


def _memory_rules(storages: list[Any]) -> bool:
    used = storages[0] if storages else None
    if isinstance(used, FlowsCheckpointStorage):
        return used.rules == "memory"
    return isinstance(used, InMemoryCheckpointStorage)


def _decode(raw: str, allowed: frozenset[str]) -> WorkflowCheckpoint:
    # Always restricted: allowed_types=None would unpickle anything a file says.
    decoded = patches.decode_checkpoint_value(json.loads(raw), allowed_types=allowed)
    return WorkflowCheckpoint.from_dict(decoded)


def _raw_of(storages: list[Any], session: FlowsSession, checkpoint_id: str) -> str | None:
    store = session.bound("store")
    if store is not None:
        record = store.find_checkpoint(checkpoint_id)
        if record is not None:
            text: str = record.raw
            return text
    for storage in storages:
        if isinstance(storage, FlowsCheckpointStorage) and checkpoint_id in storage.ids():
            return json.dumps(storage.raw(checkpoint_id), ensure_ascii=False)
        if isinstance(storage, FileCheckpointStorage):
            path = storage.storage_path / f"{checkpoint_id}.json"
            if path.is_file():
                loaded = json.loads(path.read_text(encoding="utf-8"))
                return json.dumps(loaded, ensure_ascii=False)
    return None


def _script_answers(human: ScriptedHuman, recorded: list[Any]) -> None:
    """Script ``human`` with the recorded answers (``replay._human_value``), in order.

    A typed response the golden could only keep as text (a dataclass, a model)
    cannot be given again: the answers stop there, so none lands on the wrong request.
    """
    for answer in recorded:
        typed = answer.get("value") if isinstance(answer, dict) else None
        if answer == "<pause>":
            requests(human).pause(optional=True)
        elif isinstance(answer, dict) and "text" in answer:
            human.answer(str(answer["text"]), optional=True)
        elif isinstance(answer, dict) and "value" in answer and not isinstance(typed, str):
            requests(human).respond(typed, optional=True)
        else:
            return


@contextlib.contextmanager
def _replaying(session: FlowsSession, scripted: Scripted) -> Iterator[None]:
    """The test's recorded LLM replies and human answers bound for one restore, fresh
    (the test's own fakes are spent by then); unbound on exit."""
    adapter = session.ensure("agent_framework")
    if adapter is None:  # pragma: no cover - this module imports agent_framework
        yield
        return
    with contextlib.ExitStack() as stack:
        bound = bind_fake(adapter, session, "llm", scripted.llm_script())
        if bound is not None:
            stack.enter_context(bound)
        if scripted.human:
            human = ScriptedHuman(session)
            human.allow_unused()
            _script_answers(human, scripted.human)
            bound = bind_fake(adapter, session, "human", human)
            if bound is not None:
                stack.enter_context(bound)
        yield


class AgentFrameworkGolden:
    framework = "agent_framework"
    run_keys: ClassVar[dict[str, type]] = {"checkpoints": list}
    framework_fields = FRAMEWORK_FIELDS

    def __init__(self) -> None:
        self.allowed = _Allowed()

    def accepts(self, run: FlowRun) -> bool:
        from agent_framework import Workflow

        return isinstance(run.flow, Workflow)

    def capture(
        self, session: FlowsSession, run: FlowRun, kwargs: dict[str, Any], seen: set[str]
    ) -> dict[str, Any]:
        workflow = run.flow
        storages = _storages(session, workflow, kwargs)
        allowed = _declared_types(storages)
        memory = _memory_rules(storages)
        checkpoints = []
        for checkpoint_id in getattr(run, "checkpoints", []):
            if checkpoint_id in seen:
                continue
            seen.add(checkpoint_id)
            raw = _raw_of(storages, session, checkpoint_id)
            if raw is None:
                raise FlowsUsageError(
                    f"golden replay cannot read checkpoint {checkpoint_id} of workflow "
                    f"{workflow.name!r}: build it with FlowsCheckpointStorage or "
                    "FileCheckpointStorage, pass one to flows.run(checkpoint_storage=...), "
                    "or request flow_store."
                )
            if memory:  # the run's own encoding, made in this process: what it vouches for
                allowed |= pickled_type_keys(json.loads(raw))
            checkpoints.append({"id": checkpoint_id, "raw": raw})
        self.allowed.note(workflow, allowed)
        return {
            "flow": f"workflow {workflow.name or 'workflow'}",
            "graph": graph_lines(workflow.graph_signature),
            "graph_signature_hash": workflow.graph_signature_hash,
            "checkpoints": checkpoints,
        }

    def replay(
        self, session: FlowsSession, recorded: dict[str, Any], scripted: Scripted, today: Any
    ) -> list[dict[str, Any]]:
        if today is None:
            return []
        allowed = self.allowed.of(session, today)
        results = []
        for n, stored in enumerate(recorded.get("checkpoints", []), start=1):
            storage = FlowsCheckpointStorage(allowed_types=allowed, rules="memory")
            for earlier in recorded["checkpoints"][:n]:
                asyncio.run(storage.save(_decode(earlier["raw"], allowed)))
            mark = session.event_count()
            try:
                with _replaying(session, scripted):
                    run = session.run(
                        today,
                        checkpoint_id=stored["id"],
                        checkpoint_storage=storage,
                        raise_on_error=False,
                    )
                trace, output = run.trace.lines(), run._normalizer().text(render_value(run.output))
                if run.error is not None:
                    output = f"error: {type(run.error).__name__}"
            except pytest.fail.Exception as exc:  # a scripted fake ran out
                trace, output = [], f"error: {type(exc).__name__}"
            with session._events_lock:  # the replays are not part of the test's trace
                del session._events[mark:]
            results.append({"from": f"checkpoint {n}", "trace": trace, "output": output})
        return results

    def check(
        self, session: FlowsSession, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        if today is None:
            return [GoldenBreak("topology", where, "today's test ran no workflow in its place")]
        breaks: list[GoldenBreak] = []
        allowed = self.allowed.of(session, today)
        for n, stored in enumerate(recorded.get("checkpoints", []), start=1):
            try:
                _decode(stored["raw"], allowed)
            except Exception as exc:  # the restricted unpickler's refusal, a missing class
                breaks.append(
                    GoldenBreak(
                        "codec",
                        f"{where}, checkpoint {n}",
                        "today's codec cannot decode it",
                        f"{type(exc).__name__}: {exc}",
                    )
                )
        if recorded.get("graph_signature_hash") != today.graph_signature_hash:
            before, after = recorded.get("graph", []), graph_lines(today.graph_signature)
            diff = [f"- {line}" for line in before if line not in after]
            diff += [f"+ {line}" for line in after if line not in before]
            breaks.append(
                GoldenBreak(
                    "topology",
                    where,
                    "the workflow's graph changed: Agent Framework refuses to restore its "
                    "stored checkpoints ('graph has changed')",
                    "\n".join(diff) or "(same executors and edges; their types changed)",
                )
            )
        return breaks


ADAPTER = AgentFrameworkGolden()
