"""Installed but unused, the plugin changes no other test: isolation is per flows test.

One pytester project interleaves plain tests (a provider key and a secret-looking token set
in the environment, a file under ``XDG_DATA_HOME``, the loop policy, ``time.time()`` against
the file system's clock, a loopback socket) with flows tests, and runs it serially, in random
order and on two xdist workers: the plain tests see the original values, the flows tests
are isolated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestDeprecationWarning")

OUTER_KEY = "sk-outer-0123456789"
OUTER_TOKEN = "outer-service-token"

CONFTEST = '''
import _socket
import asyncio
import datetime
import os
import socket
import time
from pathlib import Path

import pytest

from pytest_flows._internal.errors import NetworkBlockedError
from pytest_flows._internal.runtime.loop import DeterministicEventLoop

# What the process looked like before any test ran.
ORIGINAL = {
    "policy": type(asyncio.get_event_loop_policy()),
    "getaddrinfo": (socket.getaddrinfo, _socket.getaddrinfo),
    "gethostbyname": (socket.gethostbyname, _socket.gethostbyname),
    "socket": (socket.socket.connect, _socket.socket, socket.SocketType),
    "clock": (datetime.datetime, time.time, time.monotonic),
}


def network_as_found():
    return {
        "getaddrinfo": (socket.getaddrinfo, _socket.getaddrinfo),
        "gethostbyname": (socket.gethostbyname, _socket.gethostbyname),
        "socket": (socket.socket.connect, _socket.socket, socket.SocketType),
    }
OUTER_DATA = Path("{data}")


def wall(tmp_path):
    """Now, by the file system's clock, which no time patch reaches."""
    probe = tmp_path / "probe"
    probe.touch()
    return probe.stat().st_mtime


def loopback_round_trip():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            peer, _ = server.accept()
            with peer:
                client.sendall(b"ping")
                return peer.recv(4)
    finally:
        server.close()


@pytest.fixture
def untouched(tmp_path):
    """Checks that the process is as the plugin found it."""
    def check():
        assert os.environ.get("OPENAI_API_KEY") == "{key}"
        assert os.environ.get("MY_SERVICE_TOKEN") == "{token}"
        assert Path(os.environ["XDG_DATA_HOME"]) == OUTER_DATA
        assert (OUTER_DATA / "notes.txt").read_text() == "mine"
        for name in ("CREWAI_TESTING", "CREWAI_DISABLE_TELEMETRY", "CREWAI_STORAGE_DIR"):
            assert name not in os.environ, name
        assert type(asyncio.get_event_loop_policy()) is ORIGINAL["policy"]
        assert abs(time.time() - wall(tmp_path)) < 60
        assert (datetime.datetime, time.time, time.monotonic) == ORIGINAL["clock"]
        assert network_as_found() == {k: v for k, v in ORIGINAL.items() if k in network_as_found()}
        assert loopback_round_trip() == b"ping"
    return check


@pytest.fixture
def isolated(tmp_path):
    """Checks that a flows test is isolated as before."""
    def check():
        assert "OPENAI_API_KEY" not in os.environ
        assert "MY_SERVICE_TOKEN" not in os.environ
        data = Path(os.environ["XDG_DATA_HOME"])
        assert data != OUTER_DATA
        assert not (data / "notes.txt").exists()
        loop = asyncio.new_event_loop()
        try:
            assert isinstance(loop, DeterministicEventLoop)
        finally:
            loop.close()
        assert abs(time.time() - wall(tmp_path)) > 86400  # the virtual wall clock
        with pytest.raises(NetworkBlockedError):
            socket.getaddrinfo("api.openai.com", 443)  # refused before any lookup
        assert loopback_round_trip() == b"ping"  # loopback stays allowed
    return check
