"""A ReAct agent, written the way LangGraph's docs write one.

The model is built at import (a module-level ``ChatOpenAI``, its tools bound once), an
``agent`` node calls it, a prebuilt ``ToolNode`` runs the tool calls it asks for, and
``tools_condition`` loops back to the agent until it answers without a tool call. In
production the key comes from ``OPENAI_API_KEY`` and the weather tool calls a web API.
"""

from __future__ import annotations

import os

from langchain_core.messages import SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93, ("EUR", "GBP"): 0.85}


@tool
def get_weather(city: str) -> str:
    """The weather forecast for a city today."""
    raise RuntimeError(f"weather service unreachable for {city}")  # a web API in production


@tool
def convert(amount: float, source: str, target: str) -> str:
    """Convert an amount of money between two currencies (EUR, USD, GBP)."""
    rate = RATES.get((source.upper(), target.upper()))
    if rate is None:
        raise ValueError(f"no rate for {source} -> {target}")
    return f"{amount * rate:.2f} {target.upper()}"


TOOLS = [get_weather, convert]
SYSTEM = "You help travellers. Use the tools for weather and money; answer briefly."

model = ChatOpenAI(model="gpt-4o-mini", api_key=os.environ.get("OPENAI_API_KEY", "unset"))
agent_model = model.bind_tools(TOOLS)


def agent(state: MessagesState) -> MessagesState:
    reply = agent_model.invoke([SystemMessage(SYSTEM), *state["messages"]])
    return {"messages": [reply]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
# a tool's exception goes back to the model as an error ToolMessage (the default
# handles only invalid arguments, and re-raises the rest)
builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)  # "tools" or END
builder.add_edge("tools", "agent")
graph = builder.compile(name="trip_agent")
