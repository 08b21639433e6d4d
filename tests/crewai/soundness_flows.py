"""The shapes issue 24 found missing from complete explorations, each a small flow."""

from __future__ import annotations

import asyncio
import threading
import time

from crewai.flow.flow import Flow, and_, listen, or_, router, start
from pydantic import BaseModel, Field


class Names(BaseModel):
    order: list[str] = Field(default_factory=list)


class AppendOrder(Flow[Names]):
    """Three sync listeners of one trigger each append their name: every order can happen."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def a(self) -> None:
        self.state.order.append("a")

    @listen(begin)
    def b(self) -> None:
        self.state.order.append("b")

    @listen(begin)
    def c(self) -> None:
        self.state.order.append("c")


class Loaded(BaseModel):
    data: str = ""
    seen: str = ""


class SleepOrdered(Flow[Loaded]):
    """The reader sleeps "long enough" for the loader: a loader held back past the
    reader's wake-up (as an OS may) leaves the reader with nothing."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def loader(self) -> None:
        time.sleep(0.05)
        self.state.data = "loaded"

    @listen(begin)
    def reader(self) -> None:
        time.sleep(0.1)
        self.state.seen = self.state.data or "nothing"


class Setup(BaseModel):
    owner: str = ""
    inits: int = 0


class TwoStarts(Flow[Setup]):
    """Two @start methods that check, then initialise: both may initialise."""

    def _init(self, who: str) -> None:
        if not self.state.owner:
            self.state.owner = who
            self.state.inits += 1

    @start()
    def first(self) -> None:
        self._init("first")

    @start()
    def second(self) -> None:
        self._init("second")


class Flag(BaseModel):
    flag: bool = False


class RouterReads(Flow[Flag]):
    """A router reads a field a parallel branch writes: either route, and the branch may
    end last (the flow's output is then the branch's None)."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def check(self) -> None:
        return None

    @router(check)
    def route(self) -> str:
        return "go" if self.state.flag else "fallback"

    @listen("go")
    def proceed(self) -> str:
        return "went"

    @listen("fallback")
    def fall_back(self) -> str:
        return "fell back"

    @listen(begin)
    def branch(self) -> None:
        self.state.flag = True


class SlowOutput(Flow):
    """An or_ race: the fast source wins, the slow one is cancelled, yet its method may
    have ended (its output recorded) before it was: the output can be the slow one's."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    async def fast(self) -> str:
        await asyncio.sleep(0.01)
        return "fast"

    @listen(begin)
    def slow(self) -> str:
        time.sleep(0.02)
        return "slow"

    @listen(or_(fast, slow))
    async def done(self) -> None:
        return None


class Own(BaseModel):
    a: int = 0
    b: int = 0
    c: int = 0


class OwnFieldsSleeping(Flow[Own]):
    """Three listeners each read, sleep and write their own field: nothing to interleave."""

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


class TimerAndThread(Flow):
    """An async listener's timer due before a sync listener's sleep ends: a seed may hold
    the loop back past the thread's end, and then the async one finishes last (its output
    is the flow's). The timer fires in the loop's own turn, whose order against the
    thread's end the search must reverse (a generated flow's miss)."""

    @start()
    async def begin(self) -> None:
        return None

    @listen(begin)
    async def timed(self) -> str:
        await asyncio.sleep(0.01)
        return "timed"

    @listen(begin)
    def threaded(self) -> str:
        time.sleep(0.02)
        return "threaded"


class XY(BaseModel):
    x: int = 0
    y: int = 0


class HeldBackStart(Flow[XY]):
    """A long random check's flow: seed 3 under the random-flow check's test id holds
    back the pool thread carrying ``s0``'s end while another runs five jobs in a row,
    so ``m2`` (fired by the ``and_`` once both starts ended) finishes after ``m3``:
    output ``m2``. The search missed it (24 schedules, only ``m3``) until the sources'
    ends were recorded as touching the ``and_`` they count towards (``fires:m2``)."""

    @start()
    async def s0(self) -> str:
        self.state.y = 1
        return "s0"

    @start()
    def s1(self) -> str:
        return "s1"

    @listen(s1)
    async def m0(self) -> str:
        self.state.x = 3
        return "m0"

    @listen(or_(m0, s1))
    async def m1(self) -> str:
        self.state.x = 4
        return "m1"

    @listen(and_(s1, s0))
    async def m2(self) -> str:
        self.state.x = self.state.y + 1
        return "m2"

    @listen(m1)
    async def m3(self) -> str:
        return str(self.state.x)


class XYLog(BaseModel):
    x: int = 0
    y: int = 0
    log: list[str] = Field(default_factory=list)


class ClockPastFirstJob(Flow[XYLog]):
    """Found by the long random check (shard 2): seed 1 lets the loop go on past the
    pool thread just handed ``s1``, then holds that thread back while the clock runs to
    ``s0``'s first timer (schedule ``s11``): ``s1`` and so ``m2`` start late, and ``m2``
    ends last (output ``m2``). A search that ordered only state accesses said complete
    after 18 schedules with 2 of the 9 outcomes (seeds 0..299 reach 6); ordering the
    clock's moves against the reads of it, it completes in 9,286 with all 9."""

    @start()
    async def s0(self) -> str:
        await asyncio.sleep(0.08)
        await asyncio.sleep(0.1)
        v = self.state.x
        self.state.y = v + 1
        return "s0"

    @start()
    def s1(self) -> str:
        _ = self.state.y  # two reads: two switch points, as generated
        _ = self.state.y
        time.sleep(0.02)
        self.state.x = 4
        return "s1"

    @listen(or_(s1, s0))
    def m0(self) -> str:
        if self.state.x == 0:
            self.state.x = 5
        return "m0"

    @router(s0)
    def m1(self) -> str:
        _ = self.state.x
        if self.state.x == 0:
            self.state.x = 6
        if self.state.y == 0:
            self.state.y = 6
        return "hi" if self.state.x > 0 else "lo"

    @listen(s1)
    async def m2(self) -> str:
        if self.state.x == 0:
            self.state.x = 7
        _ = self.state.y
        await asyncio.sleep(0.1)
        self.state.log.append("m2")
        return "m2"


