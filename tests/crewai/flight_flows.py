"""Flows recorded in production (a plain Python process) by the flight recorder tests.

They call crewAI's real ``LLM`` (OpenAI provider) at ``OPENAI_BASE_URL``: the tests
point it at the loopback server in tests/crewai/loopback_openai.py, which answers
``"<n> words, starting '<first four words>'"``.
"""

from __future__ import annotations

import os
import tempfile

from crewai import LLM, Agent
from crewai.flow.flow import Flow, and_, listen, router, start
from crewai.flow.persistence import SQLiteFlowPersistence, persist
from crewai.tools import tool
from pydantic import BaseModel

#: The classification instruction; a test changes it to see the drift reported.
CLASSIFY_PROMPT = "Classify this ticket:"
#: A classification longer than this many words is a long ticket (a test changes it).
LONG_AFTER = 6


def _ask(prompt: str) -> str:
    return str(LLM(model="gpt-4o-mini", temperature=0).call([{"role": "user", "content": prompt}]))


class TicketFlow(Flow):
    """Classify a ticket; a long one is escalated, a short one answered."""

    @start()
    def classify(self) -> str:
        return _ask(f"{CLASSIFY_PROMPT} {self.state['ticket']}")

    @router(classify)
    def route(self, label: str) -> str:
        return "long" if int(label.split()[0]) > LONG_AFTER else "short"

    @listen("long")
    def escalate(self) -> str:
        return "escalated: " + _ask(f"Write an escalation note for: {self.state['ticket']}")

    @listen("short")
    def answer(self) -> str:
        reply = _ask(f"Answer briefly: {self.state['ticket']}")
        if "starting 'Answer briefly: Explode" in reply:
            # The production incident: a reply the parser did not expect.
            raise ValueError(f"cannot parse the model's reply {reply!r}")
        return "answered: " + reply


class StreamFlow(Flow):
    """Its LLM streams its reply (run as ``Flow(stream=True)``: the consumer gets the
    chunks as frames)."""

    @start()
    def draft(self) -> str:
        llm = LLM(model="gpt-4o-mini", temperature=0, stream=True)
        return str(
            llm.call([{"role": "user", "content": f"Draft a reply to: {self.state['ticket']}"}])
        )


class RaceFlow(Flow):
    """Two listeners of one start race; each notes when its (slow or fast) LLM call returned."""

    @start()
    def begin(self) -> str:
        self.state["order"] = []
        return "go"

    @listen(begin)
    def slow(self) -> str:
        reply = _ask("slow lookup of the archive")
        self.state["order"].append("slow")
        return reply

    @listen(begin)
    def fast(self) -> str:
        reply = _ask("fast lookup of the cache")
        self.state["order"].append("fast")
        return reply

    @listen(and_(slow, fast))
    def report(self) -> list[str]:
        return list(self.state["order"])


class AskFlow(Flow):
    """Asks a human for a name (``Flow.ask``)."""

    @start()
    def greet(self) -> str:
        return f"hello {self.ask('Your name?')}"


class CrewFlow(Flow):
    """Kicks off a one-agent crew."""

    @start()
    def research(self) -> str:
        from crewai import Agent, Crew, Task

        agent = Agent(
            role="Researcher", goal="Find facts", backstory="Careful", llm=LLM(model="gpt-4o-mini")
        )
        task = Task(description="Research {topic}", expected_output="notes", agent=agent)
        return str(Crew(agents=[agent], tasks=[task]).kickoff(inputs={"topic": "tides"}).raw)


def lookup_order(query: str) -> str:
    """The production tool: an order lookup (a test changes what today's code calls)."""
    return f"order {query}: shipped"


LOOKUP_SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look up an order",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}


#: Today's code may stop asking (a test sets it; a class patched instead would keep
#: crewAI's view of its methods for later tests).
LOOKUP_ASKS_THE_MODEL = True


class ToolFlow(Flow):
    """The model asks for a tool; crewAI's LLM runs it (``available_functions``)."""

    @start()
    def lookup(self) -> str:
        if not LOOKUP_ASKS_THE_MODEL:
            return "nothing looked up"
        return str(
            LLM(model="gpt-4o-mini", temperature=0).call(
                [{"role": "user", "content": f"lookup: {self.state['order']}"}],
                tools=[LOOKUP_SCHEMA],
                available_functions={"lookup_order": lookup_order},
            )
        )


@tool("lookup_order")
def lookup_tool(query: str) -> str:
    """Look up an order."""
    return lookup_order(query)


class AgentFlow(Flow):
    """An agent (``Agent.kickoff``) whose model asks for a tool; the agent runs it."""

    @start()
    def assist(self) -> str:
        agent = Agent(
            role="Clerk",
            goal="Answer order questions",
            backstory="Careful",
            tools=[lookup_tool],
            llm=LLM(model="gpt-4o-mini", temperature=0),
        )
        return str(agent.kickoff(f"lookup: {self.state['order']}").raw)


class TicketState(BaseModel):
    id: str = ""
    ticket: str = ""
    label: str = ""
    api_key: str = ""


#: Where production persists (a test's replay runs on the harness's store instead).
_DB = os.environ.get("FLIGHT_DB") or os.path.join(tempfile.gettempdir(), "flight_flows.db")
#: What today's code stores as the label (a test changes it to see the state differ).
LABEL_WORDS = 1


@persist(SQLiteFlowPersistence(db_path=_DB))
class PersistFlow(Flow[TicketState]):
    """Saves its state after each method (``@persist``): a secret-named field included."""

    @start()
    def classify(self) -> str:
        self.state.api_key = os.environ.get("OPENAI_API_KEY", "")
        label = _ask(f"{CLASSIFY_PROMPT} {self.state.ticket}")
        self.state.label = " ".join(label.split()[:LABEL_WORDS])
        return label

    @listen(classify)
    def done(self) -> str:
        return f"labelled {self.state.label}"
