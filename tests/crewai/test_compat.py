"""pytest_flows.crewai._compat: each branch, on the installed crewai and as an older one."""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import importlib.util
import inspect
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("crewai")

from crewai.events.event_bus import CrewAIEventsBus, crewai_event_bus
from crewai.events.types.flow_events import FlowStartedEvent
from crewai.flow.persistence import sqlite

from pytest_flows.crewai import _compat as compat


@pytest.fixture
def as_older_crewai(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Reload compat as if the given crewai modules/attributes did not exist."""
    real_find_spec = importlib.util.find_spec

    def older(*missing_modules: str, missing_json_default: bool = False) -> ModuleType:
        def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
            if name in missing_modules:
                return None
            return real_find_spec(name, *args, **kwargs)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)
        # the fallback publishes from the bus: put the real method back afterwards
        monkeypatch.setattr(CrewAIEventsBus, "_prepare_event", CrewAIEventsBus._prepare_event)
        if missing_json_default:
            monkeypatch.delattr(sqlite, "_json_default", raising=False)
        return importlib.reload(compat)

    yield older
    monkeypatch.undo()
    importlib.reload(compat)  # back to the installed crewai's names


# -- on the installed crewai -------------------------------------------------------------


def test_the_installed_crewai_is_used_where_it_has_the_feature() -> None:
    if compat.HAS_STREAM_CONTEXT:
        from crewai.events import stream_context

        assert compat.add_stream_sink is stream_context.add_stream_sink
    if compat.HAS_RATE_LIMIT_RETRY:
        from crewai.llms import retry

        assert compat.run_with_rate_limit_retry is retry.run_with_rate_limit_retry
    if compat.HAS_SQLITE_JSON_DEFAULT:
        assert compat.sqlite_json_default() is sqlite._json_default
    source = inspect.getsource(sqlite.SQLiteFlowPersistence._save_state_sql)
    assert compat.SQLITE_ENCODE_CALL in source


def emit_started(source: Any, name: str) -> None:
    # in a copy of the context: a started flow's event scope must not outlive the test
    event = FlowStartedEvent(flow_name=name, inputs=None)
    contextvars.copy_context().run(crewai_event_bus.emit, source, event)


def test_a_sink_added_in_this_context_sees_each_emitted_event() -> None:
    seen: list[Any] = []
    token = compat.add_stream_sink(lambda source, event: seen.append(event))
    try:
        emit_started(None, "SinkFlow")
    finally:
        compat.reset_stream_sinks(token)
    emit_started(None, "AfterReset")
    assert [e.flow_name for e in seen] == ["SinkFlow"]
    assert seen[0].emission_sequence >= 1  # published after the bus numbered it


# -- as crewai 1.14 or 1.15.0 (no stream_context) -----------------------------------------


def test_without_stream_context_the_bus_publishes_to_the_own_registry(
    as_older_crewai: Any,
) -> None:
    older = as_older_crewai("crewai.events.stream_context")
    assert older.HAS_STREAM_CONTEXT is False
    assert older.add_stream_sink is older._own_add_stream_sink
    assert getattr(CrewAIEventsBus._prepare_event, "_pytest_flows_publishes", False)
    seen: list[Any] = []
    token = older.add_stream_sink(lambda source, event: seen.append((source, event)))
    try:
        emit_started("a source", "OldFlow")
    finally:
        older.reset_stream_sinks(token)
    emit_started("a source", "Unheard")
    assert [(s, e.flow_name) for s, e in seen] == [("a source", "OldFlow")]


def test_the_publishing_wrapper_is_applied_once_and_runs_after_prepare() -> None:
    calls: list[str] = []

    def prepare(bus: Any, source: Any, event: Any) -> None:
        calls.append("prepare")

    wrapped = compat.publishing(prepare)
    assert compat.publishing(wrapped) is wrapped
    token = compat._own_add_stream_sink(lambda source, event: calls.append(f"sink {event}"))
    try:
        wrapped(None, None, "e1")
    finally:
        compat._own_reset_stream_sinks(token)
    assert calls == ["prepare", "sink e1"]


# -- as crewai < 1.15.23 (no rate-limit retry, no json default) -------------------------------


def test_without_the_retry_module_a_call_is_attempted_once(as_older_crewai: Any) -> None:
    older = as_older_crewai("crewai.llms.retry")
    assert older.HAS_RATE_LIMIT_RETRY is False
    attempts: list[int] = []

    def failing() -> None:
        attempts.append(1)
        raise RuntimeError("429 rate limit")

    def never_sleep(_: float) -> None:
        raise AssertionError("crewai < 1.15.23 does not sleep between attempts")

    with pytest.raises(RuntimeError, match="429"):
        older.run_with_rate_limit_retry(failing, sleep=never_sleep)
    assert attempts == [1]

    async def answer() -> str:
        return "ok"

    assert asyncio.run(older.arun_with_rate_limit_retry(answer, sleep=None)) == "ok"
    assert older.retry_after_seconds(RuntimeError("retry after 5")) is None
    with pytest.raises(RuntimeError, match="does not retry rate-limited LLM calls"):
        older.get_retry_delay_seconds(1)


def test_without_a_json_default_states_encode_with_plain_json(as_older_crewai: Any) -> None:
    older = as_older_crewai(missing_json_default=True)
    assert older.HAS_SQLITE_JSON_DEFAULT is False
    assert older.sqlite_json_default() is None
    assert older.SQLITE_ENCODE_CALL == "json.dumps(state_dict)"


# -- as an older crewai (features added during 1.15) ---------------------------------------


def test_features_new_in_1_15_are_absent_on_older_crewai(as_older_crewai: Any) -> None:
    older = as_older_crewai(
        "crewai.flow.runtime._actions", "crewai.flow.conversational_mixin", "crewai.execution"
    )
    assert older.agent_action() is None
    assert older.conversational_mixin() is None
    assert older.execution_uuid_fields() == {}


def test_features_of_1_15_are_found_on_it() -> None:
    if importlib.util.find_spec("crewai.execution") is None:
        pytest.skip("this crewai predates crewai.execution")
    assert set(compat.execution_uuid_fields()) == {"execution_uuid"}
    assert compat.agent_action() is not None
    assert compat.conversational_mixin() is not None


def test_a_missing_event_class_has_a_stand_in_nothing_is_an_instance_of() -> None:
    stand_in = compat._NeverEmitted
    assert not isinstance(FlowStartedEvent(flow_name="x", inputs=None), stand_in)
    from crewai.events.types import flow_events

    expected = getattr(flow_events, "FlowFailedEvent", stand_in)
    assert compat.FlowFailedEvent is expected


# -- crewai 1.14.x: the class's graph, llm.stream, the state behind a StateProxy ------------


class _Graph:
    def __init__(self) -> None:
        self.name = "the class's"

    @classmethod
    def flow_definition(cls) -> str:
        return "the class's graph"


def test_the_flow_definition_is_the_flows_own_or_its_classs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from crewai.flow.flow import Flow, start

    class Tiny(Flow):  # type: ignore[type-arg]
        @start()
        def begin(self) -> str:
            return "ok"

    flow = Tiny()
    expected = flow._definition if compat.HAS_INSTANCE_DEFINITION else Tiny.flow_definition()
    assert compat.flow_definition(flow) is expected
    assert "begin" in compat.flow_definition(flow).methods
    monkeypatch.setattr(compat, "HAS_INSTANCE_DEFINITION", False)  # as crewai 1.14
    assert compat.flow_definition(_Graph()) == "the class's graph"


class _OldLLM:
    stream = True


class _NewLLM:
    stream = False

    def _effective_stream(self) -> bool:
        return True  # a call-scoped override


def test_a_call_streams_by_its_override_or_by_llm_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compat, "HAS_EFFECTIVE_STREAM", True)
    assert compat.effective_stream(_NewLLM()) is True
    monkeypatch.setattr(compat, "HAS_EFFECTIVE_STREAM", False)  # as crewai 1.14
    assert compat.effective_stream(_OldLLM()) is True
    assert compat.effective_stream(_NewLLM()) is False


class _Proxy:
    """Stands in for crewai 1.14's StateProxy (the state in a slot)."""

    __slots__ = ("_proxy_state",)

    def __init__(self, state: Any) -> None:
        object.__setattr__(self, "_proxy_state", state)


class _Flow:
    def __init__(self, state: Any) -> None:
        self.state = state


def test_the_bare_state_is_the_state_behind_crewai_1_14s_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = {"n": 1}
    monkeypatch.setattr(compat, "_StateProxy", _Proxy)
    assert compat.bare_state(_Flow(_Proxy(state))) is state
    assert compat.bare_state(_Flow(state)) is state
    monkeypatch.setattr(compat, "_StateProxy", None)  # as crewai 1.15: no proxy
    proxy = _Proxy(state)
    assert compat.bare_state(_Flow(proxy)) is proxy


class _Marked:
    is_crewai_internal = False


class _Executor:
    """Stands in for crewai 1.14's AgentExecutor: a flow of crewai's, without the marker."""


_Executor.__module__ = "crewai.experimental.agent_executor"


def test_crewais_own_flows_are_told_by_the_marker_or_else_by_their_module() -> None:
    assert compat.is_crewai_internal(_Marked()) is False
    assert compat.is_crewai_internal(_Executor()) is True  # as crewai 1.14
    assert compat.is_crewai_internal(_OldLLM()) is False  # a user's class
    from crewai.flow.flow import Flow

    assert compat.is_crewai_internal(Flow()) is False


def test_a_failed_flow_is_traced_once_on_every_crewai(flows: Any) -> None:
    from crewai.flow.flow import Flow, start

    class Broken(Flow):  # type: ignore[type-arg]
        @start()
        def begin(self) -> None:
            raise ValueError("no")

    run = flows.run(Broken, raise_on_error=False)
    assert run.trace.lines()[-2:] == [
        "method failed begin error='ValueError: no'",
        "flow failed Broken error='ValueError: no'",
    ]
