"""Accesses the search once did not record (issue 42), each a small flow: a nested
model's method call, a mutation through an alias of a state list after a sleep, a module
global, and a router that loops back to a listener."""

from __future__ import annotations

import asyncio
import time

from crewai.flow.flow import Flow, and_, listen, or_, router, start
from pydantic import BaseModel, Field


class Usage(BaseModel):
    tokens: int = 0


class Metered(BaseModel):
    usage: Usage = Field(default_factory=Usage)


class NestedCopy(Flow[Metered]):
    """Two listeners copy a nested model, sleep and store the copy plus one: a lost
    update the search sees only if ``model_copy()`` is a read of ``state.usage``."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def a(self) -> None:
        usage = self.state.usage.model_copy()
        time.sleep(0.01)
        self.state.usage = Usage(tokens=usage.tokens + 1)

    @listen(begin)
    def b(self) -> None:
        usage = self.state.usage.model_copy()
        time.sleep(0.01)
        self.state.usage = Usage(tokens=usage.tokens + 1)


class Counted(BaseModel):
    tokens: int = 0

    def bump(self) -> None:
        seen = self.tokens
        time.sleep(0.01)
        self.tokens = seen + 1


class CountedState(BaseModel):
    usage: Counted = Field(default_factory=Counted)


class NestedMethod(Flow[CountedState]):
    """Two listeners call a nested model's own method that reads, sleeps and writes: a
    lost update inside one call, which the search sees only if the call is a write
    again when it returns (recorded once, as it begins, only ``tokens == 1`` was found
    while seeds reach 2 as well)."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def a(self) -> None:
        self.state.usage.bump()

    @listen(begin)
    def b(self) -> None:
        self.state.usage.bump()


class Names(BaseModel):
    order: list[str] = Field(default_factory=list)
    seen: int = -1


class AliasAppend(Flow[Names]):
    """``a`` takes the list, sleeps, then appends through its alias; ``b`` counts the list
    after a shorter sleep: whether ``b`` sees ``a``'s append depends on the append's own
    moment, not the moment ``a`` read the list."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def a(self) -> None:
        order = self.state.order
        time.sleep(0.5)
        order.append("a")

    @listen(begin)
    def b(self) -> None:
        time.sleep(0.5)
        self.state.order.append("b")


LOG: list[str] = []


class GlobalLog(Flow):
    """Two listeners append to a module global: their order is a race the search cannot
    see (the global is not state), so a search must say so."""

    @start()
    def begin(self) -> None:
        LOG.clear()

    @listen(begin)
    def a(self) -> None:
        LOG.append("a")

    @listen(begin)
    def b(self) -> None:
        LOG.append("b")

    @listen(a)
    def done(self) -> str:
        return ",".join(LOG)


class Count(BaseModel):
    n: int = 0


class RouterLoop(Flow[Count]):
    """``work`` and the router that sends it round again never run at the same time."""

    @start()
    def begin(self) -> None:
        return None

    @listen("again")
    def again_work(self) -> None:
        self.state.n += 1

    @listen(begin)
    def work(self) -> None:
        self.state.n += 1

    @router(work)
    def route(self) -> str:
        return "again" if self.state.n < 2 else "stop"

    @router(again_work)
    def route_again(self) -> str:
        return "again" if self.state.n < 3 else "stop"


class AttributeLog(Flow):
    """Two listeners append to a list kept on the flow object, not in its state."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.calls: list[str] = []

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def a(self) -> None:
        self.calls.append("a")

    @listen(begin)
    def b(self) -> None:
        self.calls.append("b")


class XYLog(BaseModel):
    x: int = 0
    y: int = 0
    log: list[str] = Field(default_factory=list)


class LoopAppends(Flow[XYLog]):
    """The long random check's (issue 42): two async listeners append to one list on the
    event loop, which runs their tasks without giving up its turn. Watching the list
    there placed ``m2``'s append after ``m3``'s and lost ``["s0", "m2", "m3"]`` (seed 3
    under the random-flow check's test id): on the loop a list read counts as a write."""

    @start()
    async def s0(self) -> str:
        await asyncio.sleep(0.04)
        self.state.log.append("s0")
        self.state.x = 1
        return "s0"

    @start()
    async def s1(self) -> str:
        await asyncio.sleep(0.04)
        _ = self.state.y
        return "s1"

    @listen(or_(s1, s0))
    async def m0(self) -> str:
        self.state.x = self.state.x + 1
        if self.state.y == 0:
            self.state.y = 5
        return "m0"

    @listen(s1)
    async def m1(self) -> str:
        return "m1"

    @listen(and_(s0, m1))
    async def m2(self) -> str:
        self.state.log.append("m2")
        return "m2"

    @listen(s0)
    async def m3(self) -> str:
        if self.state.y == 0:
            self.state.y = 8
        self.state.log.append("m3")
        self.state.y = 6
        return "m3"


class OrCycle(Flow[Count]):
    """``work`` listens to ``or_(begin, "again")``: fired once by ``begin``, crewAI re-arms
    it when the router emits ``again`` (``_rearm_or_listeners_for_trigger``)."""

    @start()
    def begin(self) -> None:
        return None

    @listen(or_(begin, "again"))
    def work(self) -> None:
        self.state.n += 1

    @router(work)
    def route(self) -> str:
        return "again" if self.state.n < 2 else "stop"
