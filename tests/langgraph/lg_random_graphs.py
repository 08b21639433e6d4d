"""Random small LangGraph graphs as Python source, for the soundness check of exploration
(the LangGraph twin of ``tests/random_flows.py``).

A spec draws sync or async workers that a fan-out (edges, or ``Send``) starts in one
superstep, each reading and writing keys of a shared ``InMemoryStore`` with sleeps
between, then ending in one of the ways whose effect depends on the order the workers
ran or ended in: returning what it read (the list reducer keeps it), failing (which
error surfaces, which siblings' writes were saved), calling ``interrupt()`` (parallel
interrupts), or writing a plain ``LastValue`` channel (two writers in one superstep are
LangGraph's ``InvalidUpdateError``). A join reports the store, perhaps a router after it.
:func:`graph_source` renders the spec as the source a user would write.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st
from long_mode import LONG

_KEYS = ("x", "y")

#: How a worker ends (see the module docstring).
ENDS = ("return", "fail", "interrupt", "last")


@dataclasses.dataclass(frozen=True)
class Worker:
    ops: tuple[tuple[Any, ...], ...]  # ("get", key), ("put", key), ("sleep", hundredths)
    end: str = "return"


@dataclasses.dataclass(frozen=True)
class Spec:
    is_async: bool
    send: bool  # the fan-out is a router returning Send()s, not edges
    router: bool  # a router after the join picks "hi" or the end
    workers: tuple[Worker, ...]


@st.composite
def graph_specs(draw: Any) -> Spec:
    size = 4 if LONG else 3
    workers = []
    for _ in range(draw(st.integers(2, 4 if LONG else 3))):
        ops: list[tuple[Any, ...]] = []
        for _ in range(draw(st.integers(1, size))):
            kind = draw(st.sampled_from(("get", "put", "get", "put", "sleep")))
            if kind == "sleep":
                ops.append(("sleep", draw(st.integers(0, 12))))
            else:
                # one key mostly: the workers overlap
                ops.append((kind, draw(st.sampled_from(("x", "x", "y")))))
        end = draw(st.sampled_from(("return", "return", "fail", "interrupt", "last")))
        workers.append(Worker(tuple(ops), end))
    return Spec(draw(st.booleans()), draw(st.booleans()), draw(st.booleans()), tuple(workers))


def _worker_lines(name: str, worker: Worker, is_async: bool) -> list[str]:
    aw = "await " if is_async else ""
    fn = "async def" if is_async else "def"
    get, put = ("aget", "aput") if is_async else ("get", "put")
    lines = ["", f"    {fn} {name}(state, *, store: BaseStore):", "        v = 0"]
    for op in worker.ops:
        if op[0] == "get":
            lines.append(f"        item = {aw}store.{get}(('s',), {op[1]!r})")
            lines.append("        v = item.value['v'] if item else 0")
        elif op[0] == "put":
            lines.append(f"        {aw}store.{put}(('s',), {op[1]!r}, {{'v': v + 1}})")
        elif is_async:
            lines.append(f"        await asyncio.sleep({op[1] / 100})")
        else:
            lines.append(f"        time.sleep({op[1] / 100})")
    if worker.end == "fail":
        lines.append(f"        raise ValueError(f'{name} failed at {{v}}')")
    elif worker.end == "interrupt":
        lines.append(f"        said = interrupt(f'{name} at {{v}}')")
        lines.append(f"        return {{'notes': [f'{name}:{{v}}:{{said}}']}}")
    elif worker.end == "last":
        lines.append(f"        return {{'notes': [f'{name}:{{v}}'], 'last': {name!r}}}")
    else:
        lines.append(f"        return {{'notes': [f'{name}:{{v}}']}}")
    lines.append(f"    builder.add_node({name!r}, {name})")
    return lines


def graph_source(spec: Spec) -> str:
    """The graph of ``spec`` as Python source: ``build()`` returns a fresh compiled graph."""
    lines = [
        "import asyncio",
        "import operator",
        "import time",
        "from typing import Annotated, TypedDict",
        "",
        "from langgraph.graph import END, START, StateGraph",
        "from langgraph.store.base import BaseStore",
        "from langgraph.store.memory import InMemoryStore",
        "from langgraph.types import Send, interrupt",
        "",
        "",
        "class State(TypedDict, total=False):",
        "    notes: Annotated[list[str], operator.add]",
        "    last: str",
        "",
        "",
        "def build():",
        "    store = InMemoryStore()",
        "    builder = StateGraph(State)",
    ]
    names = [f"w{i}" for i in range(len(spec.workers))]
    for name, worker in zip(names, spec.workers, strict=True):
        lines += _worker_lines(name, worker, spec.is_async)
    lines += [
        "",
        "    def join(state, *, store: BaseStore):",
        "        got = {k: store.get(('s',), k) for k in ('x', 'y')}",
        "        seen = {k: (i.value['v'] if i else 0) for k, i in got.items()}",
        "        return {'notes': [f'join {seen}']}",
        "    builder.add_node('join', join)",
    ]
    if spec.send:
        lines += [
            "    builder.add_node('fan', lambda state: {'notes': ['fan']})",
            "    builder.add_edge(START, 'fan')",
            f"    targets = {names!r}",
            "    builder.add_conditional_edges('fan', lambda s: [Send(n, s) for n in targets])",
        ]
    else:
        lines += [f"    builder.add_edge(START, {n!r})" for n in names]
    lines.append(f"    builder.add_edge({names!r}, 'join')")
    if spec.router:
        lines += [
            "    builder.add_node('hi', lambda state: {'notes': ['hi']})",
            "    def route(state, *, store: BaseStore):",
            "        item = store.get(('s',), 'x')",
            "        return 'hi' if item and item.value['v'] > 1 else END",
            "    builder.add_conditional_edges('join', route, ['hi', END])",
        ]
    else:
        lines.append("    builder.add_edge('join', END)")
    lines.append("    return builder.compile(store=store)")
    return "\n".join(lines) + "\n"
