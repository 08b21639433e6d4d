"""Reserve stock for an order from three warehouses at once: parallel sync listeners.

``ReserveStock`` has the bug production shows every time: each warehouse check reads
the reserved count, calls a slow inventory service, then writes the count back, so
two of the three updates are lost. ``SafeReserveStock`` holds a lock around the
read-modify-write. ``Handover`` shows two steps that wait for each other correctly
(a barrier), and ``Stuck`` two steps that take two locks in opposite orders.
"""

from __future__ import annotations

import threading
import time

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel


class Order(BaseModel):
    reserved: int = 0
    log: list[str] = []


def ask_inventory_service(warehouse: str) -> None:
    time.sleep(0.05)  # a quick HTTP call in production; virtual time in the tests


class ReserveStock(Flow[Order]):
    @start()
    def receive(self) -> None:
        self.state.log.append("received")

    def _reserve(self, warehouse: str) -> None:
        seen = self.state.reserved
        ask_inventory_service(warehouse)
        self.state.reserved = seen + 1

    @listen(receive)
    def north(self) -> None:
        self._reserve("north")

    @listen(receive)
    def south(self) -> None:
        self._reserve("south")

    @listen(receive)
    def east(self) -> None:
        self._reserve("east")

    @listen(and_(north, south, east))
    def confirm(self) -> int:
        return self.state.reserved


class SafeReserveStock(Flow[Order]):
    @start()
    def receive(self) -> None:
        self.guard = threading.Lock()

    def _reserve(self, warehouse: str) -> None:
        with self.guard:
            seen = self.state.reserved
            ask_inventory_service(warehouse)
            self.state.reserved = seen + 1

    @listen(receive)
    def north(self) -> None:
        self._reserve("north")

    @listen(receive)
    def south(self) -> None:
        self._reserve("south")

    @listen(receive)
    def east(self) -> None:
        self._reserve("east")

    @listen(and_(north, south, east))
    def confirm(self) -> int:
        return self.state.reserved


class Handover(Flow):
    """Packing and labelling must both be ready before the parcel ships."""

    @start()
    def receive(self) -> None:
        self.both_ready = threading.Barrier(2)

    @listen(receive)
    def pack(self) -> str:
        time.sleep(30)  # slow, but virtual
        self.both_ready.wait()
        return "packed"

    @listen(receive)
    def label(self) -> str:
        time.sleep(30)
        self.both_ready.wait()
        return "labelled"

    @listen(and_(pack, label))
    def ship(self) -> str:
        return "shipped"


class Stuck(Flow):
    """A deadlock: each step holds one lock and waits for the other's."""

    @start()
    def receive(self) -> None:
        self.shelf = threading.Lock()
        self.ledger = threading.Lock()

    @listen(receive)
    def restock(self) -> None:
        with self.shelf:
            time.sleep(1)
            with self.ledger:
                pass

    @listen(receive)
    def audit(self) -> None:
        with self.ledger:
            time.sleep(1)
            with self.shelf:
                pass
