"""Agent Framework's own checkpoint sample, as a module a test can import.

Follows ``python/samples/03-workflows/checkpoints/checkpoints.py`` in
microsoft/agent-framework ("Checkpoints Workflow Sample": factor pairs up to a
limit, a worker that loops on itself and keeps its results in executor state
saved by ``on_checkpoint_save``). Two changes, both for testing:

* the sample builds its graph inside ``main()``; here ``build_workflow()`` is a
  factory (a fresh workflow per call, the same graph every time), which is what
  ``check_restore_equivalence`` and ``explore_seeds`` take;
* the executors are passed to ``WorkflowBuilder`` directly (agent-framework-core
  1.23 has no ``register_executor``), and the workflow is named, so its
  checkpoints belong to one workflow name in every process.

``main()`` keeps the sample's interrupt-and-resume loop, minus the random
interruptions.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agent_framework import (
    CheckpointStorage,
    Executor,
    InMemoryCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)

Pairs = dict[int, list[tuple[int, int]]]


@dataclass
class ComputeTask:
    """The numbers still to factor."""

    remaining_numbers: list[int]


class StartExecutor(Executor):
    @handler
    async def start(self, upper_limit: int, ctx: WorkflowContext[ComputeTask]) -> None:
        await ctx.send_message(ComputeTask(remaining_numbers=list(range(1, upper_limit + 1))))


class WorkerExecutor(Executor):
    """Factors one number per superstep; its results so far are executor state."""

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self._composite_number_pairs: Pairs = {}

    @handler
    async def compute(self, task: ComputeTask, ctx: WorkflowContext[ComputeTask, Pairs]) -> None:
        next_number = task.remaining_numbers.pop(0)
        pairs = [(i, next_number // i) for i in range(1, next_number) if next_number % i == 0]
        self._composite_number_pairs[next_number] = pairs
        if not task.remaining_numbers:
            await ctx.yield_output(self._composite_number_pairs)
        else:
            await ctx.send_message(task)

    async def on_checkpoint_save(self) -> dict[str, Any]:
        return {"composite_number_pairs": self._composite_number_pairs}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._composite_number_pairs = state.get("composite_number_pairs", {})


class FixedWorkerExecutor(WorkerExecutor):
    """The worker with the fix: JSON object keys are strings, so turn them back."""

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        saved = state.get("composite_number_pairs", {})
        self._composite_number_pairs = {int(number): pairs for number, pairs in saved.items()}


def build_workflow(
    storage: CheckpointStorage | None = None, *, worker: type[WorkerExecutor] = WorkerExecutor
) -> Workflow:
    """The sample's graph: start -> worker, and worker -> worker until done."""
    start = StartExecutor(id="start")
    work = worker(id="worker")
    return (
        WorkflowBuilder(
            name="factor_pairs",
            start_executor=start,
            checkpoint_storage=storage or InMemoryCheckpointStorage(),
        )
        .add_edge(start, work)
        .add_edge(work, work)
        .build()
    )


def build_fixed_workflow(storage: CheckpointStorage | None = None) -> Workflow:
    return build_workflow(storage, worker=FixedWorkerExecutor)


async def main(limit: int = 10, stop_after: int = 3) -> Pairs:
    """Run, stop after ``stop_after`` supersteps, resume from the latest checkpoint."""
    storage = InMemoryCheckpointStorage()
    supersteps = 0
    async for event in build_workflow(storage).run(limit, stream=True):
        if event.type == "superstep_completed":
            supersteps += 1
            if supersteps == stop_after:
                break
    latest = await storage.get_latest(workflow_name="factor_pairs")
    assert latest is not None
    result = await build_workflow(storage).run(checkpoint_id=latest.checkpoint_id)
    output: Pairs = result.get_outputs()[-1]
    return output


if __name__ == "__main__":
    print(asyncio.run(main()))
