"""Approve or reject with ``interrupt()`` (LangGraph's human-in-the-loop pattern).

A refund is drafted, a human approves or rejects it (``interrupt`` pauses the graph
until ``Command(resume=...)`` brings the answer), then it is paid or closed.
Production compiles it with a durable checkpointer and resumes from a webhook.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class Refund(TypedDict, total=False):
    order: str
    amount: float
    decision: str
    note: str


def draft(refund: Refund) -> Refund:
    return {"note": f"refund {refund['amount']:.2f} EUR for order {refund['order']}"}


def approval(refund: Refund) -> Command[Literal["pay", "close"]]:
    answer = interrupt({"question": "Approve this refund?", "note": refund["note"]})
    approved = answer.get("approved", False) if isinstance(answer, dict) else answer == "yes"
    return Command(goto="pay" if approved else "close", update={"decision": str(answer)})


def pay(refund: Refund) -> Refund:
    return {"note": refund["note"] + ": paid"}


def close(refund: Refund) -> Refund:
    return {"note": refund["note"] + ": rejected"}


def refund_graph() -> StateGraph[Refund]:
    builder = StateGraph(Refund)
    builder.add_node("draft", draft)
    builder.add_node("approval", approval)
    builder.add_node("pay", pay)
    builder.add_node("close", close)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "approval")
    builder.add_edge("pay", END)
    builder.add_edge("close", END)
    return builder


#: What production runs (a durable saver there; the test swaps in its own).
graph = refund_graph().compile(checkpointer=InMemorySaver())
