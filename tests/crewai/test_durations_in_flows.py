"""Nonsense durations fail where the test scripts them; the clock and the next run stay sound."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from crewai import LLM
from crewai.flow.flow import Flow, start

from pytest_flows._internal.errors import FlowsUsageError


class AsyncAsk(Flow):  # type: ignore[type-arg]
    @start()
    async def ask(self) -> Any:
        return await LLM("gpt-4o").acall("hi?")


@pytest.mark.parametrize("latency", [math.inf, math.nan, -1.0], ids=repr)
def test_a_nonsense_latency_fails_when_scripted_and_the_next_run_is_sound(
    flows: Any, fake_llm: Any, latency: float
) -> None:
    with pytest.raises(FlowsUsageError, match=r"reply\(latency=\.\.\.\)"):
        fake_llm.reply("never", latency=latency)
    with pytest.raises(FlowsUsageError, match=r"reply\(latency=\.\.\.\)"):
        fake_llm.on(model="gpt-4o").reply("never", latency=latency)

    assert flows.clock.monotonic() == 0.0
    dt.datetime.now()  # the frozen wall clock still works
    fake_llm.reply("hello", latency=2)
    run = flows.run(AsyncAsk)
    assert run.output == "hello"
    assert flows.clock.monotonic() == 2.0


@pytest.mark.parametrize("after", [math.inf, math.nan, -5], ids=repr)
def test_a_nonsense_human_wait_fails_when_scripted(human: Any, after: float) -> None:
    with pytest.raises(FlowsUsageError, match=r"answer\(after=\.\.\.\)"):
        human.answer("yes", after=after)
