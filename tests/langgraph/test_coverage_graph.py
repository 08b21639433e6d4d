"""The LangGraph coverage graph (``get_graph(xray=True)``) and how a superstep trace
counts against it: a router loop, a Send fan-out, a Command and a subgraph.

The trace below is the form the adapter writes (tests/langgraph's trace tests pin it);
``test_coverage_langgraph.py`` runs the same graph through ``--flows-cov`` end to end.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated, Literal, TypedDict

from langgraph.func import entrypoint
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

from pytest_flows._internal.coverage.counting import count
from pytest_flows._internal.coverage.notes import Started
from pytest_flows._internal.trace import TraceEvent
from pytest_flows.langgraph._graph import graph_of, logical


class State(TypedDict):
    n: int
    notes: Annotated[list[str], operator.add]


def route(state: State) -> Literal["again", "done"]:
    return "again" if state["n"] < 3 else "done"


def fan(state: State) -> list[Send]:
    return [Send("w", {"n": i, "notes": []}) for i in range(2)]


def hand_over(state: State) -> Command[Literal["sub", "inc"]]:
    return Command(goto="sub")


def _builder() -> StateGraph:
    inner = StateGraph(State)
    inner.add_node("x", lambda s: {"notes": ["x"]})
    inner.add_node("y", lambda s: {"notes": ["y"]})
    inner.add_edge(START, "x")
    inner.add_edge("x", "y")
    outer = StateGraph(State)
    outer.add_node("inc", lambda s: {"n": s["n"] + 1, "notes": ["inc"]})
    outer.add_node("cmd", hand_over)
    outer.add_node("sub", inner.compile())
    outer.add_node("w", lambda s: {"notes": [f"w{s['n']}"]})
    outer.add_node("join", lambda s: {})
    outer.add_edge(START, "inc")
    outer.add_conditional_edges("inc", route, {"again": "inc", "done": "cmd"})
    outer.add_conditional_edges("sub", fan, ["w"])
    outer.add_edge(["w", "sub"], "join")
    outer.add_edge("join", END)
    return outer


GRAPH = _builder().compile(name="loop_fan_sub")

#: What the adapter traces for GRAPH.invoke({"n": 2, "notes": []}) (values elided).
TRACE = """\
graph started loop_fan_sub
superstep started 1 tasks=[inc]
task started inc triggers=[branch:to:inc]
router inc path=route chose=done
task finished inc writes={}
superstep started 2 tasks=[cmd]
task started cmd triggers=[branch:to:cmd]
task finished cmd goto=[sub]
superstep started 3 tasks=[sub]
task started sub triggers=[branch:to:sub]
  superstep started 1 tasks=[x]
  task started x triggers=[branch:to:x]
  task finished x writes={}
  superstep started 2 tasks=[y]
  task started y triggers=[branch:to:y]
  task finished y writes={}
router sub path=fan chose=[Send(w), Send(w)]
task finished sub writes={}
superstep started 4 tasks=[w[0], w[1]]
task started w[0] arg={}
task finished w[0] writes={}
task started w[1] arg={}
task finished w[1] writes={}
superstep started 5 tasks=[join]
task started join triggers=[branch:to:join, join:sub+w:join]
task finished join writes={}
graph finished loop_fan_sub
"""


def _events(text: str) -> list[TraceEvent]:
    """Rendered trace lines back into events (``kind name key=value ...``, indented)."""
    events = []
    for line in text.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        head, _, rest = line.strip().partition(" ")
        if head in ("graph", "superstep", "task"):
            verb, _, rest = rest.partition(" ")
            head = f"{head}.{verb}"
        name, _, rest = rest.partition(" ")
        fields = tuple(re.findall(r"(\w+)=(.*?)(?= \w+=|$)", rest))
        events.append(TraceEvent(kind=head, name=name, fields=fields, depth=depth))
    return events


def test_items_of_a_router_loop_a_send_fan_out_a_command_and_a_subgraph() -> None:
    graph = graph_of(GRAPH)

    assert graph.key == f"{__name__}.loop_fan_sub"
    assert (graph.name, graph.framework) == ("loop_fan_sub", "langgraph")
    assert sorted((item.kind, item.text) for item in graph.items) == [
        ("command goto", "cmd -> inc (Command)"),
        ("command goto", "cmd -> sub (Command)"),
        ("edge", "__start__ -> inc"),
        ("edge", "join -> __end__"),
        ("edge", "sub + w -> join (join)"),
        ("edge", "sub:x -> sub:y"),
        ("node", "cmd"),
        ("node", "inc"),
        ("node", "join"),
        ("node", "sub:x"),
        ("node", "sub:y"),
        ("node", "w"),
        ("router label", "inc -> again"),
        ("router label", "inc -> done"),
        ("router label", "sub -> w"),
    ]
    # drawn as LangGraph's xray draws it: into the subgraph's first node, out of its last
    drawn = {(link.source, link.target, link.label) for link in graph.links}
    assert ("cmd", "sub:x", "goto") in drawn
    assert ("sub:y", "w", "w") in drawn
    assert ("inc", "inc", "again") in drawn
    assert {node.id: node.kind for node in graph.nodes}["__start__"] == "start"


def test_a_builder_is_compiled_and_an_entrypoint_is_one_node() -> None:
    assert graph_of(_builder()).item_ids() == graph_of(GRAPH).item_ids()

    @entrypoint()
    def summarize(text: str) -> str:
        return text

    graph = graph_of(summarize)
    assert graph.key == f"{__name__}.summarize"
    assert [item.id for item in graph.items] == ["node:summarize", "edge:__start__->summarize"]


def test_unnamed_graphs_are_named_by_their_state_schema() -> None:
    assert graph_of(_builder()).key == f"{__name__}.StateGraph(State)"


def test_a_drawn_edge_is_counted_where_the_trace_sees_it() -> None:
    assert logical("cmd", "sub:x") == ("cmd", "sub")
    assert logical("sub:y", "w") == ("sub", "w")
    assert logical("sub:x", "sub:y") == ("sub:x", "sub:y")
    assert logical("a:b:c", "a:d") == ("a:b", "a:d")


def test_the_trace_covers_nodes_labels_sends_gotos_and_edges() -> None:
    graph = graph_of(GRAPH)

    counted = count(_events(TRACE), [Started("langgraph", "loop_fan_sub", graph)])

    covered = counted[graph.key].covered
    assert sorted(graph.item_ids() - covered) == ["goto:cmd->inc", "label:inc:again"]
    assert "label:sub:w" in covered  # by the Sends to w
    assert "edge:sub+w->join" in covered  # the join's trigger
    assert "edge:sub:x->sub:y" in covered  # inside the subgraph, one level deeper
    assert counted[graph.key].unexpected == set()


def test_a_label_no_router_declares_is_reported() -> None:
    graph = graph_of(GRAPH)
    trace = TRACE.replace("chose=done", "chose=later").replace("goto=[sub]", "goto=[nowhere]")

    counted = count(_events(trace), [Started("langgraph", "loop_fan_sub", graph)])

    assert counted[graph.key].unexpected == {"inc -> later", "cmd -> nowhere (Command)"}


def test_a_run_whose_graph_is_unknown_counts_nothing() -> None:
    assert count(_events(TRACE), []) == {}
