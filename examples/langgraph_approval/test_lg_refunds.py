"""The tests a user writes for an approve/reject step with interrupt()."""

from __future__ import annotations

from langgraph.types import Command
from lg_refunds import graph

from pytest_flows.langgraph import interrupts

REFUND = {"order": "A-17", "amount": 20.0}


def test_an_approved_refund_is_paid(flows, human):
    interrupts(human).on(node="approval").respond({"approved": True})

    run = flows.run(graph, REFUND)

    assert run.status == "finished"
    assert run.values["note"] == "refund 20.00 EUR for order A-17: paid"
    assert human.requests[0].data["value"]["question"] == "Approve this refund?"
    assert 'task finished approval update={"decision": "{\'approved\': True}"} goto=[pay]' in (
        run.trace.lines()
    )


def test_a_text_answer_works_too(flows, human):
    human.on(method="approval").answer("no")

    run = flows.run(graph, REFUND)

    assert run.values["note"].endswith(": rejected")


def test_the_graph_waits_and_a_webhook_resumes_it(flows, human):
    human.pause()  # nobody answers yet: the run stops at the interrupt
    paused = flows.run(graph, REFUND)
    assert paused.status == "interrupted"
    assert paused.interrupt().node == "approval"

    # what production's webhook handler does, on the same thread
    done = flows.run(graph, Command(resume={"approved": True}), config=paused.config)

    assert done.values["note"].endswith(": paid")
    assert done.trace.lines()[0] == (
        'graph started LangGraph input=Command(resume={"approved": true}) thread=thread-1'
    )


def test_the_users_graph_keeps_its_own_checkpointer(flows, human):
    human.answer("yes")
    before = graph.checkpointer
    flows.run(graph, REFUND)
    assert graph.checkpointer is before and list(before.list(None)) == []
