"""Flows with planted concurrency bugs, each with a correct twin: the exploration corpus."""

from __future__ import annotations

import asyncio
import threading
import time

from crewai.flow.flow import Flow, listen, or_, start
from pydantic import BaseModel, Field


class Slots(BaseModel):
    items: list[str] = Field(default_factory=list)


class CheckThenWrite(Flow[Slots]):
    """Two listeners each add themselves if the list has room for one more: both may."""

    @start()
    def begin(self) -> None:
        return None

    def _claim(self, who: str) -> None:
        if len(self.state.items) < 1:
            time.sleep(0.01)
            self.state.items.append(who)

    @listen(begin)
    def left(self) -> None:
        self._claim("left")

    @listen(begin)
    def right(self) -> None:
        self._claim("right")


class CheckThenWriteSafe(Flow[Slots]):
    """The twin: the check and the write hold one lock."""

    @start()
    def begin(self) -> None:
        self.guard = threading.Lock()

    def _claim(self, who: str) -> None:
        with self.guard:
            if len(self.state.items) < 1:
                time.sleep(0.01)
                self.state.items.append(who)

    @listen(begin)
    def left(self) -> None:
        self._claim("left")

    @listen(begin)
    def right(self) -> None:
        self._claim("right")


class Verdict(BaseModel):
    seen: str = ""
    note: str = ""


class LateLoser(Flow[Verdict]):
    """An or_ race whose losing racer writes state after the winner's listener read it."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def fast(self) -> None:
        time.sleep(0.01)

    @listen(begin)
    def slow(self) -> None:
        time.sleep(0.01)
        self.state.note = "slow was here"

    @listen(or_(fast, slow))
    def crown(self) -> None:
        self.state.seen = self.state.note or "nothing"


class QuietLoser(Flow[Verdict]):
    """The twin: the losing racer writes nothing the winner's listener reads."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def fast(self) -> None:
        time.sleep(0.01)

    @listen(begin)
    def slow(self) -> None:
        time.sleep(0.01)

    @listen(or_(fast, slow))
    def crown(self) -> None:
        self.state.seen = "crowned"


class Three(Flow):
    """Three equal async racers: each can win."""

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
    def crown(self) -> str:
        return "crowned"


class Own(BaseModel):
    a: int = 0
    b: int = 0
    c: int = 0


class OwnFields(Flow[Own]):
    """Three parallel listeners, each writing only its own field: nothing to interleave."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def one(self) -> None:
        self.state.a = self.state.a + 1

    @listen(begin)
    def two(self) -> None:
        self.state.b = self.state.b + 1

    @listen(begin)
    def three(self) -> None:
        self.state.c = self.state.c + 1


class ThreeAsync(Flow):
    """Three equal async racers in an all-async flow: each can win (crewAI still hands
    each method's completion record to a pool thread, so the racers' ends interleave
    with that work)."""

    @start()
    async def begin(self) -> None:
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
    async def crown(self) -> str:
        return "crowned"


class OwnTaskFactory(Flow):
    """An or_ race on a loop where the flow installed its own asyncio task factory."""

    @start()
    async def begin(self) -> None:
        def factory(loop: asyncio.AbstractEventLoop, coro: object, **kwargs: object) -> object:
            return asyncio.Task(coro, loop=loop, **kwargs)  # type: ignore[arg-type]

        asyncio.get_running_loop().set_task_factory(factory)  # type: ignore[arg-type]

    @listen(begin)
    async def left(self) -> str:
        return "left"

    @listen(begin)
    async def right(self) -> str:
        return "right"

    @listen(or_(left, right))
    async def crown(self) -> str:
        return "crowned"
