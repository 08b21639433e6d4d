"""Misuse of the harness gets a clear error that names the problem and the fix."""

from __future__ import annotations

import pytest
from crewai.flow.flow import Flow, start
from dispatch_flows import Routing

from pytest_flows import FlowsSession, FlowsUsageError


class NeedsConfig(Flow):
    def __init__(self, endpoint: str) -> None:
        super().__init__()
        self.endpoint = endpoint

    @start()
    def go(self) -> str:
        return self.endpoint


class ExplodingInit(Flow):
    def __init__(self) -> None:
        raise OSError("config file missing")

    @start()
    def go(self) -> None:
        return None


@pytest.mark.parametrize("target", [object(), "Routing", 42, Routing.receive])
def test_a_target_that_is_not_a_flow(flows: FlowsSession, target: object) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(target)
    message = str(info.value)
    assert f"flows.run() cannot run {target!r}" in message
    assert "a CrewAI Flow class or instance" in message
    assert "flows.run(MyFlow, inputs={...})" in message


def test_a_flow_class_whose_construction_fails(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(NeedsConfig)
    assert "could not construct NeedsConfig()" in str(info.value)
    assert "missing 1 required positional argument: 'endpoint'" in str(info.value)
    assert "flows.run(NeedsConfig(...))" in str(info.value)
    assert flows.run(NeedsConfig("https://svc.local")).output == "https://svc.local"

    with pytest.raises(FlowsUsageError, match=r"ExplodingInit\(\): OSError: config file missing"):
        flows.run(ExplodingInit)


def test_inputs_crewai_rejects(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(Routing, inputs={"escalations": "many"})
    message = str(info.value)
    assert message.startswith("crewai rejected the inputs for Routing: Invalid inputs")
    assert "escalations" in message and "valid integer" in message
    assert "state model Ticket (fields: id, priority, handled_by, escalations)" in message
    assert not flows.trace.of_kind("flow.started")


def test_inputs_that_are_not_a_dict(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError, match=r"needs a dict of state fields, got list"):
        flows.run(Routing, inputs=[("priority", "high")])


def test_unknown_and_positional_arguments(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(Routing, input={"priority": "high"})
    assert "unknown keyword argument(s) input;" in str(info.value)
    assert "Flow.kickoff accepts inputs, input_files, from_checkpoint" in str(info.value)
    with pytest.raises(FlowsUsageError, match="not positional ones"):
        flows.run(Routing, {"priority": "high"})


def test_a_closed_harness_refuses_to_run() -> None:
    session = FlowsSession(test_id="closed")
    with session:
        pass
    with pytest.raises(FlowsUsageError, match="this flows harness is closed"):
        session.run(Routing)
