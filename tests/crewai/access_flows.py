"""Accesses the search once did not record (issue 42), each a small flow: a nested
model's method call, a mutation through an alias of a state list after a sleep, a module
global, and a router that loops back to a listener."""

from __future__ import annotations

import time

from crewai.flow.flow import Flow, listen, router, start
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
