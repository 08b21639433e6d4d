"""Virtual time never outruns real work it cannot see, and a spinning thread yields
(issue 45, promise 9).

Each flow (outside_work_flows.py) runs bare (plain crewai 1.15.30, no harness: a plain
``kickoff()`` outside any ``FlowsSession``) and under the harness in the same test, and
both must give the same result. Before issue 45 the harness gave: ``TimeoutError`` at
once (ImportPool, IOThreadFuture), ``TimeoutExpired`` (ChildBesideSleep), a spin for
ever (BusyPoll) and a false deadlock after 60 s (PoolContext).
"""

from __future__ import annotations

import functools
import time
import warnings

import pytest
from outside_work_flows import (
    POOL,
    BusyPoll,
    ChildBesideSleep,
    ImportPool,
    IOThreadFuture,
    PipeDeadlock,
    PoolContext,
    SlowImportPool,
    SpinForEver,
)

from pytest_flows import FlowsDeadlockError, FlowsSession, FlowsWarning


def _wall() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


@functools.cache
def _bare(flow: type) -> object:
    """The bare result, once per flow (ChildBesideSleep sleeps 2 real seconds bare)."""
    return flow().kickoff()


def _harness(flow: type, seed: int) -> object:
    with warnings.catch_warnings():
        # PoolContext's handler thread waits in a real pipe poll: the honest warning
        # names it (tested in test_liveness.py); it is not what these tests compare.
        warnings.simplefilter("ignore")
        with FlowsSession(seed=seed, test_id="outside-work") as session:
            return session.run(flow).output


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("flow", "expected"),
    [
        (ImportPool, 7),
        (IOThreadFuture, "pong"),
        (ChildBesideSleep, "child ran"),
        (BusyPoll, "helped"),
        (PoolContext, [1, 4, 9]),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_real_work_outside_the_scheduler_gives_the_bare_result(
    flow: type, expected: object, seed: int
) -> None:
    bare = _bare(flow)
    started = _wall()
    output = _harness(flow, seed)
    assert bare == expected
    assert output == bare
    # far below the false deadlock's 60 s grace, on a loaded machine
    assert _wall() - started < 20


def test_the_clock_held_for_the_pool_and_the_trace_says_so() -> None:
    with FlowsSession(test_id="outside-work") as session:
        run = session.run(ImportPool)
        held = session.scheduler.threads.real_work.held
    assert run.output == 7
    assert run.trace.lines() == [
        "flow started ImportPool",
        "method started ask trigger=start",
        "clock held thread 'import-pool_0'",
        "method finished ask output=7",
        "flow finished ImportPool output=7",
    ]
    assert held, "the jump to the 10 s timeout waited for the pool's thread"
    assert "import-pool" in held[0].what
    assert not held[0].gave_up
    assert held[0].real_seconds < session.scheduler.threads.block_grace


def test_the_child_process_holds_the_clock_beside_the_long_sleep() -> None:
    with FlowsSession(test_id="outside-work") as session:
        assert session.run(ChildBesideSleep).output == "child ran"
        held = session.scheduler.threads.real_work.held
        now = session.scheduler.clock.monotonic()
        lines = session.trace.lines()
    assert any("child process" in h.what for h in held)
    # one line for the child's whole poll loop (its waits are as many as real time allows)
    assert lines.count("clock held a child process") == 1
    assert now >= 2  # the listener's 2 s sleep still passed, in virtual time


def test_a_busy_loop_nobody_can_end_fails_naming_the_spinning_method() -> None:
    started = _wall()
    with (
        FlowsSession(test_id="outside-work", spin_limit=0.5) as session,
        pytest.raises(FlowsDeadlockError) as caught,
    ):
        session.run(SpinForEver)
    message = str(caught.value)
    assert "kept running spin (" in message and "outside_work_flows.py" in message
    assert "for 0.5 virtual seconds without blocking" in message
    assert _wall() - started < 30


def test_the_spin_bound_is_documented_and_a_session_can_run_on_after() -> None:
    from pytest_flows._internal.runtime import real_work

    assert real_work.SPIN_READS == 1000
    assert real_work.DEFAULT_SPIN_LIMIT == 5.0
    with FlowsSession(test_id="outside-work", spin_limit=0.2) as session:
        with pytest.raises(FlowsDeadlockError):
            session.run(SpinForEver)
        assert session.run(ImportPool).output == 7


@pytest.mark.parametrize("bad", [0, -1, "fast", float("inf"), float("nan"), True])
def test_a_bad_spin_limit_is_a_usage_error_naming_it(bad: object) -> None:
    from pytest_flows import FlowsUsageError

    with pytest.raises(FlowsUsageError, match=r"FlowsSession\(spin_limit=\.\.\.\) got"):
        FlowsSession(spin_limit=bad)  # type: ignore[arg-type]


def test_the_marker_sets_the_spin_limit_and_rejects_a_bad_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.flows(spin_limit=0.5)
        def test_set(flows):
            assert flows.scheduler.threads.real_work.spin_limit == 0.5

        def test_default(flows):
            assert flows.scheduler.threads.real_work.spin_limit == 5.0

        @pytest.mark.flows(spin_limit=0)
        def test_bad(flows):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.flows(spin_limit=...) got 0*"])


def test_a_real_deadlock_over_a_pipe_is_reported_within_seconds_naming_the_pipe() -> None:
    # A pipe is written by this process's threads and children only: the report comes
    # after the deadlock grace (1 s), not after the 60 s a socket gets.
    started = _wall()
    with (
        warnings.catch_warnings(),
        FlowsSession(test_id="outside-work") as session,
        pytest.raises(FlowsDeadlockError) as caught,
    ):
        warnings.simplefilter("ignore")
        try:
            session.run(PipeDeadlock)
        finally:
            PipeDeadlock.release()
    message = str(caught.value)
    assert "a pipe (selectors)" in message
    assert "pipe-waiter" in message
    assert _wall() - started < 20


def test_work_longer_than_the_grace_is_let_go_with_a_warning_naming_it() -> None:
    # Honest where it cannot be deterministic: the wait is bounded by the block grace
    # (0.05 s here; the job takes 0.3 s), then the clock jumps and the warning says so.
    with (
        pytest.warns(FlowsWarning, match=r"waited 0\.05 real seconds for thread 'import-pool"),
        FlowsSession(test_id="outside-work", block_grace=0.05) as session,
    ):
        run = session.run(SlowImportPool)
    assert run.output == "timed out"
    assert "clock held thread 'import-pool_0' gave_up=" in run.trace.render()
    POOL.submit(int).result()  # the slow job is done before the next test uses the pool
