"""LangGraph graphs the flight recorder tests record in production and replay (helpers).

Module-level, as production code has them: a compiled graph with its own
checkpointer and a module-level ``ChatOpenAI`` whose base URL comes from the
environment (the production script points it at a loopback server; a test answers
it with ``fake_llm``).
"""

from __future__ import annotations

import operator
import os
import time
from typing import Annotated, TypedDict

from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

#: What the writer asks its model first (a test changes it to see a prompt divergence).
INSTRUCTIONS = "Write one line about the topic."

MODEL = ChatOpenAI(
    model="gpt-4o-mini",
    base_url=os.environ.get("FLIGHT_LG_BASE_URL", "http://127.0.0.1:9/v1"),
    api_key=os.environ.get("FLIGHT_LG_API_KEY", "sk-not-used-in-tests"),  # type: ignore[arg-type]
    max_retries=0,
)


class Draft(TypedDict, total=False):
    topic: str
    draft: str
    notes: Annotated[list[str], operator.add]


def draft(state: Draft) -> Draft:
    reply = MODEL.invoke([("system", INSTRUCTIONS), ("user", state["topic"])])
    return {"draft": str(reply.content), "notes": ["draft"]}


def review(state: Draft) -> Draft:
    answer = interrupt({"question": "publish?", "draft": state["draft"]})
    return {"notes": [f"review={answer}"]}


def publish(state: Draft) -> Draft:
    return {"notes": ["published: " + state["draft"]]}


_writer = StateGraph(Draft)
_writer.add_node("draft", draft)
_writer.add_node("review", review)
_writer.add_node("publish", publish)
_writer.add_edge(START, "draft")
_writer.add_edge("draft", "review")
_writer.add_edge("review", "publish")
_writer.add_edge("publish", END)
writer = _writer.compile(checkpointer=InMemorySaver(), name="writer")


class Fan(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]


def _note(text: str):  # type: ignore[no-untyped-def]
    def node(state: Fan) -> Fan:
        time.sleep(0.01)  # parallel nodes that wait alike: which finishes first is a race
        return {"notes": [text]}

    return node


_fanout = StateGraph(Fan)
for _name in ("left", "middle", "right"):
    _fanout.add_node(_name, _note(_name))
    _fanout.add_edge(START, _name)
_fanout.add_node("join", _note("join"))
_fanout.add_edge(["left", "middle", "right"], "join")
_fanout.add_edge("join", END)
fanout = _fanout.compile(name="fanout")


class Story(TypedDict, total=False):
    topic: str
    story: str
    pieces: int
    summary: str


def tell(state: Story) -> Story:
    # the node streams its model's reply itself, as a chat UI's backend does
    chunks = [str(c.content) for c in MODEL.stream([("user", "Tell a story: " + state["topic"])])]
    text = [c for c in chunks if c]
    return {"story": "".join(text), "pieces": len(text)}


def sum_up(state: Story) -> Story:
    # invoke, which LangGraph streams when the caller asks for stream_mode="messages"
    reply = MODEL.invoke([("user", "Sum up: " + state["story"])])
    return {"summary": str(reply.content)}


_teller = StateGraph(Story)
_teller.add_node("tell", tell)
_teller.add_node("sum_up", sum_up)
_teller.add_edge(START, "tell")
_teller.add_edge("tell", "sum_up")
_teller.add_edge("sum_up", END)
teller = _teller.compile(name="teller")
