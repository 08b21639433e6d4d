"""Graphs shaped like users' (LangGraph's documented patterns), for the store's tests,
and the check that each runs the same on the flows saver as on ``InMemorySaver``.

Builders return uncompiled ``StateGraph``s: each test compiles with the saver it tests.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt

from pytest_flows.adapters import FlowStore
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver

__all__ = [
    "GRAPHS",
    "approval_graph",
    "build",
    "loop_graph",
    "run_to_end",
    "send_graph",
    "subgraph_graph",
]


class Loop(TypedDict):
    notes: Annotated[list[str], operator.add]
    rounds: int


def loop_graph(rounds: int = 2) -> StateGraph[Any]:
    """A router loop around parallel branches with a join: a -> (b, c) -> j -> a | end."""

    def a(state: Loop) -> dict[str, Any]:
        return {"notes": [f"a{state['rounds']}"], "rounds": state["rounds"] + 1}

    def b(state: Loop) -> dict[str, Any]:
        return {"notes": ["b"]}

    def c(state: Loop) -> dict[str, Any]:
        return {"notes": ["c"]}

    def join(state: Loop) -> dict[str, Any]:
        return {"notes": [f"j{len(state['notes'])}"]}

    def route(state: Loop) -> str:
        return "again" if state["rounds"] < rounds else "done"

    builder = StateGraph(Loop)
    for name, node in (("a", a), ("b", b), ("c", c), ("join", join)):
        builder.add_node(name, node)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "join")
    builder.add_conditional_edges("join", route, {"again": "a", "done": END})
    return builder


class Work(TypedDict):
    topic: str
    parts: Annotated[list[str], operator.add]
    report: str


class Part(TypedDict):
    topic: str
    part: int


def send_graph(workers: int = 3) -> StateGraph[Any]:
    """Orchestrator-worker: ``Send`` one worker per part, a synthesizer joins them."""

    def plan(state: Work) -> dict[str, Any]:
        return {}

    def fan_out(state: Work) -> list[Send]:
        return [Send("worker", {"topic": state["topic"], "part": i}) for i in range(workers)]

    def worker(part: Part) -> dict[str, Any]:
        return {"parts": [f"{part['topic']}#{part['part']}"]}

    def synthesize(state: Work) -> dict[str, Any]:
        return {"report": " + ".join(state["parts"])}

    builder = StateGraph(Work)
    builder.add_node("plan", plan)
    builder.add_node("worker", worker)
    builder.add_node("synthesize", synthesize)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["worker"])
    builder.add_edge("worker", "synthesize")
    builder.add_edge("synthesize", END)
    return builder


class Approval(TypedDict):
    draft: str
    verdict: str
    log: Annotated[list[str], operator.add]


def approval_graph() -> StateGraph[Any]:
    """Write a draft, ask a human with ``interrupt()``, publish or revise."""

    def write(state: Approval) -> dict[str, Any]:
        return {"draft": state["draft"].upper(), "log": ["write"]}

    def review(state: Approval) -> Command[Any]:
        answer = interrupt({"draft": state["draft"]})
        goto = "publish" if answer == "yes" else "revise"
        return Command(goto=goto, update={"verdict": answer, "log": ["review"]})

    def publish(state: Approval) -> dict[str, Any]:
        return {"log": ["publish"]}

    def revise(state: Approval) -> dict[str, Any]:
        return {"log": ["revise"]}

    builder = StateGraph(Approval)
    builder.add_node("write", write)
    builder.add_node("review", review, destinations=("publish", "revise"))
    builder.add_node("publish", publish)
    builder.add_node("revise", revise)
    builder.add_edge(START, "write")
    builder.add_edge("write", "review")
    builder.add_edge("publish", END)
    builder.add_edge("revise", END)
    return builder


class Outer(TypedDict):
    text: str
    steps: Annotated[list[str], operator.add]


def subgraph_graph() -> StateGraph[Any]:
    """A parent whose middle node is a compiled subgraph (its checkpoints get a namespace)."""

    def inner_one(state: Outer) -> dict[str, Any]:
        return {"steps": ["inner_one"]}

    def inner_two(state: Outer) -> dict[str, Any]:
        return {"text": state["text"] + "!", "steps": ["inner_two"]}

    inner = StateGraph(Outer)
    inner.add_node("inner_one", inner_one)
    inner.add_node("inner_two", inner_two)
    inner.add_edge(START, "inner_one")
    inner.add_edge("inner_one", "inner_two")

    def before(state: Outer) -> dict[str, Any]:
        return {"steps": ["before"]}

    def after(state: Outer) -> dict[str, Any]:
        return {"steps": ["after"]}

    builder = StateGraph(Outer)
    builder.add_node("before", before)
    builder.add_node("sub", inner.compile())
    builder.add_node("after", after)
    builder.add_edge(START, "before")
    builder.add_edge("before", "sub")
    builder.add_edge("sub", "after")
    builder.add_edge("after", END)
    return builder


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def build() -> Any:
    """docs/langgraph-store.md's graph: draft -> review, compiled."""
    builder = StateGraph(Notes)
    builder.add_node("draft", lambda state: {"notes": ["draft"]})
    builder.add_node("review", lambda state: {"notes": ["review"]})
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", END)
    return builder.compile()


#: name -> (builder, inputs, resume answers for its interrupts)
GRAPHS: dict[str, tuple[Any, dict[str, Any], list[Any]]] = {
    "loop": (loop_graph, {"notes": [], "rounds": 0}, []),
    "send": (send_graph, {"topic": "t", "parts": [], "report": ""}, []),
    "approval": (approval_graph, {"draft": "hi", "verdict": "", "log": []}, ["yes"]),
    "subgraph": (subgraph_graph, {"text": "x", "steps": []}, []),
}


def run_to_end(graph: Any, inputs: Any, config: Any, answers: list[Any], **kw: Any) -> Any:
    """Invoke, answering each interrupt with the next of ``answers``."""
    result = graph.invoke(inputs, config, **kw)
    for answer in answers:
        result = graph.invoke(Command(resume=answer), config, **kw)
    return result


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_each_graph_ends_as_on_in_memory_saver(name: str, durability: str) -> None:
    # Compared with the bare runtime: the same graph on LangGraph's InMemorySaver.
    build, inputs, answers = GRAPHS[name]
    config = {"configurable": {"thread_id": "t1"}}
    reference = build().compile(checkpointer=InMemorySaver())
    ours = build().compile(checkpointer=FlowsCheckpointSaver(store=FlowStore()))

    expected = run_to_end(reference, inputs, config, answers, durability=durability)
    got = run_to_end(ours, inputs, config, answers, durability=durability)

    assert got == expected
    theirs, mine = reference.get_state(config), ours.get_state(config)
    assert (mine.values, mine.next, mine.metadata["step"]) == (
        theirs.values,
        theirs.next,
        theirs.metadata["step"],
    )
    assert len(list(ours.get_state_history(config))) == len(
        list(reference.get_state_history(config))
    )
