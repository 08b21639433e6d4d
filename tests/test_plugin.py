"""The plugin's options, markers and hooks, run as a user would run pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestDeprecationWarning")


def test_importing_pytest_flows_does_not_import_a_framework() -> None:
    code = (
        "import sys, pytest_flows, pytest_flows._internal.plugin\n"
        "import pytest_flows._internal.runtime.loop\n"
        "import pytest_flows._internal.trace\n"
        "bad = sorted(m for m in ('crewai', 'agent_framework') if m in sys.modules)\n"
        "print(','.join(bad) or 'clean')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "clean"


def test_loading_the_plugin_defers_the_harness_and_what_only_some_tests_use() -> None:
    # start-up cost: a run that uses no flows fixture should not pay for them
    code = (
        "import sys, pytest_flows._internal.plugin\n"
        "heavy = ('pydantic', 'vcr', 'pytest_flows._internal.session',"
        " 'pytest_flows._internal.state.store', 'pytest_flows._internal.snapshot',"
        " 'pytest_flows._internal.runtime.loop', 'pytest_flows._internal.runtime.threads',"
        " 'pytest_flows._internal.isolation', 'pytest_flows._internal.recording.cassette',"
        " 'pytest_flows._internal.coverage.data', 'pytest_flows._internal.golden.breaks')\n"
        "print(','.join(m for m in heavy if m in sys.modules) or 'light')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "light"


def test_a_run_without_flow_fixtures_pays_no_framework_import(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys
        def test_plain():
            assert "crewai" not in sys.modules
            assert "agent_framework" not in sys.modules
            # pytest-asyncio's event_loop_policy fixture ran: the plugin's hook around
            # it must not load the harness for a run that never uses it
            assert "pytest_flows._internal.runtime.loop" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_plain_run_loads_no_snapshot_scrubber_network_or_marker_machinery(
    pytester: pytest.Pytester,
) -> None:
    # Start-up cost (tests/benchmarks/bench_startup.py): each of these loaded at every
    # pytest start-up once, for a run that snapshots, records and guards nothing.
    pytester.makepyfile(
        """
        import sys
        DEFERRED = (
            "pytest_flows._internal.syrupy_extension",  # syrupy's amber classes
            "pytest_flows._internal.recording.scrub",
            "pytest_flows._internal.recording.cassette",
            "pytest_flows._internal.runtime.network",
            "pytest_flows._internal.markers",
            "pytest_flows._internal.file_names",
        )
        def test_plain():
            assert "pytest_flows._internal.plugin" in sys.modules
            assert [name for name in DEFERRED if name in sys.modules] == []
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("value", ["abc", "-3", "1.5"])
def test_bad_seed_option_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_inprocess(f"--flows-seed={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--flows-seed expects a whole number >= 0 (0 is the default order), got '{value}'*"]
    )


def test_bad_seed_ini_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nflows_seed = many\n")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option flows_seed: --flows-seed expects*got 'many'*"])


def test_marker_rejects_unknown_arguments(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.flows(sead=3)
        def test_x(): pass
        @pytest.mark.flows(seed="3")
        def test_y(): pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.flows got unknown argument(s) sead;"
            " it accepts seed, allow_hosts, console*",
            "*@pytest.mark.flows(seed=...) expects a whole number >= 0, got '3'*",
        ]
    )
    result.assert_outcomes(errors=2)


SEED_PROBE = """
import asyncio
import pytest
from pytest_flows._internal.runtime.loop import active_scheduler

def probe():
    scheduler = active_scheduler()
    async def loop_kind():
        loop = asyncio.get_running_loop()
        return type(loop).__name__, getattr(loop, "deterministic", None)
    return (scheduler.seed if scheduler else None), asyncio.run(loop_kind())

def test_default():
    print("PROBE", probe())

@pytest.mark.flows(seed=9)
def test_marked():
    print("PROBE", probe())
"""


def test_flows_all_puts_every_test_on_the_harness(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SEED_PROBE)
    result = pytester.runpytest_inprocess(
        "-s", "-p", "no:randomly", "--flows-all", "--flows-seed=4"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*PROBE (4, ('DeterministicEventLoop', True))*",
            "*PROBE (9, ('DeterministicEventLoop', True))*",
        ]
    )


def test_without_flows_all_only_flows_tests_get_the_harness(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SEED_PROBE)
    result = pytester.runpytest_inprocess("-s", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*PROBE (None, ('_UnixSelectorEventLoop', None))*",
            "*PROBE (9, ('DeterministicEventLoop', True))*",
        ]
    )


def test_flows_isolation_session_keeps_the_policy_for_the_whole_session(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nflows_isolation = session\n")
    pytester.makepyfile(SEED_PROBE)
    result = pytester.runpytest_inprocess("-s", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*PROBE (None, ('DeterministicEventLoop', False))*",
            "*PROBE (9, ('DeterministicEventLoop', True))*",
        ]
    )


def test_bad_flows_isolation_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nflows_isolation = per-module\n")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option flows_isolation: expected 'test'*or 'session'*got 'per-module'*"]
    )


def test_flows_all_from_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nflows_all = true\nflows_seed = 2\n")
    pytester.makepyfile(SEED_PROBE)
    result = pytester.runpytest_inprocess("-s", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["*PROBE (2, ('DeterministicEventLoop', True))*"])


def test_flows_all_keeps_correct_async_and_threaded_tests_passing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import asyncio, threading, time
        import pytest

        def test_threads():
            out = []
            t = threading.Thread(target=out.append, args=(1,))
            t.start(); t.join()
            assert out == [1]

        def test_asyncio_run():
            async def main():
                await asyncio.sleep(60)
                return await asyncio.gather(*(asyncio.to_thread(pow, 2, n) for n in range(5)))
            started = time.perf_counter()
            assert asyncio.run(main()) == [1, 2, 4, 8, 16]
            # virtual time: the minute passed on the clocks, not on the wall
            assert time.perf_counter() - started == 60

        @pytest.mark.asyncio
        async def test_async():
            assert await asyncio.wait_for(asyncio.sleep(5, result="ok"), timeout=10) == "ok"
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-all")
    result.assert_outcomes(passed=3)


KEPT = """
import gc
import weakref

sessions = []


def test_first(flows):
    sessions.append(weakref.ref(flows))


def test_second(flows):
    gc.collect()
    assert sessions[0]() is None, "the first test's session is still alive"
"""


def test_a_finished_tests_session_is_let_go(pytester: pytest.Pytester) -> None:
    # pytest keeps every item and its stash until the run ends; a session kept there
    # kept each test's runs, traces and store alive for the rest of the run.
    pytester.makepyfile(test_kept=KEPT)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
