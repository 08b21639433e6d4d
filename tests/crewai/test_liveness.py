"""What finishes bare finishes under the harness, or fails within seconds naming what
blocked (issue 25). Each flow here finished on bare crewai 1.15.30 in 30 of 30 kickoffs."""

from __future__ import annotations

import datetime
import time
from typing import Optional

import pytest
from liveness_flows import (
    DataclassLock,
    LoopbackServer,
    MeasuredSleep,
    ModuleLock,
    ModuleLockDeadlock,
    PrivateAttrLock,
)

from pytest_flows import FlowsDeadlockError, FlowsSession, FlowsWarning


def _wall() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("flow", [PrivateAttrLock, DataclassLock], ids=lambda f: f.__name__)
def test_a_lock_from_a_factory_bound_at_import_is_managed(flow: type, seed: int) -> None:
    started = _wall()
    with FlowsSession(seed=seed, test_id="liveness") as session:
        run = session.run(flow)
    assert run.output == 2
    assert _wall() - started < 30  # a loaded machine; a hang would take for ever


def test_a_module_lock_held_across_a_sleep_finishes_with_a_warning_naming_it() -> None:
    started = _wall()
    with (
        pytest.warns(FlowsWarning, match=r"(?s)blocked outside the scheduler.*MODULE_LOCK"),
        FlowsSession(test_id="liveness") as session,
    ):
        run = session.run(ModuleLock)
    assert run.output == 2
    assert _wall() - started < 30  # a loaded machine; a hang would take for ever


def test_a_deadlock_over_a_module_lock_fails_within_seconds_naming_it() -> None:
    started = _wall()
    with (
        FlowsSession(test_id="liveness") as session,
        pytest.raises(FlowsDeadlockError) as caught,
    ):
        session.run(ModuleLockDeadlock)
    message = str(caught.value)
    assert "blocked outside the scheduler" in message
    assert "DEADLOCK_LOCK is a lock of module liveness_flows" in message
    assert "in left" in message and "in right" in message  # every thread's stack
    assert _wall() - started < 30


def test_a_method_serving_http_on_loopback_and_fetching_from_it_works() -> None:
    started = _wall()
    with FlowsSession(test_id="liveness") as session:
        run = session.run(LoopbackServer)
    assert run.output == "hello from loopback"
    assert _wall() - started < 30


def test_every_clock_moves_by_at_least_the_sleep(flows: FlowsSession) -> None:
    moved = flows.run(MeasuredSleep).output
    for name in ("monotonic", "perf_counter", "time"):
        assert moved[name] >= 0.05, (name, moved[name])
    for name in ("monotonic_ns", "perf_counter_ns", "time_ns"):
        assert moved[name] >= 50_000_000, (name, moved[name])
    for name in ("now", "utcnow"):
        # whole microseconds: 50 ms, or one more where time.time()'s rounding asked
        # the clock to move a fraction of a microsecond further
        assert datetime.timedelta(milliseconds=50) <= moved[name], (name, moved[name])
        assert moved[name] <= datetime.timedelta(milliseconds=50, microseconds=1)


def test_a_model_annotated_with_rlock_builds_its_schema(flows: FlowsSession) -> None:
    import threading

    from pydantic import BaseModel, ConfigDict

    class WithLock(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        lock: Optional[threading.RLock] = None  # noqa: UP045 - crewai's own test writes it so

    assert WithLock().lock is None


@pytest.mark.parametrize("bad", [0, -1, "fast", float("inf"), True])
def test_a_bad_grace_is_a_usage_error_naming_it(bad: object) -> None:
    from pytest_flows import FlowsUsageError

    with pytest.raises(FlowsUsageError, match=r"FlowsSession\(block_grace=\.\.\.\) got"):
        FlowsSession(block_grace=bad)  # type: ignore[arg-type]


def test_the_grace_is_the_scheduler_bound() -> None:
    assert FlowsSession(block_grace=0.05).scheduler.threads.block_grace == 0.05


def test_the_marker_sets_the_grace_and_rejects_a_bad_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.flows(block_grace=0.5)
        def test_set(flows):
            assert flows.scheduler.threads.block_grace == 0.5

        @pytest.mark.flows(block_grace=-1)
        def test_bad(flows):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.flows(block_grace=...) got -1*"])


# A dead watchdog would leave every later test of the process without a guard: a hang
# there would be silent (the thread method ends the process instead).
@pytest.mark.timeout(120, method="thread")
def test_the_guard_survives_an_error_of_its_own_and_keeps_guarding(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from pytest_flows._internal.runtime import liveness

    real = liveness.describe_block
    failures: list[str] = []

    def fails_once(frame: object) -> tuple[str, bool]:
        if not failures:
            failures.append("raised")
            raise RuntimeError("a look that went wrong")
        return real(frame)  # type: ignore[arg-type]

    monkeypatch.setattr(liveness, "describe_block", fails_once)
    with (
        pytest.warns(FlowsWarning, match="MODULE_LOCK"),
        FlowsSession(test_id="liveness") as session,
    ):
        run = session.run(ModuleLock)
    assert run.output == 2
    assert failures == ["raised"]
    assert "a look that went wrong" in capfd.readouterr().err
