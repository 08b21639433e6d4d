"""Mistakes that used to let a test pass while checking nothing now say so."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from crewai.events.event_bus import crewai_event_bus
from crewai.events.types.flow_events import FlowStartedEvent, MethodExecutionFinishedEvent
from crewai.events.types.llm_events import LLMCallCompletedEvent
from crewai.flow.flow import Flow, listen, start
from crewai.state.checkpoint_config import CheckpointConfig
from store_flows import StepsFlow

from pytest_flows import FlowsSession
from pytest_flows._internal.errors import FlowsWarning, NoMethodRanWarning
from pytest_flows.crewai._bus_handlers import registered_handlers


# -- a flow that ran no method ---------------------------------------------------------------
class Greeter(Flow):
    @start()
    def greet(self) -> str:
        return "hi"

    @listen(greet)
    def shout(self, text: str) -> str:
        return text.upper()


class LoudGreeter(Greeter):
    """crewai does not inherit greet/shout into this class: it runs nothing."""


class NoStart(Flow):
    @listen("never")
    def orphan(self) -> str:
        return "x"


def test_a_subclass_that_runs_nothing_warns_naming_the_cause(flows: FlowsSession) -> None:
    with pytest.warns(NoMethodRanWarning) as caught:
        run = flows.run(LoudGreeter)
    assert run.output is None and not run.trace.of_kind("method.started")
    (warning,) = caught
    message = str(warning.message)
    assert message.startswith("pytest-flows: LoudGreeter ran no method at all")
    assert "this test checks nothing" in message
    assert "LoudGreeter subclasses Greeter, and crewai does not inherit a flow's " in message
    assert "declare them on LoudGreeter (or run Greeter)" in message
    assert warning.filename == __file__  # points at the test's flows.run() line
    assert issubclass(NoMethodRanWarning, FlowsWarning)
    assert issubclass(NoMethodRanWarning, pytest.PytestWarning)


def test_a_flow_without_a_start_method_warns(flows: FlowsSession) -> None:
    with pytest.warns(NoMethodRanWarning, match=r"NoStart has no @start\(\) method crewai can see"):
        flows.run(NoStart)


def test_runs_that_ran_or_restored_methods_do_not_warn(
    flows: FlowsSession, flow_store: Any
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoMethodRanWarning)
        assert flows.run(Greeter).output == "HI"
        flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])))
        last = flow_store.checkpoints()[-1]  # written after the last method: nothing left to run
        flows.run(StepsFlow, from_checkpoint=CheckpointConfig(restore_from=last.location))


# -- handlers on crewai's event bus end with the test ------------------------------------------
class ExitsMidRun(Flow):
    """Subscribes to crewai's bus while it runs, then the process is told to exit."""

    @start()
    def subscribe(self) -> str:
        crewai_event_bus.on(MethodExecutionFinishedEvent)(_seen_mid_run)
        return "subscribed"

    @listen(subscribe)
    def leave(self, _: str) -> None:
        raise SystemExit(3)


def _seen_mid_run(source: Any, event: Any) -> None:
    return None


def _spy(source: Any, event: Any) -> None:
    return None


def _usage_listeners() -> list[Any]:
    return [
        handler
        for event, handler in registered_handlers(crewai_event_bus)
        if event is LLMCallCompletedEvent and "_attach_usage_aggregation" in handler.__qualname__
    ]


def test_handlers_registered_during_a_test_are_gone_after_it_even_after_system_exit() -> None:
    before = registered_handlers(crewai_event_bus)
    with FlowsSession(test_id="bus-scope") as session:
        crewai_event_bus.on(FlowStartedEvent)(_spy)
        with pytest.raises(SystemExit):
            session.run(ExitsMidRun)
        during = registered_handlers(crewai_event_bus)
        assert (FlowStartedEvent, _spy) in during
        assert (MethodExecutionFinishedEvent, _seen_mid_run) in during
    after = registered_handlers(crewai_event_bus)

    assert (FlowStartedEvent, _spy) not in after
    assert (MethodExecutionFinishedEvent, _seen_mid_run) not in after
    assert _usage_listeners() == []
    assert before <= after  # crewai's own listeners (console, checkpoints) stay


# -- a test that catches a script error still gets the unused-reply check -----------------------
CATCHING_TESTS = """
import pytest
from crewai import LLM
from crewai.flow.flow import Flow, start

from pytest_flows._internal.fakes.script import UnscriptedRequest


class Asks(Flow):
    @start()
    def ask(self):
        return LLM("gpt-4o").call("Say hello")


def test_catches_the_unscripted_call(flows, fake_llm):
    fake_llm.on(agent="Writer").reply("a draft nobody asked for")
    with pytest.raises(UnscriptedRequest):
        flows.run(Asks)


def test_fails_on_the_unscripted_call(flows, fake_llm):
    fake_llm.on(agent="Writer").reply("left over because the test failed")
    flows.run(Asks)
"""


def test_catching_an_unscripted_request_keeps_the_unused_reply_check(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_user=CATCHING_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_catches_the_unscripted_call _*",
            "pytest-flows: 1 scripted reply on fake_llm never used:",
            '  fake_llm.on(agent="Writer").reply("a draft nobody asked for")  *',
        ]
    )
    # The report sections only: the short summary repeats each message as far as the
    # terminal is wide (CI has no terminal: whole messages).
    text = result.stdout.str().split("short test summary info")[0]
    assert "ERROR at teardown of test_fails_on_the_unscripted_call" not in text
    assert text.count("never used:") == 1  # the failed test shows only its own error
