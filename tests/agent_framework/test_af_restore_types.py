"""check_restore_equivalence compares values with their types, not rendered text."""

from __future__ import annotations

from typing import Any

import af_workflows as wf
import pytest
from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler

from pytest_flows.agent_framework import (
    FlowsChatClient,
    FlowsCheckpointStorage,
    check_restore_equivalence,
)


class Squares(Executor):
    """Keeps ``{n: n*n}`` in executor state, one number per superstep."""

    def __init__(self, *, restores_int_keys: bool) -> None:
        super().__init__(id="squares")
        self.squares: dict[int, int] = {}
        self.restores_int_keys = restores_int_keys

    @handler
    async def step(self, n: int, ctx: WorkflowContext[int, dict[int, int]]) -> None:
        self.squares[n] = n * n
        if n < 3:
            await ctx.send_message(n + 1)
        else:
            await ctx.yield_output(self.squares)

    async def on_checkpoint_save(self) -> dict[str, Any]:
        return {"squares": self.squares}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        saved = state.get("squares", {})
        self.squares = {int(k): v for k, v in saved.items()} if self.restores_int_keys else saved


def build_squares(*, restores_int_keys: bool = False) -> Workflow:
    squares = Squares(restores_int_keys=restores_int_keys)
    return (
        WorkflowBuilder(start_executor=squares, name="squares").add_edge(squares, squares).build()
    )


def test_int_keys_that_come_back_as_str_fail_naming_checkpoint_superstep_and_path(flows):
    storage = FlowsCheckpointStorage()

    with pytest.raises(AssertionError) as raised:
        check_restore_equivalence(flows, build_squares, 1, storage=storage)

    message = str(raised.value)
    # the first checkpoint holding a saved square is the one after superstep 1
    first_with_state = storage.at_superstep(1, "squares")[0]
    assert f"from checkpoint {first_with_state} (saved after superstep 1;" in message
    assert "outputs[0][1] (key): int came back as str (1 -> '1')" in message
    assert "outputs[0][2] (key)" not in message  # 2 was computed after the restore
    # the rendered trace is the same: only the typed comparison sees it
    assert "What ran differs too" not in message


def test_restoring_the_keys_as_int_passes(flows):
    checks = check_restore_equivalence(flows, lambda: build_squares(restores_int_keys=True), 1)

    assert checks and all(c.equivalent and not c.changes for c in checks)
    assert checks[1].run.outputs == [{1: 1, 2: 4, 3: 9}]


def test_in_memory_rules_keep_int_keys(flows):
    # InMemoryCheckpointStorage deep-copies: the same workflow restores exactly.
    checks = check_restore_equivalence(
        flows, build_squares, 1, storage=FlowsCheckpointStorage(rules="memory")
    )

    assert all(c.equivalent for c in checks)


def test_a_value_of_another_type_in_the_final_state_is_a_difference(flows):
    from pytest_flows.agent_framework._properties import _typed_outcome, _value_changes

    run = flows.run(build_squares(restores_int_keys=True), 1)
    other = flows.run(build_squares(restores_int_keys=True), 1)
    other.state = {"total": "14"}
    run.state = {"total": 14}

    changes = _value_changes(_typed_outcome(run, 0), _typed_outcome(other, 0))

    assert changes == ["state.total: int came back as str (14 -> '14')"]


def test_agent_responses_restored_equal_compare_equal(flows, fake_llm):
    # AgentResponse has no __eq__ and carries run-specific ids: compared by its
    # fields with ids renumbered, a faithful restore is equivalent.
    fake_llm.on(agent="weather").reply("Sunny in Oslo.", times="always")

    checks = check_restore_equivalence(
        flows,
        lambda: wf.build_weather(FlowsChatClient(), output_agent=True),
        "Weather in Oslo?",
    )

    assert checks[0].run.outputs[0].text == "Sunny in Oslo."
    assert all(c.equivalent for c in checks)
