"""The shapes issue 42 measured the reduction on: independent work that should cost no
schedules, and a real race whose orders are counted."""

from __future__ import annotations

import asyncio
import time

from crewai.flow.flow import Flow, and_, listen, or_, start
from pydantic import BaseModel


class Own(BaseModel):
    a: int = 0
    b: int = 0
    c: int = 0


class OwnFieldsJoined(Flow[Own]):
    """Three sync listeners each read, sleep and write their own field; an ``and_`` join."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def one(self) -> None:
        a = self.state.a
        time.sleep(0.01)
        self.state.a = a + 1

    @listen(begin)
    def two(self) -> None:
        b = self.state.b
        time.sleep(0.01)
        self.state.b = b + 1

    @listen(begin)
    def three(self) -> None:
        c = self.state.c
        time.sleep(0.01)
        self.state.c = c + 1

    @listen(and_(one, two, three))
    def join(self) -> str:
        return f"{self.state.a}{self.state.b}{self.state.c}"


class Counter(BaseModel):
    n: int = 0


class LostUpdateJoined(Flow[Counter]):
    """Three sync listeners read, sleep and write one counter; an ``and_`` join reads it."""

    @start()
    def begin(self) -> None:
        return None

    def _bump(self) -> None:
        n = self.state.n
        time.sleep(0.01)
        self.state.n = n + 1

    @listen(begin)
    def a(self) -> None:
        self._bump()

    @listen(begin)
    def b(self) -> None:
        self._bump()

    @listen(begin)
    def c(self) -> None:
        self._bump()

    @listen(and_(a, b, c))
    def join(self) -> int:
        return self.state.n


class Winner(BaseModel):
    got: str = ""


class SleepingRacers(Flow[Winner]):
    """Three async listeners each ``await asyncio.sleep(1)`` and return their name; an
    ``or_`` listener records which output it got (issue 42's first shape)."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    async def a(self) -> str:
        await asyncio.sleep(1)
        return "a"

    @listen(begin)
    async def b(self) -> str:
        await asyncio.sleep(1)
        return "b"

    @listen(begin)
    async def c(self) -> str:
        await asyncio.sleep(1)
        return "c"

    @listen(or_(a, b, c))
    def first(self, got: str) -> str:
        self.state.got = got
        return got