class ClockPastFirstJobOr(Flow[XYLog]):
    """The same shape in the other flow the long random check found (shard 1): seed 2
    runs schedule ``s11`` too, and ``m1`` ends last (output ``m1``); the search said
    complete after 229 schedules with only ``s0`` and ``m3`` (now 548, all three)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.guard = threading.Lock()

    @start()
    async def s0(self) -> str:
        self.state.y = 1
        await asyncio.sleep(0.12)
        self.state.x = 3
        return "s0"

    @start()
    async def s1(self) -> str:
        self.state.x = 4
        if self.state.x == 0:
            self.state.x = 6
        await asyncio.sleep(0.05)
        return "s1"

    @listen(s1)
    def m0(self) -> str:
        with self.guard:
            return "m0"

    @listen(or_(s1, m0))
    async def m1(self) -> str:
        if self.state.y == 0:
            self.state.y = 6
        await asyncio.sleep(0.03)
        return "m1"

    @listen(m0)
    async def m2(self) -> str:
        self.state.log.append("m2")
        return "m2"

    @listen(and_(s1, m0))
    def m3(self) -> str:
        return "m3"


class GuardedAppends(Flow[XYLog]):
    """Found by the long random check (shard 3): seed 2 gives ``m2`` a pool thread of its
    own while the first is still busy, ``m2`` takes the lock first and ``m1`` ends last
    (log ``["m2", "m0"]``). A complete search (38 schedules) missed it: the sleep sets
    compared a lock by its ``id()``, new each run, so a thread put to sleep in one run
    was not woken when another took the same lock in the next."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.guard = threading.Lock()

    @start()
    async def s0(self) -> str:
        return "s0"

    @listen(s0)
    def m0(self) -> str:
        with self.guard:
            self.state.log.append("m0")
            _ = self.state.x
            return "m0"

    @listen(or_(s0, m0))
    async def m1(self) -> str:
        v = self.state.y
        await asyncio.sleep(0.1)
        self.state.x = v + 1
        return "m1"

    @listen(or_(m1, s0))
    def m2(self) -> str:
        with self.guard:
            self.state.log.append("m2")
            return "m2"


class Log(BaseModel):
    log: list[str] = Field(default_factory=list)


class ThreadStartHeldBack(Flow[Log]):
    """Seed 1 (and half of seeds 0..99) holds the pool thread back as it starts ``s1``
    while the clock runs to ``s0``'s first timer: ``s1`` then ends at 0.07, ``m``'s timer
    fires at 0.12, after ``s0``'s at 0.11 (log ``["s0", "m"]``). A search that ordered
    only state accesses said complete after 3 schedules with ``["m", "s0"]`` alone: a
    thread's sleep reads the clock, and the clock moving first is another order."""

    @start()
    async def s0(self) -> None:
        await asyncio.sleep(0.05)
        await asyncio.sleep(0.06)
        self.state.log.append("s0")

    @start()
    def s1(self) -> None:
        time.sleep(0.02)

    @listen(s1)
    async def m(self) -> None:
        await asyncio.sleep(0.05)
        self.state.log.append("m")


class StartPastListeners(Flow[XYLog]):
    """Found by the long random check (``held_start_append``, reduced): seed 2 holds the
    sync start ``s0`` back past ``s1``'s timer, so ``late`` appends first (log
    ``["late", "s0"]``). ``s1``'s end starts ``first`` and then ``late``, and asyncio
    runs them in that order: a search that took the two outputs' order for a race (one
    the loop cannot reverse) reversed only it, and said complete after 14 schedules
    without the race of the two appends behind it."""

    @start()
    def s0(self) -> str:
        self.state.log.append("s0")
        self.state.y = 1
        return "s0"

    @start()
    async def s1(self) -> str:
        await asyncio.sleep(0.05)
        return "s1"

    @listen(s1)
    async def first(self) -> str:
        return "first"

    @listen(s1)
    async def late(self) -> str:
        self.state.log.append("late")
        return "late"


class LoserListenerOutput(Flow[XYLog]):
    """Found by the long random check (``or_race_output``): seeds 3 and 15 end with
    output ``m2``. The racers are async; the ``or_`` listener ``m2`` (sync, on a pool
    thread, sleeping 0.07 s) is fired from the loser's task. If the winner's end is
    stored late (a pool job held back while the clock runs to ``m2``'s wake-up),
    ``m2``'s output is stored before the racing task cancels the loser, and ``m2``'s task
    with it. A search that did not order a racer's pool jobs against the racing task's
    look at it said complete after 264 schedules without output ``m2``."""

    @start()
    async def s0(self) -> str:
        return "s0"

    @listen(s0)
    async def m0(self) -> str:
        return "m0"

    @listen(s0)
    async def m1(self) -> str:
        return "m1"

    @listen(or_(m0, m1))
    def m2(self) -> str:
        self.state.y = 1
        time.sleep(0.07)
        return "m2"

    @listen(m2)
    async def m3(self) -> str:
        self.state.log.append("m3")
        return "m3"