'''


def conftest(data: Path) -> str:
    return (
        CONFTEST.replace("{key}", OUTER_KEY)
        .replace("{token}", OUTER_TOKEN)
        .replace("{data}", str(data))
    )


TESTS = """
import asyncio

import pytest

from pytest_flows._internal.runtime.loop import DeterministicEventLoop


def test_{m}_01_flows(flows, isolated):
    isolated()


def test_{m}_02_plain(untouched):
    untouched()


@pytest.mark.flows
def test_{m}_03_marked(isolated):
    isolated()


def test_{m}_04_plain(untouched):
    untouched()

    async def loop_type():
        return type(asyncio.get_running_loop())

    assert not issubclass(asyncio.run(loop_type()), DeterministicEventLoop)


@pytest.mark.asyncio
async def test_{m}_05_flows_async(flows, isolated):
    assert asyncio.get_running_loop().deterministic
    isolated()


@pytest.mark.asyncio
async def test_{m}_06_plain_async(untouched):
    assert not isinstance(asyncio.get_running_loop(), DeterministicEventLoop)
    untouched()


def test_{m}_07_plain(untouched):
    untouched()
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    outer_data = pytester.path / "outer-data"
    outer_data.mkdir()
    (outer_data / "notes.txt").write_text("mine")
    monkeypatch.setenv("XDG_DATA_HOME", str(outer_data))
    monkeypatch.setenv("OPENAI_API_KEY", OUTER_KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", OUTER_TOKEN)
    for name in ("CREWAI_TESTING", "CREWAI_DISABLE_TELEMETRY", "CREWAI_STORAGE_DIR"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makeconftest(conftest(outer_data))
    pytester.makepyfile(
        test_first=TESTS.replace("{m}", "first"), test_second=TESTS.replace("{m}", "second")
    )
    return pytester


FILE_ORDER = [
    f"test_{m}_{n}"
    for m in ("first", "second")
    for n in (
        "01_flows",
        "02_plain",
        "03_marked",
        "04_plain",
        "05_flows_async",
        "06_plain_async",
        "07_plain",
    )
]


def _ran(result: pytest.RunResult) -> list[str]:
    return re.findall(r"::(test_\w+) PASSED", result.stdout.str())


def test_plain_tests_see_the_process_as_it_was_serially(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-v", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=14)
    assert _ran(result) == FILE_ORDER
    # the harness put back the policy, the clock and the network after the last flows test
    assert Path(str(project.path / "outer-data" / "notes.txt")).read_text() == "mine"


def test_plain_tests_see_the_process_as_it_was_in_random_order(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess("-v", "--randomly-seed=4", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=14)
    ran = _ran(result)
    assert sorted(ran) == sorted(FILE_ORDER) and ran != FILE_ORDER


# Three interpreters: long mode. CI checks the same restoring serially and in random order
# above, and on its own xdist workers (tests/crewai/test_async_and_isolation.py::
# test_network_guard_is_off_elsewhere and ..._telemetry_was_created_off_...).
@pytest.mark.long
def test_plain_tests_see_the_process_as_it_was_on_xdist_workers(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess(
        "-n", "2", "-v", "-p", "no:randomly", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=14)
    workers = set(re.findall(r"\[(gw\d)\]", result.stdout.str()))
    assert workers == {"gw0", "gw1"}


def test_flows_isolation_session_isolates_every_test(project: pytest.Pytester) -> None:
    # today's session-wide behaviour, on request: plain tests are isolated too
    result = project.runpytest_inprocess(
        "-p", "no:randomly", "-p", "no:cacheprovider", "-o", "flows_isolation=session"
    )
    result.assert_outcomes(passed=6, failed=8)
    result.stdout.fnmatch_lines(["*AssertionError: assert None == '" + OUTER_KEY + "'"])


def test_flows_all_implies_session_isolation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio, os
        from pytest_flows._internal.runtime.loop import DeterministicEventLoopPolicy

        def test_plain():
            assert "OPENAI_API_KEY" not in os.environ
            assert isinstance(asyncio.get_event_loop_policy(), DeterministicEventLoopPolicy)
        """
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", OUTER_KEY)
        result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-all")
    result.assert_outcomes(passed=1)


def test_a_recording_test_is_isolated_too(pytester: pytest.Pytester) -> None:
    # @pytest.mark.recorded is a pytest-flows marker: a replay sees the placeholder key
    pytester.makepyfile(
        """
        import os, pytest
        from pytest_flows._internal.recording.scrub import REPLAY_KEY

        @pytest.mark.recorded(record_mode="none")
        def test_replay():
            assert os.environ["OPENAI_API_KEY"] == REPLAY_KEY

        def test_plain_after():
            assert os.environ["OPENAI_API_KEY"] == "{key}"
        """.replace("{key}", OUTER_KEY)
    )
    (pytester.path / "cassettes" / "test_a_recording_test_is_isolated_too").mkdir(parents=True)
    (
        pytester.path / "cassettes" / "test_a_recording_test_is_isolated_too" / "test_replay.yaml"
    ).write_text("interactions: []\nversion: 1\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", OUTER_KEY)
        mp.delenv("CI", raising=False)
        result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_a_harness_that_fails_to_open_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    import contextlib
    import time

    from pytest_flows._internal import session as session_module
    from pytest_flows._internal.runtime.loop import active_scheduler

    @contextlib.contextmanager
    def broken_guard(allow: object) -> object:
        raise RuntimeError("guard failed")
        yield  # pragma: no cover

    policy, real_time = asyncio.get_event_loop_policy(), time.time
    monkeypatch.setattr(session_module, "network_guard", broken_guard)
    with pytest.raises(RuntimeError, match="guard failed"):
        session_module.FlowsSession(test_id="broken").open()
    # the clock, the scheduler and the policy it had set up are gone again
    assert time.time is real_time and active_scheduler() is None
    assert asyncio.get_event_loop_policy() is policy
    assert "new_event_loop" not in vars(policy)
