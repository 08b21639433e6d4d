"""crewai's side of golden replay: saves, checkpoints, pending feedback, topology, resumes.

A recorded run keeps everything its flow persisted, as the production codecs
wrote it: every ``@persist`` save its state id got, every checkpoint
(``checkpoint=True`` / ``CheckpointConfig``) and the pending-feedback record of
a run that paused for a human. It also keeps the topology of the flow class
(each method's kind and trigger, each router's declared labels) and what
resuming from each record did. On today's code each record is decoded
(``codec``), its state validated against today's state model (``schema``), the
methods, routes and listeners the stored run names are looked up in today's
class (``topology``), and each record is put in a fresh store, restored and
run to the end with the scripted replies the test used (``behaviour``).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from crewai.flow.flow import Flow
from pydantic import BaseModel, ValidationError

from pytest_flows.adapters import (
    FlowStore,
    GoldenBreak,
    PendingFeedback,
    Scripted,
    ScriptedHuman,
    StoreCorruptedError,
    decode_stored,
    jsonable,
    owned_class,
    render_value,
)
from pytest_flows.crewai import _crews as crewai_crews
from pytest_flows.crewai import _graph as crewai_graph
from pytest_flows.crewai import _human as crewai_human
from pytest_flows.crewai import _llm as crewai_llm
from pytest_flows.crewai import _persistence as persistence
from pytest_flows.crewai._patches import render_condition

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowRun, FlowsSession

__all__ = ["ADAPTER", "CrewAIGolden", "state_model_problems", "topology_of"]

_STARTED = re.compile(r"^method started (\S+)")
_CHOSE = re.compile(r"^router chose (\S+) label=(.+)$")


def topology_of(cls: type) -> dict[str, dict[str, Any]]:
    """Each method: its kind, what triggers it and (routers) the labels it declares."""
    definition: Any = cls.flow_definition()  # type: ignore[attr-defined]
    shape: dict[str, dict[str, Any]] = {}
    for name, method in sorted(dict(definition.methods).items()):
        kind = "router" if method.router else "start" if method.start else "listen"
        trigger = crewai_graph._trigger(method)
        shape[name] = {
            "kind": kind,
            "trigger": None if trigger is None else render_condition(trigger),
            "labels": sorted(crewai_graph._declared_labels(method)),
        }
    return shape


def _leaves(trigger: str | None) -> set[str]:
    if not trigger:
        return set()
    return {part for part in re.split(r"[(), ]+", trigger) if part and part not in {"and", "or"}}


def _describe(entry: dict[str, Any]) -> str:
    text = f"{entry['kind']}({entry['trigger'] or ''})"
    return text + (f" labels={entry['labels']}" if entry.get("labels") else "")


def state_model_problems(model: type[BaseModel], stored: dict[str, Any]) -> list[str]:
    """Why ``stored`` does not fit ``model``: new required fields, removed fields, types."""
    problems: list[str] = []
    try:
        model.model_validate(stored)
    except ValidationError as exc:
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"]) or "<root>"
            if error["type"] == "missing":
                problems.append(f"new required field {path!r}: the stored state has no value")
            elif error["type"] == "extra_forbidden":
                problems.append(f"removed field {path!r}: the model forbids it now")
            else:
                shown = render_value(error.get("input"), limit=40)
                problems.append(
                    f"changed type of {path!r}: stored {shown} fails ({error['type']}: "
                    f"{error['msg']})"
                )
    known = set(model.model_fields)
    extra = model.model_config.get("extra")
    if extra != "allow":
        for name in stored:
            if name not in known and name != "id" and extra != "forbid":
                problems.append(
                    f"removed field {name!r}: the stored value would be dropped on resume"
                )
    return problems


def _resolve(ref: str) -> type | None:
    # Only a class the owning test ran or its module holds: a golden file arrives by pull
    # request, and importing what it names would run that module.
    cls = owned_class(ref)
    return cls if isinstance(cls, type) and issubclass(cls, Flow) else None


def _state_model(cls: type) -> type[BaseModel] | None:
    try:
        state = cls().state
    except Exception:  # a constructor that needs arguments: the declared model then
        declared = getattr(cls, "_initial_state_t", None)
        if isinstance(declared, type) and issubclass(declared, BaseModel):
            return declared
        return None
    unwrap = getattr(state, "_unwrap", None)
    if callable(unwrap):
        state = unwrap()
    return type(state) if isinstance(state, BaseModel) else None


def _checkpoint_parts(raw: str, what: str) -> tuple[dict[str, Any] | None, list[str]]:
    """(flow state, completed methods) of a checkpoint document; raises if it does not decode."""

    def shape(value: Any) -> str | None:
        if not isinstance(value, dict) or not isinstance(value.get("entities"), list):
            return "it is not a checkpoint document (no 'entities' list)"
        return None

    payload = decode_stored(raw, what, need=shape)
    flows = [
        e for e in payload["entities"] if isinstance(e, dict) and e.get("entity_type") == "flow"
    ]
    if not flows:
        return None, []
    # After Flow.fork a checkpoint lists the restored flow, then the one that runs: the newest.
    entity = flows[-1]
    state = entity.get("checkpoint_state")
    completed = sorted(str(m) for m in entity.get("checkpoint_completed_methods") or ())
    return (state if isinstance(state, dict) else None), completed


def _stable_checkpoint(raw: str) -> str:
    # crewai writes a flow's completed methods from a set: their order follows the
    # hash seed. Sorted, the document decodes to the same checkpoint on every seed.
    try:
        payload = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(payload, dict) or json.dumps(payload) != raw:
        return raw  # not crewai's plain json.dumps: leave the bytes alone
    for entity in payload.get("entities") or ():
        completed = entity.get("checkpoint_completed_methods") if isinstance(entity, dict) else None
        if isinstance(completed, list) and all(isinstance(m, str) for m in completed):
            entity["checkpoint_completed_methods"] = sorted(completed)
    return json.dumps(payload)


def _stable_context(raw: str) -> str:
    # crewai stamps requested_at with the real wall clock (a default_factory bound at
    # import, out of the harness's reach): the one volatile field of the record.
    try:
        context = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(context, dict) or "requested_at" not in context:
        return raw
    context["requested_at"] = "2025-01-01T00:00:00"
    return json.dumps(context)


def _script_answer(human: ScriptedHuman, recorded: Any) -> None:
    """Script ``human`` with one recorded answer (see ``replay.human_answers``)."""
    if recorded == "<pause>":
        human.pause(optional=True)
    elif recorded == "<timeout>":
        human.timeout(optional=True)
    elif isinstance(recorded, dict) and "text" in recorded:
        human.answer(str(recorded["text"]), outcome=recorded.get("outcome"), optional=True)
    else:
        human.answer(str(recorded), optional=True)


@contextlib.contextmanager
def _replaying(
    session: FlowsSession, store: FlowStore, scripted: Scripted
) -> Iterator[ScriptedHuman]:
    """``store`` and the test's recorded replies, answers and crew results bound for a resume;
    yields the bound human (a resume of pending feedback answers through it)."""
    script = scripted.llm_script()
    with contextlib.ExitStack() as stack:
        stack.enter_context(persistence.install(session, store))
        stack.enter_context(crewai_llm.install(session, script))
        if scripted.crews:
            fake = crewai_crews.FakeCrews(session)
            fake.reply(*scripted.crews, optional=True)
            fake.allow_unused()
            stack.enter_context(crewai_crews.install(session, fake))
        human = ScriptedHuman(session)
        human.allow_unused()
        if scripted.human or scripted.resumes:
            for answer in scripted.human:
                _script_answer(human, answer)
            stack.enter_context(crewai_human.install(session, human))
        yield human


class CrewAIGolden:
    framework = "crewai"
    run_keys: ClassVar[dict[str, type]] = {"saves": list}
    #: crewAI's flow state, pending feedback and checkpoints hold no field of its own
    #: with a secret-looking name (see the Agent Framework adapter's list).
    framework_fields: dict[str, str] = {}

    def accepts(self, run: FlowRun) -> bool:
        return isinstance(run.flow, Flow)

    # -- recording ----------------------------------------------------------------
    def capture(
        self, session: FlowsSession, run: FlowRun, kwargs: dict[str, Any], seen: set[str]
    ) -> dict[str, Any]:
        cls = type(run.flow)
        store = persistence.current_backend().store
        state_id = persistence.state_id_of(run.state)
        saves = []
        for save in store.history(state_id) if state_id else []:
            key = f"{save.state_id}#{save.index}"
            if key in seen:
                continue
            seen.add(key)
            saves.append(
                {
                    "state_id": save.state_id,
                    "index": save.index,
                    "method": save.method,
                    "raw": save.raw,
                }
            )
        checkpoints = []
        for record in store.checkpoints():
            if f"checkpoint {record.id}" in seen:
                continue
            seen.add(f"checkpoint {record.id}")
            checkpoints.append(
                {
                    "n": record.n,
                    "id": record.id,
                    "location": record.location,
                    "base": record.base,
                    "kind": record.kind,
                    "branch": record.branch,
                    "parent_id": record.parent_id,
                    "trigger": record.trigger,
                    "completed": list(record.completed),
                    "raw": _stable_checkpoint(record.raw),
                }
            )
        entry: dict[str, Any] = {
            "flow": f"{cls.__module__}:{cls.__qualname__}",
            "inputs": jsonable(kwargs.get("inputs")),
            "topology": topology_of(cls),
            "saves": saves,
        }
        if checkpoints:
            entry["checkpoints"] = checkpoints
        pending = store.pending(state_id) if state_id else None
        if pending is not None:
            entry["pending"] = {
                "state_id": pending.state_id,
                "method": pending.method,
                "saves": len(store.history(state_id)),
                "context": _stable_context(pending.raw_context),
                "state": pending.raw_state,
            }
        return entry

    # -- restore and resume -----------------------------------------------------------
    def replay(
        self, session: FlowsSession, recorded: dict[str, Any], scripted: Scripted, today: Any
    ) -> list[dict[str, Any]]:
        cls = _resolve(recorded["flow"])
        if cls is None:
            return []
        results = []
        saves = recorded.get("saves", [])
        for k, save in enumerate(saves, start=1):
            store = self._store(session, saves[:k])

            def resume(_: ScriptedHuman, save: dict[str, Any] = save) -> FlowRun:
                flow = cls(persistence=persistence.routed_persistence())
                return session.run(flow, inputs={"id": save["state_id"]}, raise_on_error=False)

            trace, output = _outcome(session, store, scripted, resume)
            results.append(
                {"from": f"save {k} (after {save['method']!r})", "trace": trace, "output": output}
            )
        checkpoints = recorded.get("checkpoints", [])
        for k, stored in enumerate(checkpoints, start=1):
            store = self._store(session, [])
            for earlier in checkpoints[:k]:
                store.add_checkpoint(
                    id=earlier["id"],
                    location=earlier["location"],
                    parent_id=earlier["parent_id"],
                    branch=earlier["branch"],
                    trigger=earlier["trigger"],
                    raw=earlier["raw"],
                    framework="crewai",
                    kind=earlier["kind"],
                    base=earlier["base"],
                    completed=tuple(earlier["completed"]),
                )

            def restore(_: ScriptedHuman, stored: dict[str, Any] = stored) -> FlowRun:
                return session.run(
                    cls, from_checkpoint=_restore_config(stored), raise_on_error=False
                )

            trace, output = _outcome(session, store, scripted, restore)
            results.append({"from": f"checkpoint {k}", "trace": trace, "output": output})
        pending = recorded.get("pending")
        if pending is not None:
            store = self._store(session, saves[: pending["saves"]])
            store.put_pending(
                PendingFeedback(
                    state_id=pending["state_id"],
                    method=pending["method"],
                    raw_context=pending["context"],
                    raw_state=pending["state"],
                    framework="crewai",
                )
            )
            answer = _resume_answer(scripted, pending["state_id"])

            def resume_pending(human: ScriptedHuman, pending: dict[str, Any] = pending) -> FlowRun:
                flow = cls.from_pending(  # type: ignore[attr-defined]
                    pending["state_id"], persistence=persistence.routed_persistence()
                )
                return crewai_human.resume(human, flow, answer["feedback"], answer["outcome"])

            trace, output = _outcome(session, store, scripted, resume_pending)
            results.append(
                {
                    "from": f"pending feedback (in {pending['method']!r})",
                    "trace": trace,
                    "output": output,
                }
            )
        return results

    @staticmethod
    def _store(session: FlowsSession, saves: list[dict[str, Any]]) -> FlowStore:
        store = FlowStore(session)
        for earlier in saves:
            store.append_save(
                earlier["state_id"], earlier["method"], earlier["raw"], framework="crewai"
            )
        return store

    # -- today's code -------------------------------------------------------------------
    def check(
        self, session: FlowsSession, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        cls = _resolve(recorded["flow"])
        if cls is None:
            return [
                GoldenBreak(
                    "topology",
                    where,
                    f"the golden names flow class {recorded.get('flow')}, which is not one this "
                    "test ran or its module defines (renamed or removed?); golden replay never "
                    "imports a class on a golden file's say-so",
                )
            ]
        breaks: list[GoldenBreak] = []
        states: list[tuple[str, dict[str, Any]]] = []
        for save in recorded.get("saves", []):
            label = f"{where}, save {save['index']} (after {save['method']!r})"
            try:
                states.append((label, decode_stored(save["raw"], f"the stored {label}")))
            except StoreCorruptedError as exc:
                breaks.append(
                    GoldenBreak("codec", label, "today's codec cannot decode it", str(exc))
                )
        for k, stored in enumerate(recorded.get("checkpoints", []), start=1):
            label = f"{where}, checkpoint {k}"
            try:
                state, _ = _checkpoint_parts(stored["raw"], f"the stored {label}")
            except StoreCorruptedError as exc:
                breaks.append(
                    GoldenBreak("codec", label, "today's codec cannot decode it", str(exc))
                )
                continue
            if state is not None:
                states.append((label, state))
        pending = recorded.get("pending")
        if pending is not None:
            label = f"{where}, pending feedback (in {pending['method']!r})"
            try:
                decode_stored(pending["context"], f"the stored context of the {label}")
                states.append((label, decode_stored(pending["state"], f"the stored {label}")))
            except StoreCorruptedError as exc:
                breaks.append(
                    GoldenBreak("codec", label, "today's codec cannot decode it", str(exc))
                )
        model = _state_model(cls)
        if model is not None:
            for label, snapshot in states:
                if not isinstance(snapshot, dict):
                    continue
                problems = state_model_problems(model, snapshot)
                if problems:
                    breaks.append(
                        GoldenBreak(
                            "schema",
                            label,
                            f"the stored state does not fit today's {_model_name(model)}",
                            "\n".join(problems),
                        )
                    )
        breaks.extend(self._topology(recorded, topology_of(cls), where))
        return breaks

    def _topology(
        self, recorded: dict[str, Any], today: dict[str, dict[str, Any]], where: str
    ) -> list[GoldenBreak]:
        before: dict[str, dict[str, Any]] = recorded.get("topology", {})
        ran: set[str] = set()
        labels: set[str] = set()
        for line in recorded.get("trace", []):
            if match := _STARTED.match(line):
                ran.add(match.group(1))
            elif match := _CHOSE.match(line):
                labels.add(match.group(2).strip("'\""))
        named = ran | {save["method"] for save in recorded.get("saves", [])}
        for stored in recorded.get("checkpoints", []):
            named |= set(stored.get("completed", []))
        if recorded.get("pending"):
            named.add(recorded["pending"]["method"])
        # every listener the stored run's methods and labels would wake
        named |= {m for m, e in before.items() if _leaves(e["trigger"]) & (ran | labels)}
        lines: list[str] = []
        for name in sorted(named):
            old, new = before.get(name), today.get(name)
            if old is None:
                continue
            if new is None:
                lines.append(f"- {name}: {_describe(old)} (no longer in the flow)")
            elif old != new:
                lines.append(f"~ {name}: {_describe(old)} -> {_describe(new)}")
        for name in sorted(set(today) - set(before)):
            woken = _leaves(today[name]["trigger"]) & (ran | labels)
            if woken:
                lines.append(
                    f"+ {name}: {_describe(today[name])} (new: a resumed run would also run it "
                    f"after {', '.join(sorted(woken))})"
                )
        if not lines:
            return []
        return [
            GoldenBreak(
                "topology",
                where,
                "methods, routes or listeners the stored run names are gone or changed",
                "\n".join(lines),
            )
        ]


def _restore_config(stored: dict[str, Any]) -> Any:
    from crewai.state.checkpoint_config import CheckpointConfig

    if stored["kind"] == "sqlite":
        from crewai.state.provider.sqlite_provider import SqliteProvider

        return CheckpointConfig(
            location=stored["base"], provider=SqliteProvider(), restore_from=stored["location"]
        )
    return CheckpointConfig(restore_from=stored["location"])


def _resume_answer(scripted: Scripted, state_id: str) -> dict[str, Any]:
    """What the test answered when it resumed ``state_id`` (its default outcome if it did not)."""
    for resumed in scripted.resumes:
        if resumed["state_id"] == state_id:
            return resumed
    return {"state_id": state_id, "feedback": "", "outcome": None}


def _outcome(
    session: FlowsSession, store: FlowStore, scripted: Scripted, run: Any
) -> tuple[list[str], str]:
    """Trace and output of ``run()`` on ``store`` with the recorded replies; kept out of
    the test's own trace."""
    mark = session.event_count()
    try:
        with _replaying(session, store, scripted) as human:
            result = run(human)
        trace, output = result.trace.lines(), result._normalizer().text(render_value(result.output))
        if result.error is not None:
            output = f"error: {type(result.error).__name__}"
    except pytest.fail.Exception as exc:  # a scripted fake ran out
        trace, output = [], f"error: {type(exc).__name__}"
    except Exception as exc:  # a restore today's code refuses
        trace, output = [], f"error: {type(exc).__name__}"
    _drop_events(session, mark)
    return trace, output


def _model_name(model: type[BaseModel]) -> str:
    from pytest_flows.crewai._kickoff_args import declared_model

    return declared_model(model).__name__


def _drop_events(session: FlowsSession, mark: int) -> None:
    # The replays are not part of the test's own trace (its failure report).
    with session._events_lock:
        del session._events[mark:]


ADAPTER = CrewAIGolden()
