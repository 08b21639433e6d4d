"""Seeded ids, the virtual wall clock and the normalizer."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from pytest_flows._internal.identity import (
    DEFAULT_EPOCH,
    Normalizer,
    frozen_wall_clock,
    seeded_uuids,
)
from pytest_flows._internal.runtime.loop import VirtualClock, run


class Captured(BaseModel):
    # default_factory captured at class creation, as crewai's Crew/Agent/Task ids are
    id: uuid.UUID = Field(default_factory=uuid.uuid4)


def test_seeded_uuids_repeat_for_the_same_seed_and_differ_across_seeds() -> None:
    def draw(seed: str) -> list[str]:
        with seeded_uuids(seed):
            return [str(uuid.uuid4()), str(Captured().id)]

    assert draw("t::a:0") == draw("t::a:0")
    assert draw("t::a:0") != draw("t::a:1")
    assert all(uuid.UUID(u).version == 4 for u in draw("x"))


def test_seeded_uuids_are_undone_at_exit() -> None:
    with seeded_uuids("s"):
        inside = uuid.uuid4()
    with seeded_uuids("s"):
        assert uuid.uuid4() == inside
    assert uuid.uuid4() != uuid.uuid4()


def test_wall_clock_reads_epoch_plus_virtual_time() -> None:
    clock = VirtualClock()
    with frozen_wall_clock(clock):
        assert dt.datetime.now(dt.UTC) == DEFAULT_EPOCH
        clock.advance(90)
        assert dt.datetime.now(dt.UTC) == DEFAULT_EPOCH + dt.timedelta(seconds=90)
        assert time.time() == DEFAULT_EPOCH.timestamp() + 90
    assert dt.datetime.now(dt.UTC).year >= 2026


def test_normalizer_numbers_ids_in_first_seen_order_and_hides_timestamps() -> None:
    a, b = "0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    norm = Normalizer()
    assert norm.text(f"{b} then {a} then {b.upper()}") == "<uuid:1> then <uuid:2> then <uuid:1>"
    assert norm.text(a.replace("-", "")) == "<uuid:2>"
    assert norm.text("at 2025-01-01T00:00:30.5+00:00 ok") == "at <ts> ok"


# A flow that sleeps 0.5 virtual seconds per example: hypothesis's default deadline
# (200 ms) must count real time, as it does without the harness (before the fix every
# example "took 500.00ms"), while the test body still reads the virtual clock.
@settings(
    max_examples=3, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(min_value=0, max_value=9))
def test_hypothesis_deadlines_count_real_time_and_the_body_reads_virtual_time(
    flows: Any, n: int
) -> None:
    async def slow() -> int:
        await asyncio.to_thread(time.sleep, 0.5)
        return n

    before = time.perf_counter()
    assert run(slow(), flows.scheduler) == n
    assert time.perf_counter() - before == 0.5
