"""Acceptance for the adapter contract: a third framework (toyflow, a plain-Python
flow runner) gets every fake and the store through its own adapter, registered
with ``register_adapter``, without any file of pytest_flows naming it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import toyflow
import toyflow_adapter

import pytest_flows
from pytest_flows import CrashPoint, UnscriptedRequest, call_tool

pytest_flows.register_adapter(toyflow_adapter.SPEC)

ROOT = Path(__file__).resolve().parents[2]


AGENCY = toyflow.Crew("agency", ("booker",), lambda inputs: f"booked {inputs['city']} for real")


class TripFlow(toyflow.Flow):
    tools = {"weather": lambda city: f"the real forecast for {city}"}

    @toyflow.step
    def plan(self):
        choice = self.llm("Which city should we visit?", tools=("weather",))
        self.state["city"] = choice["args"]["city"]
        self.state["forecast"] = self.tool(choice["tool"], **choice["args"])
        return self.state["forecast"]

    @toyflow.step
    def book(self):
        return self.kickoff_crew(AGENCY, city=self.state["city"])

    @toyflow.step
    def confirm(self):
        answer = self.ask(f"Go to {self.state['city']}?")
        self.state["approved"] = answer == "yes"
        return answer

    @toyflow.step
    def summary(self):
        return self.llm(f"Summarize the trip to {self.state['city']}")


def script_the_trip(fake_llm, fake_tools):
    fake_llm.reply(call_tool("weather", city="Paris"), "Paris: sunny, approved")
    fake_tools.on("weather").reply("sunny")


def test_every_fake_and_the_store_bind_through_the_toy_adapter(
    flows, fake_llm, fake_tools, fake_crews, human, flow_store
):
    script_the_trip(fake_llm, fake_tools)
    fake_crews.on(crew="agency").reply("hotel booked")
    human.answer("yes")

    run = flows.run(TripFlow)

    assert run.error is None
    assert run.output == "Paris: sunny, approved"
    assert run.state["city"] == "Paris"
    assert run.state["forecast"] == "sunny"  # the scripted tool result, not the real tool
    assert run.state["approved"] is True
    assert flow_store.methods(run.state["id"]) == ["plan", "book", "confirm", "summary"]
    assert fake_crews.inputs("agency") == [{"city": "Paris"}]
    assert flow_store.latest(run.state["id"]).snapshot["approved"] is True
    assert [c.caller["method"] for c in fake_llm.calls] == ["plan", "summary"]
    assert [c.name for c in fake_llm.tool_calls] == ["weather"]
    assert fake_tools.calls[0].data["arguments"] == {"city": "Paris"}
    assert human.requests[0].caller == {
        "flow": "TripFlow",
        "method": "confirm",
        "kind": "ask",
        "occurrence": 1,
    }
    assert run.trace.render().splitlines() == [
        "flow started TripFlow",
        "method started plan",
        'llm call plan purpose=call model=toy-model tools=weather({"city": "Paris"})',
        "state saved plan id=<uuid:1> n=1",
        "method finished plan value=sunny",
        "method started book",
        'crew kickoff agency method=book inputs={"city": "Paris"} output=\'hotel booked\'',
        "state saved book id=<uuid:1> n=2",
        "method finished book value='hotel booked'",
        "method started confirm",
        "human ask confirm message='Go to Paris?' answer='yes'",
        "state saved confirm id=<uuid:1> n=3",
        "method finished confirm value=yes",
        "method started summary",
        "llm call summary purpose=call model=toy-model reply='Paris: sunny, approved'",
        "state saved summary id=<uuid:1> n=4",
        "method finished summary value='Paris: sunny, approved'",
        "flow finished TripFlow",
    ]
    assert fake_llm.handle("gpt-4o", framework="toyflow").model == "gpt-4o"


def test_a_paused_toy_flow_resumes_through_the_adapter(
    flows, fake_llm, fake_tools, fake_crews, human
):
    script_the_trip(fake_llm, fake_tools)
    fake_crews.on(crew="agency").run_for_real()
    human.pause()

    paused = flows.run(TripFlow)
    assert isinstance(paused.output, toyflow.PendingQuestion)
    assert paused.state["done"] == ["plan", "book"]
    assert paused.method_outputs[-1] == "booked Paris for real"

    resumed = human.resume(paused, "yes")

    assert resumed.output == "Paris: sunny, approved"
    assert resumed.state["approved"] is True


def test_the_toy_flows_unscripted_llm_call_gets_the_fixit_line(flows, fake_llm):
    fake_llm.allow_unused()
    with pytest.raises(UnscriptedRequest, match=r'fake_llm.on\(method="plan"\).reply'):
        flows.run(TripFlow)


def test_crash_resume_property_runs_on_the_toy_flow(
    flows, fake_llm, fake_tools, fake_crews, human, flow_store
):
    fake_crews.reply("booked", times="always")
    fake_llm.on(method="plan").reply(call_tool("weather", city="Paris"), times="always")
    fake_llm.on(method="summary").reply("done", times="always")
    fake_tools.on("weather").reply("sunny", times="always")
    human.answer("yes", times="always")

    pytest_flows.check_crash_resume(flows, flow_store, TripFlow, max_examples=6)
    pytest_flows.assert_crash_resume(flows, flow_store, TripFlow, CrashPoint(2, "before"))


def test_no_core_file_names_the_toy_framework():
    # The acceptance criterion: the toy adapter needed no edit of pytest_flows.
    found = subprocess.run(
        ["grep", "-rliE", "toyflow|toy_adapter", "pytest_flows", "pyproject.toml"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert found.returncode == 1, found.stdout  # grep: 1 means no match
    assert found.stdout == ""


def test_an_adapter_module_imported_anew_replaces_the_dropped_copy(monkeypatch):
    """pytester's in-process runs drop from ``sys.modules`` what they imported; the
    adapter loaded afterwards is the module imported anew, not the dropped copy whose
    framework objects nothing runs any more (a LangGraph trace lost its superstep
    lines after a pytester test had imported the adapter first)."""
    import importlib
    import sys

    from pytest_flows._internal.contract.adapters import load_adapter

    first = load_adapter(toyflow_adapter.SPEC)
    assert first is toyflow_adapter.ADAPTER
    monkeypatch.delitem(sys.modules, "toyflow_adapter")
    fresh = importlib.import_module("toyflow_adapter")
    assert fresh is not toyflow_adapter
    assert load_adapter(toyflow_adapter.SPEC) is fresh.ADAPTER
    monkeypatch.undo()  # the original module back in sys.modules ...
    assert load_adapter(toyflow_adapter.SPEC) is toyflow_adapter.ADAPTER  # ... and in use
