"""crewai's side of golden replay: ``@persist`` saves, flow topology, resumes.

A recorded run keeps every save its state id got (the bytes the production
codec wrote), the topology of the flow class (each method's kind and trigger,
each router's declared labels) and, per save, what resuming from it did. On
today's code the saves are decoded (``codec``), validated against today's state
model (``schema``), the methods, routes and listeners the stored run names are
looked up in today's class (``topology``), and each save is put in a fresh
store and resumed (``behaviour``).
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any

import pytest
from crewai.flow.flow import Flow
from pydantic import BaseModel, ValidationError

from pytest_flows.crewai import graph as crewai_graph
from pytest_flows.crewai import llm as crewai_llm
from pytest_flows.crewai import persistence
from pytest_flows.golden.breaks import GoldenBreak
from pytest_flows.golden.replay import jsonable
from pytest_flows.llm_script import LLMScript
from pytest_flows.store import FlowStore, StoreCorruptedError, decode_stored
from pytest_flows.trace import render_value

if TYPE_CHECKING:
    from pytest_flows.run import FlowRun
    from pytest_flows.session import FlowsSession

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
            "trigger": None if trigger is None else crewai_graph._render(trigger),
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
    module, _, qualname = ref.partition(":")
    try:
        value: Any = importlib.import_module(module)
        for part in qualname.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError):
        return None
    return value if isinstance(value, type) else None


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


class CrewAIGolden:
    framework = "crewai"

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
        return {
            "flow": f"{cls.__module__}:{cls.__qualname__}",
            "inputs": jsonable(kwargs.get("inputs")),
            "topology": topology_of(cls),
            "saves": saves,
        }

    # -- restore and resume -----------------------------------------------------------
    def replay(
        self, session: FlowsSession, recorded: dict[str, Any], replies: list[Any], today: Any
    ) -> list[dict[str, Any]]:
        cls = _resolve(recorded["flow"])
        if cls is None:
            return []
        results = []
        saves = recorded.get("saves", [])
        for k, save in enumerate(saves, start=1):
            store = FlowStore(session)
            script = LLMScript()
            if replies:
                script.reply(*replies, optional=True)
            script.script.check_unused = False
            mark = session.event_count()
            with persistence.install(session, store), crewai_llm.install(session, script):
                for earlier in saves[:k]:
                    store.append_save(
                        earlier["state_id"], earlier["method"], earlier["raw"], framework="crewai"
                    )
                flow = cls(persistence=persistence.routed_persistence())
                try:
                    run = session.run(flow, inputs={"id": save["state_id"]}, raise_on_error=False)
                    trace, output = run.trace.lines(), render_value(run.output)
                    if run.error is not None:
                        output = f"error: {type(run.error).__name__}"
                except pytest.fail.Exception as exc:  # the scripted LLM ran out
                    trace, output = [], f"error: {type(exc).__name__}"
            _drop_events(session, mark)
            results.append(
                {"from": f"save {k} (after {save['method']!r})", "trace": trace, "output": output}
            )
        return results

    # -- today's code -------------------------------------------------------------------
    def check(
        self, session: FlowsSession, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        cls = _resolve(recorded["flow"])
        if cls is None:
            return [
                GoldenBreak(
                    "topology", where, f"the flow class {recorded['flow']} no longer exists"
                )
            ]
        breaks: list[GoldenBreak] = []
        decoded: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for save in recorded.get("saves", []):
            label = f"{where}, save {save['index']} (after {save['method']!r})"
            try:
                decoded.append((save, decode_stored(save["raw"], f"the stored {label}")))
            except StoreCorruptedError as exc:
                breaks.append(
                    GoldenBreak("codec", label, "today's codec cannot decode it", str(exc))
                )
        model = _state_model(cls)
        if model is not None:
            for save, snapshot in decoded:
                if not isinstance(snapshot, dict):
                    continue
                problems = state_model_problems(model, snapshot)
                if problems:
                    breaks.append(
                        GoldenBreak(
                            "schema",
                            f"{where}, save {save['index']} (after {save['method']!r})",
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


def _model_name(model: type[BaseModel]) -> str:
    from pytest_flows.crewai.kickoff_args import declared_model

    return declared_model(model).__name__


def _drop_events(session: FlowsSession, mark: int) -> None:
    # The replays are not part of the test's own trace (its failure report).
    with session._events_lock:
        del session._events[mark:]


ADAPTER = CrewAIGolden()
