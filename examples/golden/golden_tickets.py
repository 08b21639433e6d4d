"""A support-ticket flow whose saved states must survive every release."""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, router, start
from crewai.flow.persistence import persist
from pydantic import BaseModel


class TicketState(BaseModel):
    subject: str = ""
    severity: int = 1
    reply: str = ""


@persist()
class TicketFlow(Flow[TicketState]):
    @start()
    def triage(self) -> int:
        return self.state.severity

    @router(triage)
    def route(self, severity: int) -> str:
        return "urgent" if severity >= 3 else "normal"

    @listen("urgent")
    def page_on_call(self) -> str:
        self.state.reply = f"paged on-call for {self.state.subject!r}"
        return self.state.reply

    @listen("normal")
    def queue(self) -> str:
        self.state.reply = f"queued {self.state.subject!r}"
        return self.state.reply
