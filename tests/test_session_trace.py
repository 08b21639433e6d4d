"""The session files each recorded event under the runs whose context recorded it."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime import loop as _loop
from pytest_flows._internal.session import FlowsSession
from pytest_flows._internal.trace import TraceEvent


class StepAdapter:
    """A stand-in framework: a run records ``step <target> n=i``, yielding between steps."""

    name = "steps"

    def __init__(self) -> None:
        self.counts: list[tuple[str, int, int]] = []

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        mark = session.event_count()
        for i in range(kwargs.get("steps", 3)):
            session.record(TraceEvent(kind="step.done", name=str(target), fields=(("n", str(i)),)))
            await asyncio.sleep(0)  # let the other run record in between
        inner = kwargs.get("inner")
        if inner is not None:
            await session._run(self, inner, (), {"steps": 1})
        self.counts.append((str(target), mark, session.event_count()))
        sliced = session.trace_slice(mark)
        return FlowRun(flow=target, output=sliced.names("step.done"))


def _run_all(session: FlowsSession, *runs: Any) -> list[FlowRun]:
    async def together() -> list[FlowRun]:
        return list(await asyncio.gather(*runs))

    result: list[FlowRun] = _loop.run(together(), session.scheduler)
    return result


def test_interleaved_runs_each_get_their_own_events_and_the_test_gets_all() -> None:
    adapter = StepAdapter()
    with FlowsSession(test_id="runs") as session:
        session.record(TraceEvent(kind="note.before"))
        a, b = _run_all(
            session,
            session._run(adapter, "a", (), {}),
            session._run(adapter, "b", (), {}),
        )
        session.record(TraceEvent(kind="note.after"))

        assert a.trace.lines() == ["step done a n=0", "step done a n=1", "step done a n=2"]
        assert b.trace.lines() == ["step done b n=0", "step done b n=1", "step done b n=2"]
        test_lines = session.trace.lines()
        assert test_lines[0] == "note before" and test_lines[-1] == "note after"
        assert test_lines[1:3] == ["step done a n=0", "step done b n=0"]  # interleaved
        assert len(test_lines) == 8
        assert session.event_count() == 8  # outside any run: the test's events


def test_inside_a_run_event_count_and_trace_slice_see_only_that_run() -> None:
    adapter = StepAdapter()
    with FlowsSession(test_id="counts") as session:
        session.record(TraceEvent(kind="note.before"))
        a, b = _run_all(
            session,
            session._run(adapter, "a", (), {"steps": 2}),
            session._run(adapter, "b", (), {"steps": 3}),
        )
        assert sorted(adapter.counts) == [("a", 0, 2), ("b", 0, 3)]
        assert a.output == ["a", "a"] and b.output == ["b", "b", "b"]


def test_a_nested_run_reports_to_itself_and_to_the_run_around_it() -> None:
    adapter = StepAdapter()
    with FlowsSession(test_id="nested") as session:
        (outer,) = _run_all(session, session._run(adapter, "outer", (), {"inner": "inner"}))

        assert outer.trace.names("step.done") == ["outer", "outer", "outer", "inner"]
        assert ("inner", 0, 1) in adapter.counts


def test_runs_of_another_session_do_not_collect_this_sessions_events() -> None:
    adapter = StepAdapter()
    outer = FlowsSession(test_id="outer")  # recording needs no open harness
    with FlowsSession(test_id="inner") as inner:

        async def both() -> FlowRun:
            outer.record(TraceEvent(kind="note.outer"))
            return await inner._run(adapter, "x", (), {"steps": 1})

        run: FlowRun = _loop.run(both(), inner.scheduler)
        assert run.trace.lines() == ["step done x n=0"]
        assert outer.trace.lines() == ["note outer"]
