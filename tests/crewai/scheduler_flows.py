"""Flows whose sync methods share threads, locks, sleeps and state: the fidelity corpus."""

from __future__ import annotations

import asyncio
import threading
import time

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel

from pytest_flows import FlowsSession


class Counter(BaseModel):
    n: int = 0


class LostUpdate(Flow[Counter]):
    """Three parallel listeners doing an unguarded read-modify-write with a pause between."""

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


def lost_update(seed: int) -> int:
    """The count a fresh session's run of :class:`LostUpdate` ends with under ``seed``."""
    with FlowsSession(seed=seed, test_id="tests::lost-update") as session:
        return session.run(LostUpdate).state.n  # type: ignore[no-any-return]


class GuardedUpdate(LostUpdate):
    """The correct twin: the read-modify-write holds a lock."""

    @start()
    def begin(self) -> None:
        self.guard = threading.Lock()

    def _bump(self) -> None:
        with self.guard:
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


class Rendezvous(Flow):
    """Two parallel sync listeners that meet at a barrier: correct, must not hang."""

    @start()
    def begin(self) -> None:
        self.barrier = threading.Barrier(2)

    @listen(begin)
    def left(self) -> str:
        return f"left passed as {self.barrier.wait()}"

    @listen(begin)
    def right(self) -> str:
        return f"right passed as {self.barrier.wait()}"

    @listen(and_(left, right))
    def done(self) -> str:
        return "both passed"


class Handshake(Flow):
    """An async method polls with sleep(0) until a sync method sets an event."""

    @start()
    def begin(self) -> None:
        self.ready = threading.Event()

    @listen(begin)
    def signal(self) -> str:
        self.ready.set()
        return "set"

    @listen(begin)
    async def poll(self) -> str:
        spins = 0
        while not self.ready.is_set():
            spins += 1
            await asyncio.sleep(0)
        return "seen"


class CallsBack(Flow):
    """A sync method waits on a coroutine it sends to the flow's own loop."""

    @start()
    async def begin(self) -> None:
        self.loop = asyncio.get_running_loop()

    @listen(begin)
    def blocking(self) -> int:
        async def answer() -> int:
            await asyncio.sleep(2)
            return 42

        return asyncio.run_coroutine_threadsafe(answer(), self.loop).result()


class SlowFour(Flow):
    """Four parallel sync methods that each sleep 30 s: ~30 s together, not 120 s."""

    @start()
    def begin(self) -> None:
        return None

    def _slow(self, name: str) -> float:
        started = time.perf_counter()
        time.sleep(30)
        return time.perf_counter() - started

    @listen(begin)
    def one(self) -> float:
        return self._slow("one")

    @listen(begin)
    def two(self) -> float:
        return self._slow("two")

    @listen(begin)
    def three(self) -> float:
        return self._slow("three")

    @listen(begin)
    def four(self) -> float:
        return self._slow("four")

    @listen(and_(one, two, three, four))
    async def deadline(self) -> str:
        return "in time"


class TwoStarts(Flow):
    """Two sync starts: a pool runs the first body before the second is announced."""

    @start()
    def first(self) -> None:
        self.state["first"] = "wrote"

    @start()
    def second(self) -> None:
        self.state["second"] = "wrote"


class Crossed(Flow):
    """Two listeners take two locks in opposite orders: a real deadlock."""

    @start()
    def begin(self) -> None:
        self.red = threading.Lock()
        self.blue = threading.Lock()

    @listen(begin)
    def red_then_blue(self) -> None:
        with self.red:
            time.sleep(0.1)
            with self.blue:
                pass

    @listen(begin)
    def blue_then_red(self) -> None:
        with self.blue:
            time.sleep(0.1)
            with self.red:
                pass
