"""Flows that block outside the scheduler, as users write them (issue 25).

Each one finishes on bare crewai 1.15.30 (30 of 30 kickoffs): a lock made by a factory
captured at import, a module-level lock, a loopback HTTP server a method starts.
"""

from __future__ import annotations

import http.server
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from threading import Lock
from typing import ClassVar

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel, PrivateAttr

#: Built at import, before any test: the harness cannot manage it.
MODULE_LOCK = threading.Lock()
# The deadlock's own: its aborted threads may hold it a while as they unwind, and a
# later test's flow on MODULE_LOCK would wait for them (seen under load, in random order).
DEADLOCK_LOCK = threading.Lock()


class GuardedState(BaseModel):
    n: int = 0
    # The way crewai declares its own locks: the factory is bound at import.
    _guard: threading.Lock = PrivateAttr(default_factory=threading.Lock)


class PrivateAttrLock(Flow[GuardedState]):
    """Two parallel listeners, each holding the state's lock across a sleep."""

    @start()
    def begin(self) -> None:
        pass

    def _bump(self) -> None:
        with self.state._guard:
            seen = self.state.n
            time.sleep(0.01)
            self.state.n = seen + 1

    @listen(begin)
    def left(self) -> None:
        self._bump()

    @listen(begin)
    def right(self) -> None:
        self._bump()

    @listen(and_(left, right))
    def done(self) -> int:
        return self.state.n


class CountState(BaseModel):
    n: int = 0


class ModuleLock(Flow[CountState]):
    """The same, guarded by a lock made at import."""

    @start()
    def begin(self) -> None:
        pass

    def _bump(self) -> None:
        with MODULE_LOCK:
            seen = self.state.n
            time.sleep(0.01)
            self.state.n = seen + 1

    @listen(begin)
    def left(self) -> None:
        self._bump()

    @listen(begin)
    def right(self) -> None:
        self._bump()

    @listen(and_(left, right))
    def done(self) -> int:
        return self.state.n


class GateState(BaseModel):
    _gate: threading.Event = PrivateAttr(default_factory=threading.Event)


class ModuleLockDeadlock(Flow[GateState]):
    """A real deadlock: ``left`` holds the module lock and waits for ``right``, which
    needs that lock first. Bare crewai hangs here for ever."""

    @start()
    def begin(self) -> None:
        pass

    @listen(begin)
    def left(self) -> None:
        with DEADLOCK_LOCK:
            self.state._gate.wait()

    @listen(begin)
    def right(self) -> None:
        with DEADLOCK_LOCK:
            self.state._gate.set()


@dataclass
class Tally:
    n: int = 0
    lock: Lock = field(default_factory=Lock)  # ``from threading import Lock`` at import


class DataclassLock(Flow[CountState]):
    """The same, guarded by a dataclass field's lock (the factory captured at import)."""

    tally: ClassVar[Tally]

    @start()
    def begin(self) -> None:
        type(self).tally = Tally()

    def _bump(self) -> None:
        tally = type(self).tally
        with tally.lock:
            seen = tally.n
            time.sleep(0.01)
            tally.n = seen + 1

    @listen(begin)
    def left(self) -> None:
        self._bump()

    @listen(begin)
    def right(self) -> None:
        self._bump()

    @listen(and_(left, right))
    def done(self) -> int:
        return type(self).tally.n


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from loopback"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class LoopbackServer(Flow[CountState]):
    """A method serves HTTP on 127.0.0.1 from a thread and fetches from it."""

    @start()
    def fetch(self) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            with urllib.request.urlopen(url, timeout=10) as reply:
                return reply.read().decode()
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


class MeasuredSleep(Flow[CountState]):
    """A method measures its own ``time.sleep(0.05)`` with every clock it can read."""

    @start()
    def measure(self) -> dict[str, object]:
        import datetime

        clocks = {
            "monotonic": time.monotonic,
            "perf_counter": time.perf_counter,
            "time": time.time,
            "monotonic_ns": time.monotonic_ns,
            "perf_counter_ns": time.perf_counter_ns,
            "time_ns": time.time_ns,
            "now": datetime.datetime.now,
            "utcnow": datetime.datetime.utcnow,
        }
        before = {name: read() for name, read in clocks.items()}
        time.sleep(0.05)
        after = {name: read() for name, read in clocks.items()}
        return {name: after[name] - before[name] for name in clocks}  # type: ignore[operator]
