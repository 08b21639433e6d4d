"""An Agent Framework executor that waits for real work the harness does not schedule
(issue 45): a client library's I/O thread and a pool, both started at import."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Never

from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler

#: Built and warmed at import, before any test: a thread the harness does not manage.
POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="af-import-pool")
POOL.submit(int).result()


def _slow_seven() -> int:
    time.sleep(0.02)
    return 7


class _Client:
    """A client library's I/O thread: answers each request after 50 ms, resolving the
    caller's loop future with ``call_soon_threadsafe``."""

    def __init__(self) -> None:
        self.requests: queue.Queue[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]]
        self.requests = queue.Queue()
        threading.Thread(target=self._serve, name="af-client-io", daemon=True).start()

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


class AskOutside(Executor):
    @handler
    async def ask(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        pong = await asyncio.wait_for(CLIENT.ask(), timeout=2)
        seven = await asyncio.wait_for(asyncio.wrap_future(POOL.submit(_slow_seven)), timeout=10)
        await ctx.yield_output(f"{text}:{pong}:{seven}")


def build() -> Workflow:
    return WorkflowBuilder(start_executor=AskOutside(id="ask")).build()
