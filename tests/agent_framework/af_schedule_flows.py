"""Agent Framework workflows for the schedule-session tests (test_af_schedule_sessions.py):
a pool thread that sleeps, a timer, a fan-in whose delivery order is a choice."""

from __future__ import annotations

import asyncio
import time
from typing import Never

from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler


class Start(Executor):
    @handler
    async def start(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


class Loader(Executor):
    """Loads on a pool thread (a blocking call, as a client library makes one)."""

    def __init__(self, box: dict[str, str]) -> None:
        super().__init__(id="loader")
        self.box = box

    @handler
    async def load(self, text: str, ctx: WorkflowContext[str]) -> None:
        await asyncio.to_thread(time.sleep, 0.05)
        self.box["data"] = "loaded"
        await ctx.send_message("loader done")


class Reader(Executor):
    """Waits "long enough" on a timer, then reads what the loader stored."""

    def __init__(self, box: dict[str, str]) -> None:
        super().__init__(id="reader")
        self.box = box

    @handler
    async def read(self, text: str, ctx: WorkflowContext[str]) -> None:
        await asyncio.sleep(0.1)
        await ctx.send_message(f"reader saw {self.box.get('data', 'nothing')}")


class Collect(Executor):
    @handler
    async def collect(self, reports: list[str], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(" | ".join(sorted(reports)))


def build_sleepy() -> Workflow:
    box: dict[str, str] = {}
    start, collect = Start(id="start"), Collect(id="collect")
    workers = [Loader(box), Reader(box)]
    return (
        WorkflowBuilder(start_executor=start, name="sleepy")
        .add_fan_out_edges(start, workers)
        .add_fan_in_edges(workers, collect)
        .build()
    )


def build_racy() -> Workflow:
    from af_workflows import build_race

    return build_race(racy=True)
