"""A control-flow loop whose executor keeps state (the shape of Agent Framework's
``simple_loop`` sample).

    guesser <-> judge   (until the judge says MATCHED)

The guesser bisects a range it keeps on itself (``low``/``high``); the judge
answers ``ABOVE``, ``BELOW`` or ``MATCHED``. Executor state lives outside the
workflow's shared state, so a checkpoint holds it only if the executor saves it
(``on_checkpoint_save``/``on_checkpoint_restore``): ``Guesser(saves_state=False)``
is the sample as first ported, which resumes from a checkpoint with a fresh
range - caught by ``check_restore_equivalence``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Never

from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler

ALLOWED_CHECKPOINT_TYPES = ["af_number_search:Hint"]


class Hint(Enum):
    INIT = "INIT"
    ABOVE = "ABOVE"
    BELOW = "BELOW"
    MATCHED = "MATCHED"


class Guesser(Executor):
    def __init__(self, low: int = 1, high: int = 100, *, saves_state: bool = True) -> None:
        super().__init__(id="guesser")
        self.low, self.high = low, high
        self.saves_state = saves_state

    @handler
    async def guess(self, hint: Hint, ctx: WorkflowContext[int, str]) -> None:
        if hint is Hint.MATCHED:
            await ctx.yield_output(f"found it between {self.low} and {self.high}")
            return
        if hint is Hint.ABOVE:  # the last guess was above the target
            self.high = self._last - 1
        elif hint is Hint.BELOW:
            self.low = self._last + 1
        self._last = (self.low + self.high) // 2
        ctx.set_state("guesses", [*ctx.get_state("guesses", []), self._last])
        await ctx.send_message(self._last)

    _last = 0

    async def on_checkpoint_save(self) -> dict[str, Any]:
        if not self.saves_state:
            return {}
        return {"low": self.low, "high": self.high, "last": self._last}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        if state:
            self.low, self.high, self._last = state["low"], state["high"], state["last"]


class Judge(Executor):
    def __init__(self, target: int) -> None:
        super().__init__(id="judge")
        self.target = target

    @handler
    async def judge(self, guess: int, ctx: WorkflowContext[Hint, Never]) -> None:
        if guess == self.target:
            await ctx.send_message(Hint.MATCHED)
        else:
            await ctx.send_message(Hint.ABOVE if guess > self.target else Hint.BELOW)


def build_workflow(target: int = 30, *, saves_state: bool = True) -> Workflow:
    guesser, judge = Guesser(saves_state=saves_state), Judge(target)
    return (
        WorkflowBuilder(start_executor=guesser, name="number_search", output_from=[guesser])
        .add_edge(guesser, judge)
        .add_edge(judge, guesser)
        .build()
    )
