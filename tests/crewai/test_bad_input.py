"""Misuse of the harness gets a clear error that names the problem and the fix."""

from __future__ import annotations

import pytest
from crewai.flow.flow import Flow, start
from dispatch_flows import Routing, TwoStarts
from pydantic import BaseModel, ConfigDict, Field

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


# -- inputs a pydantic state would drop --------------------------------------------------
class Order(BaseModel):
    item: str = ""
    quantity: int = 1
    gift_note: str = Field(default="", alias="giftNote")


class Checkout(Flow[Order]):
    @start()
    def place(self) -> str:
        return f"{self.state.quantity} x {self.state.item}"


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    item: str = ""


class LooseCheckout(Flow[Loose]):
    @start()
    def place(self) -> str:
        return str(self.state.model_extra)


def test_an_unknown_input_field_is_refused_with_the_closest_field(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(Checkout, inputs={"item": "tea", "quantiy": 2})
    message = str(info.value)
    assert message.startswith("flows.run(Checkout, inputs=...): 'quantiy' is not a field of")
    assert "state model Order (fields: giftNote, gift_note, item, quantity)" in message
    assert "crewai would drop it silently" in message
    assert "Did you mean 'quantiy' -> 'quantity'?" in message
    assert "flows.run(..., extra_inputs=True)" in message
    assert not flows.trace.of_kind("flow.started")


def test_several_unknown_fields_are_all_named(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError, match=r"'colour', 'zzz' are not fields of the state"):
        flows.run(Checkout, inputs={"colour": "red", "zzz": 1})


def test_known_fields_aliases_and_the_id_are_accepted(flows: FlowsSession) -> None:
    run = flows.run(Checkout, inputs={"item": "tea", "quantity": 2, "giftNote": "hi", "id": "o-1"})
    assert run.output == "2 x tea"
    assert run.state.gift_note == "hi" and run.state.id == "o-1"


def test_extra_inputs_true_lets_unknown_fields_through(flows: FlowsSession) -> None:
    run = flows.run(Checkout, inputs={"item": "tea", "coupon": "X1"}, extra_inputs=True)
    assert run.output == "1 x tea"
    assert not hasattr(run.state, "coupon")  # crewai drops it, as in production
    with pytest.raises(FlowsUsageError, match=r"extra_inputs='yes'\): extra_inputs is True"):
        flows.run(Checkout, inputs={"item": "tea"}, extra_inputs="yes")


def test_a_state_that_allows_extra_fields_and_a_dict_state_take_any_input(
    flows: FlowsSession,
) -> None:
    assert flows.run(LooseCheckout, inputs={"coupon": "X1"}).output == "{'coupon': 'X1'}"
    assert flows.run(TwoStarts, inputs={"anything": 1}).state["anything"] == 1


# -- arguments crewai would misreport ------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (
            {"inputs": {1: "x"}},
            "flows.run(Routing, inputs=...): every key must be a str naming a state field; "
            "got 1 (int)",
        ),
        (
            {"input_files": 42},
            "flows.run(Routing, input_files=42): input_files is a dict of named file inputs",
        ),
        (
            {"input_files": {("a",): "x"}},
            "flows.run(Routing, input_files=...): every key must be a str naming a file input",
        ),
        (
            {"from_checkpoint": "nope"},
            "flows.run(Routing, from_checkpoint='nope'): from_checkpoint takes a crewai "
            "CheckpointConfig, got str; write from_checkpoint=CheckpointConfig("
            "restore_from='nope')",
        ),
        (
            {"from_checkpoint": {"restore_from": "x"}},
            "from_checkpoint takes a crewai CheckpointConfig, got dict",
        ),
        (
            {"restore_from_state_id": 7},
            "flows.run(Routing, restore_from_state_id=7): it is the id (str) of a persisted",
        ),
    ],
)
def test_kickoff_arguments_of_the_wrong_type(
    flows: FlowsSession, kwargs: dict[str, object], expected: str
) -> None:
    with pytest.raises(FlowsUsageError) as info:
        flows.run(Routing, **kwargs)
    assert expected in str(info.value)
    assert not flows.trace.of_kind("flow.started")


@pytest.mark.parametrize("value", ["no", 0, None])
def test_raise_on_error_takes_a_bool(flows: FlowsSession, value: object) -> None:
    with pytest.raises(FlowsUsageError, match=r"raise_on_error=.*: raise_on_error is True"):
        flows.run(Routing, raise_on_error=value)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_raise_on_error_takes_a_bool_in_async_tests_too(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError, match=r"flows.arun\(\.\.\., raise_on_error='no'\)"):
        await flows.arun(Routing, raise_on_error="no")  # type: ignore[arg-type]


# -- errors keep their own story -------------------------------------------------------------
class Fails(Flow):
    @start()
    def go(self) -> None:
        raise LookupError("no such customer")


def test_a_flow_error_in_a_sync_test_carries_no_harness_context(flows: FlowsSession) -> None:
    with pytest.raises(LookupError) as info:
        flows.run(Fails)
    assert info.value.__context__ is None and info.value.__cause__ is None
    with pytest.raises(FlowsUsageError) as usage:
        flows.run(Routing, inputs=[1])
    assert usage.value.__context__ is None
