"""A support flow as it runs in production: crewAI's real ``LLM`` classifies a ticket,
a router picks a route, and the reply is drafted. ``draft_reply`` has a bug: a model
reply that mentions a refund makes it raise (the production incident)."""

from __future__ import annotations

from crewai import LLM
from crewai.flow.flow import Flow, listen, router, start

CLASSIFY_PROMPT = "Classify this support ticket as billing or technical:"


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
        return "incident: " + ask(f"Summarize for the on-call engineer: {self.state['ticket']}")
