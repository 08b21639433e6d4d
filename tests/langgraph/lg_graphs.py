"""Real LangGraph graphs the core adapter's tests run (helpers, not tests)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send, interrupt


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    x: int


def _note(text: str) -> Any:
    return lambda state: {"notes": [text]}


def route(state: Notes) -> str:
    return "sub" if state.get("x", 0) > 0 else "done"


def fan(state: Notes) -> list[Send]:
    return [Send("worker", {"x": i}) for i in range(3)]


def worker(state: Notes) -> Notes:
    return {"notes": [f"worker{state['x']}"]}


def ask(state: Notes) -> Notes:
    answer = interrupt("ship it?")
    return {"notes": [f"answer={answer}"]}


def inner_graph() -> Any:
    inner = StateGraph(Notes)
    inner.add_node("inner", _note("inner"))
    inner.add_edge(START, "inner")
    return inner.compile()


def tour_builder() -> StateGraph[Notes]:
    """A router, parallel branches, Send workers, a subgraph and an interrupt."""
    builder = StateGraph(Notes)
    builder.add_node("a", _note("a"))
    builder.add_node("b", _note("b"))
    builder.add_node("worker", worker)
    builder.add_node("sub", inner_graph())
    builder.add_node("ask", ask)
    builder.add_node("done", _note("done"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_conditional_edges("a", route, {"sub": "sub", "done": "done"})
    builder.add_conditional_edges("b", fan)
    builder.add_edge("sub", "ask")
    builder.add_edge("ask", END)
    builder.add_edge("done", END)
    return builder


def _asker(name: str) -> Any:
    def node(state: Notes) -> Notes:
        return {"notes": [f"{name}={interrupt(f'{name}?')}"]}

    return node


def parallel_interrupts_builder(width: int = 3) -> StateGraph[Notes]:
    """``width`` parallel nodes, each asking with interrupt(), then a join."""
    builder = StateGraph(Notes)
    names = [f"p{i}" for i in range(width)]
    for name in names:
        builder.add_node(name, _asker(name))
        builder.add_edge(START, name)
    builder.add_node("join", _note("join"))
    builder.add_edge(names, "join")
    builder.add_edge("join", END)
    return builder


def parallel_builder(width: int = 4, broken: dict[str, Any] | None = None) -> StateGraph[Notes]:
    """``width`` parallel nodes between a start and a join (``broken``: nodes replaced)."""
    builder = StateGraph(Notes)
    builder.add_node("start", _note("start"))
    builder.add_edge(START, "start")
    names = [f"n{i}" for i in range(width)]
    for name in names:
        builder.add_node(name, (broken or {}).get(name) or _note(name))
        builder.add_edge("start", name)
    builder.add_node("join", _note("join"))
    builder.add_edge(names, "join")
    builder.add_edge("join", END)
    return builder


@task
def double(x: int) -> int:
    return 2 * x


@task
def confirm(total: int) -> Any:
    return interrupt(f"total {total}?")


@entrypoint()
def doubler(numbers: list[int]) -> dict[str, Any]:
    futures = [double(n) for n in numbers]
    total = sum(f.result() for f in futures)
    return {"total": total, "confirmed": confirm(total).result()}
