"""Async tests under pytest-asyncio 1.x, kickoff() inside a running loop, and isolation."""

from __future__ import annotations

import _socket
import asyncio
import os
import socket
from pathlib import Path

import pytest
from dispatch_flows import FanOut, Race, Routing

from pytest_flows import FlowsSession
from pytest_flows._internal.errors import NetworkBlockedError

EXPECTED_FANOUT = [
    "method finished left output='L'",
    "method finished middle output='M'",
    "method finished right output='R'",
]


@pytest.mark.asyncio
async def test_awaiting_kickoff_async_runs_on_the_deterministic_loop(flows: FlowsSession) -> None:
    loop = asyncio.get_running_loop()
    assert getattr(loop, "deterministic", False)
    assert await Race().kickoff_async() == "winner:fast"
    assert flows.clock.monotonic() == 1.0  # a virtual second
    assert [line for line in flows.trace.lines() if line.startswith("race")] == [
        "race started or(fast_path, slow_path) racers=[fast_path, slow_path]",
        "race won fast_path",
        "race cancelled slow_path",
    ]


@pytest.mark.asyncio
async def test_flows_arun_in_an_async_test(flows: FlowsSession) -> None:
    run = await flows.arun(FanOut)
    finished = [line for line in run.trace.lines() if line.startswith("method finished")]
    assert finished[1:4] == EXPECTED_FANOUT


@pytest.mark.asyncio
async def test_sync_kickoff_inside_a_running_loop(flows: FlowsSession) -> None:
    # crewai runs asyncio.run() in a helper thread here; that loop is ours too
    assert Routing().kickoff(inputs={"priority": "high"}) == "paged"
    run = flows.run(FanOut)  # and flows.run from async code keeps the test loop free
    assert run.output == ["left", "middle", "right"]
    assert flows.trace.names("flow.finished") == ["Routing", "FanOut"]


@pytest.mark.flows(seed=3)
@pytest.mark.asyncio
async def test_seed_marker_applies_to_async_tests(flows: FlowsSession) -> None:
    await FanOut().kickoff_async()
    traced = flows.trace.render()
    with FlowsSession(seed=3, test_id=flows.test_id) as reference:
        expected = reference.run(FanOut).trace.render()
    assert flows.seed == 3
    assert traced == expected


def test_console_is_silent(flows: FlowsSession, capfd: pytest.CaptureFixture[str]) -> None:
    flows.run(Routing, inputs={"priority": "low"})
    out, err = capfd.readouterr()
    assert "Flow" not in out and "╭" not in out
    assert "╭" not in err


@pytest.mark.flows(console=True)
def test_console_can_be_shown(flows: FlowsSession, capsys: pytest.CaptureFixture[str]) -> None:
    flows.run(Routing, inputs={"priority": "low"})
    assert "Flow Execution Completed" in capsys.readouterr().out


def test_frameworks_are_isolated(
    flows: FlowsSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert os.environ["CREWAI_TESTING"] == "true"
    assert os.environ["CREWAI_DISABLE_TELEMETRY"] == "true"
    assert os.environ["CREWAI_TRACING_ENABLED"] == "false"
    assert "OPENAI_API_KEY" not in os.environ
    # a directory of this test's own, inside pytest's temporary directory
    data_home = Path(os.environ["XDG_DATA_HOME"])
    assert data_home.name == "data" and data_home.is_relative_to(tmp_path_factory.getbasetemp())
    assert not any(data_home.iterdir())
    from crewai_core.paths import db_storage_path

    # crewai's own storage (SQLite persistence, memory) resolves into it
    assert Path(db_storage_path()).is_relative_to(data_home)


def test_memory_needs_no_vector_store(flows: FlowsSession) -> None:
    flow = Routing()
    storage = type(flow.memory._storage).__name__ if flow.memory is not None else None
    assert storage in {None, "InMemoryStorage"}


def test_crewai_keeps_its_own_memory_store_outside_flows_tests() -> None:
    from pytest_flows.crewai._memory import InMemoryStorage, memory_storage

    assert memory_storage("lancedb") is None  # None: crewai picks its default store
    with FlowsSession(test_id="memory"):
        assert isinstance(memory_storage("lancedb"), InMemoryStorage)
        assert memory_storage("/a/path/the/test/chose") is None


def test_crewai_telemetry_was_created_off_without_the_variables_staying_set() -> None:
    # crewai decides at import whether telemetry exists; the plugin set its variables
    # for that import only (see docs/isolation.md)
    from crewai.events.event_listener import event_listener

    assert event_listener._telemetry.ready is False  # no exporter, no export thread
    assert "CREWAI_DISABLE_TELEMETRY" not in os.environ
    assert "CREWAI_TESTING" not in os.environ


def test_network_guard_is_on_in_flows_tests(flows: FlowsSession) -> None:
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("api.openai.com", 443)  # refused before any lookup
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        with socket.create_connection(server.getsockname()):  # loopback stays allowed
            pass
    finally:
        server.close()


def test_network_guard_is_off_elsewhere() -> None:
    # the module functions and the socket type are the interpreter's own again
    assert type(_socket.getaddrinfo).__name__ == "builtin_function_or_method"
    assert socket.socket.connect is _socket.socket.connect
    assert _socket.socket.__module__ == "_socket" and type(_socket.socket) is type


def test_failure_report_shows_the_trace(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from dispatch_flows import Routing

        def test_wrong_expectation(flows):
            run = flows.run(Routing, inputs={{"priority": "high"}})
            assert run.output == "queued"
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- pytest-flows trace -*",
            'flow started Routing inputs={"priority": "high"}',
            "method started page trigger=escalate:page_oncall",
        ]
    )


