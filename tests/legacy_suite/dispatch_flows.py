"""Real CrewAI flows covering the runtime's dispatch shapes, used by the tests."""

from __future__ import annotations

import asyncio

from crewai.flow.flow import Flow, and_, listen, or_, router, start
from pydantic import BaseModel


class TwoStarts(Flow):
    @start()
    def fetch_a(self) -> str:
        return "a"

    @start()
    async def fetch_b(self) -> str:
        return "b"

    @listen(and_(fetch_a, fetch_b))
    def merge(self) -> str:
        return "merged"


class FanOut(Flow):
    """Three parallel sync listeners appending to a shared log."""

    @start()
    def begin(self) -> int:
        self.state["log"] = []
        return 1

    @listen(begin)
    def left(self, value: int) -> str:
        self.state["log"].append("left")
        return "L"

    @listen(begin)
    def middle(self, value: int) -> str:
        self.state["log"].append("middle")
        return "M"

    @listen(begin)
    def right(self, value: int) -> str:
        self.state["log"].append("right")
        return "R"

    @listen(and_(left, middle, right))
    def join(self) -> list[str]:
        return sorted(self.state["log"])


class Ticket(BaseModel):
    id: str = ""
    priority: str = "low"
    handled_by: str = ""
    escalations: int = 0


class Routing(Flow[Ticket]):
    """Chained routers: classify -> (urgent? escalate-router) -> handlers on labels."""

    @start()
    def receive(self) -> str:
        return self.state.priority

    @router(receive)
    def classify(self) -> str:
        return "urgent" if self.state.priority == "high" else "routine"

    @router("urgent")
    def escalate(self) -> str:
        self.state.escalations += 1
        return "page_oncall"

    @listen("routine")
    def queue(self) -> str:
        self.state.handled_by = "queue"
        return "queued"

    @listen("page_oncall")
    def page(self) -> str:
        self.state.handled_by = "oncall"
        return "paged"


class NonExclusiveOr(Flow):
    """An or_ listener that shares its triggers with another listener: no race."""

    @start()
    def first(self) -> str:
        return "first"

    @start()
    def second(self) -> str:
        return "second"

    @listen(or_(first, second))
    def either(self, value: str) -> str:
        return f"either:{value}"

    @listen(first)
    def audit(self, value: str) -> str:
        return f"audit:{value}"


class Race(Flow):
    """An exclusive or_: both racers are triggered together; the first chain to finish wins."""

    @start()
    def kick(self) -> str:
        return "go"

    @listen(kick)
    async def fast_path(self, value: str) -> str:
        await asyncio.sleep(1)
        return "fast"

    @listen(kick)
    async def slow_path(self, value: str) -> str:
        await asyncio.sleep(5)
        return "slow"

    @listen(or_(fast_path, slow_path))
    def finish(self, value: str) -> str:
        return f"winner:{value}"


class SyncRace(Flow):
    """Racing sync listeners: which completes first is the scheduler's choice."""

    @start()
    def kick(self) -> str:
        return "go"

    @listen(kick)
    def alpha(self, value: str) -> str:
        return "alpha"

    @listen(kick)
    def beta(self, value: str) -> str:
        return "beta"

    @listen(kick)
    def gamma(self, value: str) -> str:
        return "gamma"

    @listen(or_(alpha, beta, gamma))
    def crown(self, value: str) -> str:
        self.state["winner"] = value
        return value


class Loop(Flow):
    """A router cycle: draft -> review -> (revise -> draft) until approved."""

    @start("revise")
    def draft(self) -> int:
        self.state["drafts"] = self.state.get("drafts", 0) + 1
        return self.state["drafts"]

    @router(draft)
    def review(self) -> str:
        return "approved" if self.state["drafts"] >= 3 else "revise"

    @listen("approved")
    def publish(self) -> str:
        return f"published after {self.state['drafts']} drafts"


class BranchFails(Flow):
    """One of two parallel branches raises."""

    @start()
    def begin(self) -> int:
        return 1

    @listen(begin)
    def healthy(self, value: int) -> str:
        self.state["healthy"] = True
        return "ok"

    @listen(begin)
    def broken(self, value: int) -> str:
        raise RuntimeError("upstream service said no")

    @listen(and_(healthy, broken))
    def never(self) -> str:
        return "unreachable"


class Twelve(Flow):
    """Twelve methods: a chain, a fan-out, a router and an and_ join (benchmarks use it)."""

    @start()
    def m01(self) -> int:
        return 1

    @listen(m01)
    def m02(self, v: int) -> int:
        return v + 1

    @listen(m02)
    async def m03(self, v: int) -> int:
        return v + 1

    @listen(m03)
    def m04(self, v: int) -> int:
        return v + 1

    @listen(m03)
    def m05(self, v: int) -> int:
        return v + 1

    @listen(m03)
    async def m06(self, v: int) -> int:
        return v + 1

    @listen(and_(m04, m05, m06))
    def m07(self) -> int:
        return 7

    @router(m07)
    def m08(self) -> str:
        return "left"

    @listen("left")
    def m09(self) -> int:
        return 9

    @listen(m09)
    def m10(self, v: int) -> int:
        return v + 1

    @listen(m10)
    async def m11(self, v: int) -> int:
        return v + 1

    @listen(m11)
    def m12(self, v: int) -> int:
        self.state["done"] = True
        return v + 1
