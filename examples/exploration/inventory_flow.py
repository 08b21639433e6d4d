"""Two parallel reservations against one stock count: a check-then-act race, and its fix."""

from __future__ import annotations

import threading
import time

from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel


class Stock(BaseModel):
    left: int = 1
    sold_to: list[str] = []


class Reservations(Flow[Stock]):
    """Each buyer checks the stock, pauses (a slow payment call), then takes one."""

    @start()
    def open_shop(self) -> None:
        return None

    def _buy(self, who: str) -> None:
        if self.state.left > 0:
            time.sleep(0.5)  # virtual time: the payment provider
            self.state.left = self.state.left - 1
            self.state.sold_to.append(who)

    @listen(open_shop)
    def alice(self) -> None:
        self._buy("alice")

    @listen(open_shop)
    def bob(self) -> None:
        self._buy("bob")


class LockedReservations(Flow[Stock]):
    """The fix: the check and the update hold one lock."""

    @start()
    def open_shop(self) -> None:
        self.guard = threading.Lock()

    def _buy(self, who: str) -> None:
        with self.guard:
            if self.state.left > 0:
                time.sleep(0.5)
                self.state.left = self.state.left - 1
                self.state.sold_to.append(who)

    @listen(open_shop)
    def alice(self) -> None:
        self._buy("alice")

    @listen(open_shop)
    def bob(self) -> None:
        self._buy("bob")
