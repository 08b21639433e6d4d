"""``human`` answers interrupt(), several and parallel ones, static breakpoints."""

from __future__ import annotations

from importlib.metadata import version

import lg_graphs
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from pytest_flows import UnscriptedRequest
from pytest_flows.langgraph import interrupts

_LANGGRAPH = tuple(int(part) for part in version("langgraph").split(".")[:3])
# LangGraph < 1.2.20 gives every interrupt() of one task the same id (the hash of the
# task's namespace; langgraph #6626): the second question of a node is `i2` again.
# From 1.2.20 on an interrupt's id also counts the answers its task already has.
ONE_ID_PER_TASK = _LANGGRAPH < (1, 2, 20)


def _approval_builder():
    calls: list[str] = []

    def review(state):
        calls.append("review")  # re-runs from its top on resume, as in production
        decision = interrupt({"draft": "refund 20 EUR", "question": "approve?"})
        return {"notes": [f"approved={decision['approved']}"]}

    def second(state):
        first = interrupt("first?")
        other = interrupt("second?")
        return {"notes": [f"{first}+{other}"]}

    builder = StateGraph(lg_graphs.Notes)
    builder.add_node("review", review)
    builder.add_node("second", second)
    builder.add_edge(START, "review")
    builder.add_edge("review", "second")
    builder.add_edge("second", END)
    return builder, calls


def test_interrupts_are_answered_with_values_and_texts_in_one_run(flows, human):
    builder, calls = _approval_builder()
    interrupts(human).on(node="review").respond({"approved": True})
    human.answer("one", "two")

    run = flows.run(builder, {"notes": []})

    assert run.status == "finished"
    assert run.values["notes"] == ["approved=True", "one+two"]
    assert calls == ["review", "review"]
    assert [(r.caller["method"], r.caller["kind"], r.reply) for r in human.requests] == [
        ("review", "interrupt", {"approved": True}),
        ("second", "interrupt", "one"),
        ("second", "interrupt", "two"),
    ]
    resumed = [line for line in run.trace.lines() if line.startswith("graph resumed")]
    assert resumed == [
        "graph resumed LangGraph answers=[i1]",
        "graph resumed LangGraph answers=[i2]",
        "graph resumed LangGraph answers=[i2]"
        if ONE_ID_PER_TASK
        else "graph resumed LangGraph answers=[i3]",
    ]


def test_parallel_interrupts_are_all_answered_in_one_resume(flows, human):
    human.answer(lambda request: request.caller["method"].upper(), times=3)

    run = flows.run(lg_graphs.parallel_interrupts_builder(3), {"notes": []})

    assert run.status == "finished"
    assert run.values["notes"] == ["p0=P0", "p1=P1", "p2=P2", "join"]
    assert [r.caller["method"] for r in human.requests] == ["p0", "p1", "p2"]
    assert "graph resumed LangGraph answers=[i1, i2, i3]" in run.trace.lines()


def test_a_pause_leaves_the_interrupt_pending_and_resume_continues(flows, human):
    human.pause()
    run = flows.run(lg_graphs.tour_builder(), {"notes": [], "x": 1})
    assert run.status == "interrupted"
    assert run.interrupt().value == "ship it?"

    done = human.resume(run, "later")

    assert done.status == "finished"
    assert done.values["notes"][-1] == "answer=later"


def test_a_static_breakpoint_waits_for_the_human(flows, human):
    interrupts(human).respond("go")  # any answer lets the run go past the breakpoint
    run = flows.run(lg_graphs.parallel_builder(2), {"notes": []}, interrupt_before=["join"])
    assert run.status == "finished"
    assert human.requests[0].caller["kind"] == "breakpoint"
    assert "graph resumed LangGraph breakpoint=[join]" in run.trace.lines()


def test_without_the_human_a_breakpoint_stops_the_run(flows):
    run = flows.run(lg_graphs.parallel_builder(2), {"notes": []}, interrupt_before=["join"])
    assert (run.status, run.next, run.pending) == ("interrupted", ("join",), [])
    assert run.trace.lines()[-1] == "graph interrupted LangGraph next=[join]"
    done = flows.run(lg_graphs.parallel_builder(2), None, config=run.config)
    assert done.status == "finished"


def test_an_unscripted_interrupt_names_the_line_that_answers_it(flows, human):
    with pytest.raises(UnscriptedRequest, match=r'interrupts\(human\).on\(node="ask"\)'):
        flows.run(lg_graphs.tour_builder(), {"notes": [], "x": 1})


def test_command_resume_by_id_answers_one_of_several(flows):
    run = flows.run(lg_graphs.parallel_interrupts_builder(2), {"notes": []})
    first = run.pending[0]
    partly = flows.run(
        lg_graphs.parallel_interrupts_builder(2),
        Command(resume={first.id: "a"}),
        config=run.config,
    )
    # p0 finished: its answered interrupt is no longer pending (LangGraph < 1.2.13 still
    # lists it in get_state(); the harness applies the later releases' rule)
    assert partly.status == "interrupted"
    assert [(p.node, p.value) for p in partly.pending] == [("p1", "p1?")]
    assert partly.next == ("p1",)


def test_a_paused_sibling_is_the_only_interrupt_left_pending(flows, human):
    interrupts(human).on(node="p0").respond("a")
    interrupts(human).on(node="p1").pause()  # p0's answer alone continues the run...
    interrupts(human).on(node="p1").pause()  # ...and p1 asks again: it stops there

    run = flows.run(lg_graphs.parallel_interrupts_builder(2), {"notes": []})

    assert run.status == "interrupted"
    assert [p.node for p in run.pending] == ["p1"]
    # p0 finished: its answered interrupt is not asked again
    assert [r.caller["method"] for r in human.requests] == ["p0", "p1", "p1"]
    done = human.resume(run, "b")
    assert done.values["notes"] == ["p0=a", "p1=b", "join"]


def test_an_interrupt_inside_a_subgraph_is_answered(flows, human):
    def ask_inside(state):
        return {"notes": [f"inner={interrupt('inside?')}"]}

    inner = StateGraph(lg_graphs.Notes)
    inner.add_node("ask_inside", ask_inside)
    inner.add_edge(START, "ask_inside")
    outer = StateGraph(lg_graphs.Notes)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    outer.add_edge("sub", END)
    human.answer("deep")

    run = flows.run(outer, {"notes": []})

    assert run.status == "finished"
    assert run.values["notes"] == ["inner=deep"]
    assert human.requests[0].caller["method"] == "sub"  # the parent's node that waits
    lines = run.trace.lines()
    assert "  interrupt ask_inside id=i1 value='inside?'" in lines
    assert "graph resumed LangGraph answers=[i1]" in lines
