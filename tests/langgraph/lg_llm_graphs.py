"""Graphs shaped like users' ones, for the fake_llm / fake_tools tests.

``MODEL`` is built at import, as a production module builds it: the tests never
change it, ``fake_llm`` answers it. ``api_key`` is a dummy one (langchain-openai
refuses to build a model without a key); nothing is ever sent with it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from pydantic import BaseModel

MODEL = ChatOpenAI(model="gpt-4o", api_key="sk-not-used")  # type: ignore[arg-type]

SEARCHED: list[str] = []  # what the real search tool was asked (a test clears it)


@tool
def search(query: str) -> str:
    """Search the web."""
    SEARCHED.append(query)
    return f"results for {query}"


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


TOOLS = [search, weather]


def react_agent(model: Any = None, *, handle_tool_errors: Any = None) -> Any:
    """The ReAct loop of LangGraph's docs: agent -> tools -> agent until no tool call."""
    llm = (model or MODEL).bind_tools(TOOLS)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    handling = {} if handle_tool_errors is None else {"handle_tool_errors": handle_tool_errors}
    graph.add_node("tools", ToolNode(TOOLS, **handling))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


class Route(BaseModel):
    """Where the router sends a request."""

    step: Literal["billing", "tech"]


class Ticket(TypedDict, total=False):
    text: str
    step: str
    answer: str


def router(method: str, model: Any = None) -> Any:
    """A router whose decision is a structured output (``with_structured_output``)."""
    decide = (model or MODEL).with_structured_output(Route, method=method)

    def route(state: Ticket) -> dict[str, Any]:
        return {"step": decide.invoke(state["text"]).step}

    def billing(state: Ticket) -> dict[str, Any]:
        return {"answer": "refund sent"}

    def tech(state: Ticket) -> dict[str, Any]:
        return {"answer": (model or MODEL).invoke(f"fix: {state['text']}").content}

    graph = StateGraph(Ticket)
    graph.add_node("router", route)
    graph.add_node("billing", billing)
    graph.add_node("tech", tech)
    graph.add_edge(START, "router")
    graph.add_conditional_edges("router", lambda s: s["step"], ["billing", "tech"])
    graph.add_edge("billing", END)
    graph.add_edge("tech", END)
    return graph.compile()


class Notes(TypedDict, total=False):
    topic: str
    notes: Annotated[list[str], operator.add]


def parallel_writers() -> Any:
    """Two branches from START, each asking the model, joined by a reducer."""

    def writer(name: str) -> Any:
        def write(state: Notes) -> dict[str, Any]:
            text = MODEL.invoke(f"{name} about {state['topic']}").content
            return {"notes": [f"{name}: {text}"]}

        return write

    graph = StateGraph(Notes)
    for name in ("pros", "cons"):
        graph.add_node(name, writer(name))
        graph.add_edge(START, name)
        graph.add_edge(name, END)
    return graph.compile()


def approval(model: Any = None) -> Any:
    """A node that drafts with the model, then asks a human: it re-runs on resume."""

    def draft(state: MessagesState) -> dict[str, Any]:
        reply = (model or MODEL).invoke(state["messages"])
        verdict = interrupt({"draft": reply.content})
        return {"messages": [reply, ("user", f"verdict: {verdict}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("draft", draft)
    graph.add_edge(START, "draft")
    graph.add_edge("draft", END)
    return graph.compile(checkpointer=InMemorySaver())


def team() -> Any:
    """A subgraph node ``researcher`` inside the parent's ``team`` node."""

    def researcher(state: MessagesState) -> dict[str, Any]:
        return {"messages": [MODEL.invoke(state["messages"])]}

    inner = StateGraph(MessagesState)
    inner.add_node("researcher", researcher)
    inner.add_edge(START, "researcher")
    outer = StateGraph(MessagesState)
    outer.add_node("team", inner.compile())
    outer.add_edge(START, "team")
    return outer.compile()