def test_seed_option_reaches_real_flows(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from dispatch_flows import FanOut

        def test_order(flows):
            run = flows.run(FanOut)
            print("ORDER", run.state["log"], flows.seed)
        """
    )
    orders = set()
    for seed in ("0", "1", "2", "3", "5"):
        result = pytester.runpytest_inprocess("-s", "-p", "no:randomly", f"--flows-seed={seed}")
        result.assert_outcomes(passed=1)
        line = "ORDER" + next(x for x in result.stdout.lines if "ORDER" in x).split("ORDER")[1]
        assert line.endswith(f" {seed}")
        orders.add(line.rsplit(" ", 1)[0])
    assert "ORDER ['left', 'middle', 'right']" in orders
    assert len(orders) > 1


CREWAI_CONFTEST = """
import crewai  # a conftest that imports crewai, before any test
from crewai.flow.flow import Flow, start
from crewai.flow.persistence import persist


@persist()  # binds its backend now, at import
class Tiny(Flow):
    _skip_auto_memory = True  # keeps the plain kickoff fast: no vector store

    @start()
    def go(self):
        return "done"
"""

CREWAI_TESTS = """
import os
from conftest import Tiny
from crewai.events.event_listener import event_listener


def test_plain_kickoff():
    assert Tiny().kickoff() == "done"
    assert event_listener._telemetry.ready is False
    print("PLAIN", os.environ.get("OPENAI_API_KEY"), os.environ.get("CREWAI_TESTING"))


def test_flows_kickoff(flows):
    assert flows.run(Tiny).output == "done"
    print("FLOWS", os.environ.get("OPENAI_API_KEY"), os.environ.get("CREWAI_TESTING"))
"""


@pytest.mark.parametrize(
    ("mode", "plain_sees"),
    [
        # CI runs the session mode, whose assertions are the wider (nothing written where
        # crewai keeps its files either); the default mode's plain test left alone is
        # checked in CI by tests/test_isolation.py::
        # test_plain_tests_see_the_process_as_it_was_serially, and crewai's import-time
        # telemetry off by test_crewai_telemetry_was_created_off_without_the_variables_staying_set.
        pytest.param("test", "PLAIN sk-outer-key None", marks=pytest.mark.long),
        ("session", "PLAIN None true"),
    ],
)
def test_a_conftest_importing_crewai_and_a_plain_kickoff(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str, plain_sees: str
) -> None:
    home = pytester.path / "home"
    outer = {"HOME": home, "XDG_DATA_HOME": home / "data", "XDG_CACHE_HOME": home / "cache"}
    for name, path in outer.items():
        path.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-outer-key")
    monkeypatch.setenv("CREWAI_DISABLE_VERSION_CHECK", "true")  # the plain test: no PyPI call
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    # the plugin alone: the other plugins' imports cost seconds a run
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("CREWAI_TESTING", "CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CI"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CREWAI_CONFTEST)
    pytester.makepyfile(test_tiny=CREWAI_TESTS)
    project = {p.name for p in pytester.path.iterdir()}
    result = pytester.runpytest_subprocess(
        "-s", "-p", "pytest_flows.plugin", "-p", "no:cacheprovider", "-o", f"flows_isolation={mode}"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"*{plain_sees}*", "*FLOWS None true*"])
    # nothing written in the project either way
    pytesters_own = {"runpytest-0", "runpytest-current", "stdout", "stderr"}  # its basetemp
    assert {p.name for p in pytester.path.iterdir()} - pytesters_own == project
    if mode == "session":
        # nor where crewai keeps its files (the plain kickoff of the default mode writes
        # there, as it would without the plugin: crewai's user file)
        assert not any((home / "data").iterdir()) and not any((home / "cache").iterdir())
