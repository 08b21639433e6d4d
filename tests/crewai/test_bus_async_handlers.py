"""crewai's async event handlers behave in a flows test as on the bare runtime.

They run on the bus's own loop, in real time; the test's loop runs on virtual time.
Before virtual time jumps, the handlers in flight finish (foreign_work.py), as they
would during the real wait. These are crewAI's own tests (tests/utilities/events/
test_async_event_bus.py, test_shutdown.py), run as flows tests.
"""

from __future__ import annotations

import asyncio

import pytest
from crewai.events.base_events import BaseEvent
from crewai.events.event_bus import CrewAIEventsBus, crewai_event_bus

from pytest_flows import FlowsSession


class AsyncTestEvent(BaseEvent):
    pass


@pytest.mark.asyncio
async def test_an_async_handler_finishes_during_the_wait_after_emit(flows: FlowsSession) -> None:
    received: list[BaseEvent] = []
    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(AsyncTestEvent)
        async def handler(source: object, event: BaseEvent) -> None:
            await asyncio.sleep(0.01)
            received.append(event)

        event = AsyncTestEvent(type="async_test")
        crewai_event_bus.emit("test_source", event)
        await asyncio.sleep(0.1)
        assert received == [event]
    # The test's wait stays virtual: 0.1 s, never less, and at most the sub-microsecond
    # step whole-nanosecond clocks may add (docs/determinism.md), not real time.
    assert 0.1 <= flows.clock.monotonic() < 0.1 + 1e-6


@pytest.mark.asyncio
async def test_mixed_sync_and_async_handlers(flows: FlowsSession) -> None:
    sync_done, async_done = asyncio.Event(), asyncio.Event()
    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(AsyncTestEvent)
        def sync_handler(source: object, event: BaseEvent) -> None:
            sync_done.set()

        @crewai_event_bus.on(AsyncTestEvent)
        async def async_handler(source: object, event: BaseEvent) -> None:
            await asyncio.sleep(0.01)
            async_done.set()

        crewai_event_bus.emit("test_source", AsyncTestEvent(type="mixed_test"))
        await asyncio.wait_for(sync_done.wait(), timeout=5)
        await asyncio.wait_for(async_done.wait(), timeout=5)


@pytest.mark.asyncio
async def test_async_handlers_complete_before_shutdown_flag(flows: FlowsSession) -> None:
    bus = CrewAIEventsBus()
    completed: list[BaseEvent] = []
    with bus.scoped_handlers():

        @bus.on(AsyncTestEvent)
        async def handler(source: object, event: BaseEvent) -> None:
            await asyncio.sleep(0.05)
            if not bus._shutting_down:
                completed.append(event)

        for i in range(5):
            bus.emit("source", AsyncTestEvent(type=f"event_{i}"))
        await asyncio.sleep(0.3)
        assert len(completed) == 5
