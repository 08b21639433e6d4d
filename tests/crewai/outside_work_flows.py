"""Flows whose methods wait for real work the harness does not schedule (issue 45).

Each one finishes on bare crewai 1.15.30 (see tests/crewai/test_outside_work.py, which
runs every one bare in the same file): a pool built and warmed at import, a client
library's I/O thread started at import, a child process beside a long sleep, a busy
poll on a helper thread, and ``multiprocessing.pool.ThreadPool`` as a context manager.
The real work is short (20-300 ms): that is the shape under test.
"""

from __future__ import annotations

import asyncio
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.pool import ThreadPool
from typing import Any, ClassVar

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel

#: Built and warmed when the module is imported, before any test: its worker is a
#: thread the harness does not manage.
POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-pool")
POOL.submit(int).result()


def _slow_seven() -> int:
    time.sleep(0.02)  # real work on a thread the harness does not manage
    return 7


class _Client:
    """A client library's I/O thread, started at import: it answers each request after
    50 ms by resolving the caller's loop future with ``call_soon_threadsafe``."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]]
        self.requests = queue.Queue()
        self.thread = threading.Thread(target=self._serve, name="client-io", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            loop, future = self.requests.get()
            time.sleep(0.05)
            loop.call_soon_threadsafe(future.set_result, "pong")

    def ask(self) -> asyncio.Future[str]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        self.requests.put((loop, future))
        return future


CLIENT = _Client()


class Empty(BaseModel):
    pass


class ImportPool(Flow[Empty]):
    """``future.result(timeout=10)`` on a 20 ms job of a pool warmed at import."""

    @start()
    def ask(self) -> int:
        return POOL.submit(_slow_seven).result(timeout=10)


class IOThreadFuture(Flow[Empty]):
    """``asyncio.wait_for(fut, timeout=2)`` on a future an I/O thread resolves after 50 ms."""

    @start()
    async def ask(self) -> str:
        return await asyncio.wait_for(CLIENT.ask(), timeout=2)


CHILD = [sys.executable, "-c", "import time; time.sleep(0.3)"]


class ChildBesideSleep(Flow[Empty]):
    """``subprocess.run(..., timeout=1)`` on a 0.3 s child, beside a listener sleeping 2 s
    (the sleep would move the clock past the timeout while the child still runs)."""

    @start()
    def begin(self) -> None:
        pass

    @listen(begin)
    def child(self) -> int:
        return subprocess.run(CHILD, timeout=1, check=True).returncode

    @listen(begin)
    def sleeper(self) -> str:
        time.sleep(2)
        return "slept"

    @listen(and_(child, sleeper))
    def done(self) -> str:
        return "child ran"


class BusyPoll(Flow[Empty]):
    """Polls ``queue.get_nowait()`` in a ``time.monotonic()`` deadline loop, no sleep,
    for a helper thread it started."""

    @start()
    def poll(self) -> str:
        answers: queue.Queue[str] = queue.Queue()

        def help_out() -> None:
            time.sleep(0.05)
            answers.put("helped")

        helper = threading.Thread(target=help_out)
        helper.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                answer = answers.get_nowait()
            except queue.Empty:
                continue
            helper.join()
            return answer
        return "timed out"


class SpinForEver(Flow[Empty]):
    """A busy loop nobody can end: bare, it spins for ever."""

    @start()
    def spin(self) -> None:
        flag: list[bool] = []
        while not flag:
            time.monotonic()


class PoolContext(Flow[Empty]):
    """``multiprocessing.pool.ThreadPool`` as a context manager (its exit terminates the
    pool, joining a handler thread that waits in a pipe poll)."""

    @start()
    def square(self) -> list[int]:
        with ThreadPool(2) as pool:
            return pool.map(lambda n: n * n, [1, 2, 3])


class PipeDeadlock(Flow[Empty]):
    """A real deadlock over a pipe: a thread waits for a message nobody will send, and
    the method joins it. Bare crewai hangs here for ever."""

    #: Each run's write end: the test sends on it after the report, so that the waiter
    #: ends instead of staying, blocked outside, into the tests after it.
    writers: ClassVar[list[Any]] = []

    @start()
    def wait(self) -> None:
        from multiprocessing import Pipe

        reader, writer = Pipe(duplex=False)
        PipeDeadlock.writers.append(writer)
        waiter = threading.Thread(target=reader.poll, args=(None,), name="pipe-waiter")
        waiter.start()
        waiter.join()

    @classmethod
    def release(cls) -> None:
        """Let every waiter end (after the deadlock was reported)."""
        while cls.writers:
            cls.writers.pop().send(None)


def _slower_seven() -> int:
    time.sleep(0.3)
    return 7


class SlowImportPool(Flow[Empty]):
    """A job of the import-time pool that takes longer than the (test's small) grace."""

    @start()
    def ask(self) -> str:
        try:
            return str(POOL.submit(_slower_seven).result(timeout=10))
        except TimeoutError:
            return "timed out"
