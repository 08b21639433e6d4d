"""What differs between two runs is normalized wherever two runs are compared (issue 27)."""

from __future__ import annotations

import uuid
from typing import Never

from agent_framework import (
    AgentExecutor,
    Executor,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    tool,
)

from pytest_flows import call_tool
from pytest_flows.agent_framework import (
    FlowsChatClient,
    check_restore_equivalence,
    explore_seeds,
)


class Stamp(Executor):
    """Files the text under a fresh uuid: in the state and in the output."""

    @handler
    async def stamp(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        ticket = str(uuid.uuid4())
        ctx.set_state("ticket", ticket)
        await ctx.yield_output(f"filed {text} as {ticket}")


def build_stamper():
    return WorkflowBuilder(start_executor=Stamp(id="stamp"), name="stamper").build()


# -- A: a uuid an executor puts in state ------------------------------------------------


def test_a_uuid_in_state_is_no_race_between_seeds(flows):
    exploration = explore_seeds(flows, build_stamper, "x", seeds=range(4))

    exploration.assert_deterministic()
    tickets = {run.state["ticket"] for run in exploration.runs.values()}
    assert len(tickets) == 4  # the raw values stay: each seed drew its own


def test_a_uuid_in_state_is_no_difference_after_a_restore(flows):
    checks = check_restore_equivalence(flows, build_stamper, "x")

    assert [c.superstep for c in checks] == [0, 1]
    assert all(c.equivalent for c in checks)


def test_the_outcome_names_the_traces_own_placeholder(flows):
    exploration = explore_seeds(flows, build_stamper, "x", seeds=[0])

    (text,) = exploration.outcomes
    assert "state committed ticket value='<uuid:1>'" in text
    assert 'state: {"ticket": "<uuid:1>"}' in text


# -- E: the fake model's call ids --------------------------------------------------------


@tool(approval_mode="always_require")
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def build_refunds(client):
    agent = AgentExecutor(
        client.as_agent(name="refunds", instructions="Refund.", tools=[refund]), id="refunds"
    )
    return WorkflowBuilder(start_executor=agent, name="refunds").build()


def test_call_ids_are_numbered_per_run_so_a_second_run_is_the_same(flows, fake_llm):
    fake_llm.on(agent="refunds").reply(call_tool("refund", order="A-1"), times=2)

    first = flows.run(build_refunds(FlowsChatClient()), "refund A-1")
    second = flows.run(build_refunds(FlowsChatClient()), "refund A-1")

    assert first.pending[0].request_id == second.pending[0].request_id == "occ-call-1-1"
    assert first.trace.render() == second.trace.render()
    assert "request info occ-<call:1> executor=refunds" in first.trace.render()


def test_a_restored_run_never_reuses_a_call_id_it_holds(flows, fake_llm, flow_store):
    fake_llm.on(agent="refunds").reply(
        call_tool("refund", order="A-1"), call_tool("refund", order="A-2")
    )
    paused = flows.run(build_refunds(FlowsChatClient()), "refund A-1 and A-2")
    (request,) = paused.pending

    again = flows.run(
        build_refunds(FlowsChatClient()),
        checkpoint_id=paused.last_checkpoint,
        responses={request.request_id: request.data.to_function_approval_response(True)},
    )

    # the restored run's first model call is its own #1, but the conversation
    # already holds call-1-1: the new call is call-2-1, as one process would number it
    assert request.request_id == "occ-call-1-1"
    assert [p.request_id for p in again.pending] == ["occ-call-2-1"]
