"""A flow whose methods wait on real work pytest-flows does not schedule.

``PricingClient`` stands for a provider SDK: it starts its own I/O thread when the
module is imported (before any test) and resolves the caller's asyncio future from
that thread. ``check_stock`` polls a helper thread without ever sleeping. Both finish
on the bare runtime; under the harness the clock waits for the I/O thread instead of
firing the 2-second timeout, and the busy poll is preempted so the helper runs.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel


class PricingClient:
    """An SDK's background I/O thread: each answer arrives 20 ms after the request."""

    def __init__(self) -> None:
        self._requests: queue.Queue[tuple[asyncio.AbstractEventLoop, asyncio.Future[float]]]
        self._requests = queue.Queue()
        threading.Thread(target=self._serve, name="pricing-io", daemon=True).start()

    def _serve(self) -> None:
        while True:
            loop, future = self._requests.get()
            time.sleep(0.02)  # the network round trip, on the SDK's own thread
            loop.call_soon_threadsafe(future.set_result, 41.5)

    def price(self) -> asyncio.Future[float]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[float] = loop.create_future()
        self._requests.put((loop, future))
        return future


PRICING = PricingClient()  # started at import, as SDK clients usually are


class Quote(BaseModel):
    price: float = 0.0
    in_stock: bool = False


class QuoteFlow(Flow[Quote]):
    @start()
    def receive(self) -> str:
        return "sku-1"

    @listen(receive)
    async def fetch_price(self) -> float:
        # Under a virtual clock that jumped while the SDK's thread worked, this
        # timeout would fire at once; the bare runtime never times out here.
        self.state.price = await asyncio.wait_for(PRICING.price(), timeout=2)
        return self.state.price

    @listen(receive)
    def check_stock(self) -> bool:
        answers: queue.Queue[bool] = queue.Queue()
        threading.Thread(target=lambda: answers.put(True), name="stock-lookup").start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # a busy poll: no sleep, no blocking call
            try:
                self.state.in_stock = answers.get_nowait()
                return self.state.in_stock
            except queue.Empty:
                continue
        return False

    @listen(and_(fetch_price, check_stock))
    def offer(self) -> str:
        return f"{self.state.price} ({'in stock' if self.state.in_stock else 'backorder'})"


class Spinner(Flow[Quote]):
    """A bug: waits for an answer nobody will ever send."""

    @start()
    def wait_for_ever(self) -> None:
        while not self.state.in_stock:
            time.monotonic()
