"""fake_llm's message ids in LangGraph graphs: per node and per thread.

Each run on a fresh thread numbers from 1 (so the schedules ``explore()`` runs, and a
replay of one, give the same messages); a run continuing a thread, or shown a history
with the fake's ids, never reuses one (``add_messages`` would overwrite that message).
"""

from __future__ import annotations

from typing import Any

import lg_llm_graphs as g
from langgraph.graph import END, START, MessagesState, StateGraph

from pytest_flows import explore


def _two_askers() -> Any:
    """Two parallel nodes asking the module-level model: their order is the scheduler's."""
    builder = StateGraph(MessagesState)
    for name in ("pros", "cons"):
        builder.add_node(name, lambda state, n=name: {"messages": [g.MODEL.invoke(f"{n}?")]})
        builder.add_edge(START, name)
        builder.add_edge(name, END)
    return builder.compile()


def _ids(run: Any) -> list[str]:
    return [m.id for m in run.values["messages"]]


def test_every_schedule_explore_runs_numbers_its_messages_from_one(flows, fake_llm):
    fake_llm.reply(lambda request: request.caller["method"], times=100, optional=True)

    found = explore(flows, _two_askers, {"messages": []}, max_schedules=20)

    (outcome,) = found.outcomes
    assert outcome.schedules > 1  # the counters would have gone on counting across these
    assert sorted(_ids(outcome.run)) == ["msg-cons-1", "msg-pros-1"]
    again = flows.run(_two_askers(), {"messages": []}, schedule=outcome.schedule)
    assert again.config != outcome.run.config  # another thread, the same messages
    assert again.values["messages"] == outcome.run.values["messages"]


def test_a_run_continuing_the_thread_goes_on_counting(flows, fake_llm):
    fake_llm.on(method="agent").reply("first", "second")
    graph = g.react_agent()

    first = flows.run(graph, {"messages": [("user", "hi")]})
    more = flows.run(graph, {"messages": [("user", "and?")]}, config=first.config)

    assert [(m.content, m.id) for m in more.values["messages"] if m.type == "ai"] == [
        ("first", "msg-agent-1"),
        ("second", "msg-agent-2"),  # msg-agent-1 again would have replaced "first"
    ]


def test_a_history_passed_into_a_new_thread_is_appended_to(flows, fake_llm):
    fake_llm.on(method="agent").reply("first", "second")
    graph = g.react_agent()
    first = flows.run(graph, {"messages": [("user", "hi")]})

    fresh = flows.run(graph, {"messages": [*first.values["messages"], ("user", "and?")]})

    assert fresh.thread_id != first.thread_id
    assert [m.content for m in fresh.values["messages"] if m.type == "ai"] == ["first", "second"]
    assert fresh.values["messages"][-1].id == "msg-agent-2"  # past the id the model was shown


def test_a_fresh_thread_numbers_from_one_again(flows, fake_llm):
    fake_llm.on(method="agent").reply("first", "second")
    graph = g.react_agent()

    one = flows.run(graph, {"messages": [("user", "hi")]})
    two = flows.run(graph, {"messages": [("user", "hi")]})

    assert _ids(one)[-1] == _ids(two)[-1] == "msg-agent-1"
