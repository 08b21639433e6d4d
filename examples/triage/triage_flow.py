"""A support-ticket triage flow: the kind of flow pytest-flows is for.

Three checks run in parallel (two sync, one async that waits on a slow
service), a router sends the ticket on, and the last step joins everything.
"""

from __future__ import annotations

import asyncio

from crewai.flow.flow import Flow, and_, listen, router, start
from pydantic import BaseModel, Field


class Ticket(BaseModel):
    id: str = ""
    text: str = ""
    customer_tier: str = "free"
    flags: list[str] = Field(default_factory=list)
    route: str = ""
    reply: str = ""


class TriageFlow(Flow[Ticket]):
    @start()
    def receive(self) -> str:
        if not self.state.text.strip():
            raise ValueError("ticket has no text")
        return self.state.text.lower()

    @listen(receive)
    def check_language(self, text: str) -> str:
        if any(word in text for word in ("stupid", "useless")):
            self.state.flags.append("abusive")
        return "checked language"

    @listen(receive)
    def check_outage(self, text: str) -> str:
        if "down" in text or "outage" in text:
            self.state.flags.append("outage")
        return "checked outage"

    @listen(receive)
    async def look_up_account(self, text: str) -> str:
        await asyncio.sleep(20)  # a slow CRM; free under pytest-flows' virtual clock
        if self.state.customer_tier == "enterprise":
            self.state.flags.append("vip")
        return "looked up account"

    @router(and_(check_language, check_outage, look_up_account))
    def decide(self) -> str:
        if "outage" in self.state.flags:
            return "incident"
        if "vip" in self.state.flags:
            return "priority"
        return "standard"

    @listen("incident")
    def open_incident(self) -> str:
        self.state.route = "incident"
        self.state.reply = "We are aware of the outage and are on it."
        return self.state.reply

    @listen("priority")
    def assign_account_manager(self) -> str:
        self.state.route = "priority"
        self.state.reply = "Your account manager will call you within the hour."
        return self.state.reply

    @listen("standard")
    def queue(self) -> str:
        self.state.route = "standard"
        self.state.reply = "Thanks, we will get back to you within two days."
        return self.state.reply
