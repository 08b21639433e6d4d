"""A support flow as it runs in production: crewAI's real ``LLM`` classifies a ticket,
a router picks a route, and the reply is drafted; a technical ticket has the model call
a tool (``check_status``, the status page). ``draft_reply`` has a bug: a model reply
that mentions a refund makes it raise (the production incident)."""

from __future__ import annotations

from crewai import LLM
from crewai.flow.flow import Flow, listen, router, start

CLASSIFY_PROMPT = "Classify this support ticket as billing or technical:"

STATUS_TOOL = {
    "type": "function",
    "function": {
        "name": "check_status",
        "description": "The status page's entry for a service",
        "parameters": {
            "type": "object",
            "properties": {"service": {"type": "string"}},
            "required": ["service"],
        },
    },
}


def check_status(service: str) -> str:
    """The tool: in production it asks the status page (a replay answers from the record)."""
    return f"{service}: degraded since 09:00"


def ask(prompt: str) -> str:
    llm = LLM(model="gpt-4o-mini", temperature=0)
    return str(llm.call([{"role": "user", "content": prompt}]))


class SupportFlow(Flow):
    @start()
    def classify(self) -> str:
        return ask(f"{CLASSIFY_PROMPT} {self.state['ticket']}")

    @router(classify)
    def route(self, label: str) -> str:
        return "billing" if "billing" in label.lower() else "technical"

    @listen("billing")
    def draft_reply(self) -> str:
        reply = ask(f"Draft a short reply to: {self.state['ticket']}")
        if "refund" in reply.lower():
            raise ValueError(f"refunds need a human: {reply!r}")
        return reply

    @listen("technical")
    def open_incident(self) -> str:
        llm = LLM(model="gpt-4o-mini", temperature=0)
        status = llm.call(
            [{"role": "user", "content": f"Check the status of: {self.state['ticket']}"}],
            tools=[STATUS_TOOL],
            available_functions={"check_status": check_status},
        )
        return f"incident ({status}): " + ask(
            f"Summarize for the on-call engineer: {self.state['ticket']}"
        )
