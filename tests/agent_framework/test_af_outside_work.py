"""Issue 45 on Agent Framework: an executor awaiting an I/O thread's future and a pool's
job (both started at import) with timeouts gets the bare runtime's answer; before, the
clock jumped to the timeout at once (``TimeoutError``)."""

from __future__ import annotations

import asyncio

import pytest
from af_outside_work import build

from pytest_flows import FlowsSession


def _bare() -> list[object]:
    async def main() -> list[object]:
        return list((await build().run("hi")).get_outputs())

    return asyncio.run(main())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_executor_waiting_for_real_work_outside_gets_the_bare_result(seed: int) -> None:
    bare = _bare()  # plain agent-framework-core 1.23.0: no session, no harness
    with FlowsSession(seed=seed, test_id="af-outside-work") as session:
        run = session.run(build(), "hi")
        held = session.scheduler.threads.real_work.held
    assert bare == ["hi:pong:7"]
    assert [run.output] == bare
    assert held  # the clock waited for the work outside at least once
