"""The pytest plugin: options, markers, hooks and fixtures. It wires; it does not implement."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import shutil
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

# Imported at every pytest start-up, flows test or not: only light wiring here. The
# harness (loop, threads, isolation, pydantic) loads when a test first needs it; the
# snapshot extension (syrupy's classes), the scrubber, the network guard and marker
# parsing load when a test uses them (tests/test_plugin.py lists what a plain run loads).
from pytest_flows._internal import imports as _imports
from pytest_flows._internal import syrupy_wiring
from pytest_flows._internal.contract.adapters import ADAPTERS, AdapterSpec, load_adapter
from pytest_flows._internal.coverage import pytest_wiring as flows_coverage
from pytest_flows._internal.fake_fixtures import (  # noqa: F401
    conversation,
    fake_crews,
    fake_llm,
    fake_tools,
    flow_memory,
    flow_store,
    human,
)
from pytest_flows._internal.flight import pytest_wiring as flows_replay
from pytest_flows._internal.golden import pytest_wiring as flows_golden
from pytest_flows._internal.ini_checks import ini_bool
from pytest_flows._internal.recording import pytest_wiring as recording
from pytest_flows._internal.recording.pytest_wiring import llm_cassette  # noqa: F401
from pytest_flows._internal.runtime import lock_factory as _lock_factory
from pytest_flows._internal.runtime import queue_factory as _queue_factory
from pytest_flows._internal.stash import CALL_RAISED_KEY, SESSION_KEY

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

#: Fixtures whose use puts a test on the harness.
FLOWS_FIXTURES = frozenset(
    {
        "flows",
        "flow_store",
        "flow_memory",
        "fake_llm",
        "fake_crews",
        "fake_tools",
        "human",
        "conversation",
    }
)
#: Keyword arguments ``@pytest.mark.flows(...)`` accepts.
MARKER_KWARGS = (
    "seed",
    "allow_hosts",
    "console",
    "budget",
    "schedule",
    "races",
    "block_grace",
    "spin_limit",
)

#: Values of the ``flows_isolation`` ini setting: around each flows test (default),
#: or for the whole session.
ISOLATION_MODES = ("test", "session")

_RESTORE = pytest.StashKey[list[Any]]()
_MODE = pytest.StashKey[str]()
_PRIVATE_ROOT = pytest.StashKey[Path]()


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"--flows-seed expects a whole number >= 0 (0 is the default order), got {text!r}"
        )
    return value


def _schedule(text: str) -> str:
    from pytest_flows._internal.errors import FlowsUsageError
    from pytest_flows._internal.runtime.schedule import decode

    try:
        decode(text)
    except FlowsUsageError as exc:
        raise argparse.ArgumentTypeError(f"--flows-schedule: {exc}") from None
    return text


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flows", "pytest-flows: deterministic agentic flow tests")
    group.addoption(
        "--flows-seed",
        type=_seed,
        default=None,
        metavar="N",
        help="scheduler seed: picks which of the orders the runtime allows is used "
        "(default 0: the runtime's own submission order)",
    )
    group.addoption(
        "--flows-schedule",
        type=_schedule,
        default=None,
        metavar="S",
        help="replay one schedule explore() reported (e.g. s0102) in every flows run",
    )
    group.addoption(
        "--flows-all",
        action="store_true",
        default=None,
        help="run every test on the deterministic loop with flows isolation, "
        "without requesting a fixture (ini: flows_all)",
    )
    group.addoption(
        "--flows-console",
        action="store_true",
        default=False,
        help="show the frameworks' console output (silenced by default)",
    )
    parser.addini("flows_all", "like --flows-all", type="bool", default=False)
    parser.addini(
        "flows_isolation",
        "test (default): isolate each flows test only; session: isolate the whole "
        "session, as --flows-all does",
        default="test",
    )
    parser.addini("flows_seed", "default scheduler seed", default="0")
    parser.addini("flows_races", "off, warn or fail: what a state race does", default="off")
    parser.addini(
        "flows_block_grace",
        "real seconds a flow thread may block outside the scheduler (an unmanaged lock, "
        "a socket) before the others run meanwhile (default 0.25)",
        default="",
    )
    parser.addini("flows_allow_hosts", "extra hosts flows tests may connect to", type="linelist")
    syrupy_wiring.addoption(parser)
    recording.addoption(parser)
    flows_coverage.addoption(parser)
    flows_golden.addoption(parser)
    flows_replay.addoption(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before conftest files load: a conftest that imports crewai must already
    # meet the import hooks (and, isolating the session, the environment).
    _install(early_config)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "flows(seed=None, allow_hosts=(), console=False, budget=None, schedule=None, "
        "races='off'): run this test on the "
        "pytest-flows "
        "harness (deterministic loop, fixed ids and clock, offline) with these settings",
    )
    if config.getoption("flows_seed") is None:
        config.option.flows_seed = _ini_seed(config)
    from pytest_flows._internal.ini_checks import check_ini

    check_ini(config)  # every ini option, once, with its name
    _install(config)
    syrupy_wiring.configure(config)
    recording.configure(config)
    flows_coverage.configure(config)
    flows_golden.configure(config)
    flows_replay.configure(config)


def _install(config: pytest.Config) -> None:
    if _RESTORE in config.stash:
        return
    mode = _isolation_mode(config)
    restore: list[Any] = []
    config.stash[_RESTORE] = restore
    config.stash[_MODE] = mode
    # Before any conftest or test module binds threading.Lock (lock_factory.py) or
    # queue.SimpleQueue (queue_factory.py).
    restore.append(_lock_factory.install())
    restore.append(_queue_factory.install())
    if mode == "session":
        from pytest_flows._internal.runtime.loop import DeterministicEventLoopPolicy

        _isolate_environment(restore)
        previous = asyncio.get_event_loop_policy()
        asyncio.set_event_loop_policy(DeterministicEventLoopPolicy())
        restore.append(lambda: asyncio.set_event_loop_policy(previous))
    for spec in ADAPTERS:
        if mode == "test":
            # crewai reads its telemetry and first-run settings once, at import:
            # set them for the import alone, not for the session.
            window = functools.partial(_framework_import_environment, spec)
            restore.append(_imports.while_importing(spec.framework, window))
        # Configure each adapter as soon as its framework is imported: crewai
        # binds storage backends at import time of the user's flow modules.
        _imports.when_imported(spec.framework, _loader_for(spec))


@contextlib.contextmanager
def _framework_import_environment(spec: AdapterSpec) -> Iterator[None]:
    from pytest_flows._internal.isolation import framework_import_environment

    with framework_import_environment(spec):
        yield


def _isolation_mode(config: pytest.Config) -> str:
    # Before the command line is fully parsed, only the early namespace has it.
    early = getattr(config, "known_args_namespace", None)
    flows_all = bool(getattr(early, "flows_all", None) or config.getoption("flows_all", None))
    try:
        return isolation_mode(
            config.getini("flows_isolation"), flows_all=flows_all or ini_bool(config, "flows_all")
        )
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def isolation_mode(raw: object, *, flows_all: bool) -> str:
    """The isolation mode from the ini value; ``--flows-all`` implies ``session``."""
    value = str(raw or "test").strip().lower() or "test"
    if value not in ISOLATION_MODES:
        raise ValueError(
            f"ini option flows_isolation: expected 'test' (isolate each flows test; the "
            f"default) or 'session' (isolate the whole session, as --flows-all does), "
            f"got {raw!r}"
        )
    return "session" if flows_all else value


def _loader_for(spec: AdapterSpec) -> Callable[[ModuleType], None]:
    def load(_module: ModuleType) -> None:
        load_adapter(spec)

    return load


def _ini_seed(config: pytest.Config) -> int:
    raw = str(config.getini("flows_seed")).strip() or "0"
    try:
        return _seed(raw)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"ini option flows_seed: {exc}") from None


def _isolate_environment(restore: list[Any]) -> None:
    """The whole session isolated (``flows_isolation = session`` or ``--flows-all``)."""
    # A fresh directory, removed at the end of the session. Not inside pytest's
    # basetemp: that is created (and emptied) only later, after conftests load.
    base = Path(tempfile.mkdtemp(prefix="pytest-flows-"))
    restore.append(lambda: shutil.rmtree(base, ignore_errors=True))
    from pytest_flows._internal.isolation import session_isolation

    context = session_isolation(base)
    context.__enter__()
    restore.append(lambda: context.__exit__(None, None, None))


def _private_dir(config: pytest.Config) -> Path:
    """A fresh directory for one test's files, under pytest's basetemp."""
    root = config.stash.get(_PRIVATE_ROOT, None)
    if root is None:
        factory = getattr(config, "_tmp_path_factory", None)  # None under -p no:tmpdir
        if factory is not None:
            root = factory.mktemp("flows-isolation")
        else:
            root = Path(tempfile.mkdtemp(prefix="pytest-flows-"))
            config.stash[_RESTORE].append(functools.partial(shutil.rmtree, root, True))
        config.stash[_PRIVATE_ROOT] = root
    return Path(tempfile.mkdtemp(prefix="test-", dir=root))


def _isolates_each_test(item: pytest.Item) -> bool:
    if item.config.stash.get(_MODE, "test") != "test":
        return False
    if _wants_harness(item) or item.get_closest_marker("recorded") is not None:
        return True
    return "llm_cassette" in getattr(item, "fixturenames", ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    try:
        # Around setup, call and teardown, outside every other hook: the recorder
        # gives a recording test its keys back inside this, and takes them away again.
        if not _isolates_each_test(item):
            return (yield)
        from pytest_flows._internal.isolation import isolated_environment

        with isolated_environment(_private_dir(item.config)):
            return (yield)
    finally:
        # pytest keeps every item, and its stash, until the run ends: a session left
        # there kept each test's runs, traces and store alive (a crash-resume property
        # test kept 1.8 MB, and the garbage collector's passes slowed as a suite went on).
        if SESSION_KEY in item.stash:
            del item.stash[SESSION_KEY]


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    # pytest-asyncio keeps, for the session, the policy in force when its
    # event_loop_policy fixture first runs: make that the policy of the process,
    # not of the flows test that happened to run first.
    if fixturedef.argname != "event_loop_policy":
        return (yield)
    isolation = sys.modules.get("pytest_flows._internal.isolation")
    if isolation is None:
        # No harness has opened yet (it would have imported isolation): the policy in
        # force is the process's own. Importing it here would load the loop for every
        # async test of a run that never uses flows.
        return (yield)
    with isolation.outside_flows_policy():
        return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    undos: list[Any] = config.stash.get(_RESTORE, [])
    for undo in reversed(undos):
        undo()


def _wants_harness(item: pytest.Item) -> bool:
    if item.get_closest_marker("flows") is not None:
        return True
    if FLOWS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    cli = item.config.getoption("flows_all")
    return bool(cli) or ini_bool(item.config, "flows_all")


def _console_default(item: pytest.Item) -> bool:
    """Flows tests are quiet unless asked; a test that is on the harness only because of
    --flows-all keeps the frameworks' console output, which it may read with capsys."""
    if item.config.getoption("flows_console"):
        return True
    asked = item.get_closest_marker("flows") is not None or FLOWS_FIXTURES.intersection(
        getattr(item, "fixturenames", ())
    )
    return not asked


def _session_for(item: pytest.Item) -> FlowsSession:
    from pytest_flows._internal.markers import marker_settings

    config = item.config
    settings = marker_settings(item, "flows", MARKER_KWARGS, booleans=("console",))
    seed = settings.get("seed", config.getoption("flows_seed"))
    if seed is None:
        seed = 0
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.flows(seed=...) expects a whole number >= 0, got {seed!r}"
        )
    from pytest_flows._internal.errors import FlowsUsageError
    from pytest_flows._internal.runtime.network import check_allow_hosts

    try:
        marked = check_allow_hosts(
            settings.get("allow_hosts", ()), "@pytest.mark.flows(allow_hosts=...)"
        )
    except FlowsUsageError as exc:
        raise pytest.UsageError(f"{item.nodeid}: {exc}") from None
    hosts = [*config.getini("flows_allow_hosts"), *marked]
    from pytest_flows._internal.session import FlowsSession  # pydantic and friends: only when used

    grace: Any = settings.get("block_grace")
    where = "@pytest.mark.flows(block_grace=...)"
    if grace is None and str(config.getini("flows_block_grace")).strip():
        where = "ini option flows_block_grace"
        try:
            grace = float(str(config.getini("flows_block_grace")).strip())
        except ValueError:
            grace = config.getini("flows_block_grace")
    from pytest_flows._internal.runtime.liveness import check_block_grace
    from pytest_flows._internal.runtime.real_work import check_spin_limit

    spin: Any = settings.get("spin_limit")
    try:
        # Checked here, so the error names the marker or ini option the value came from.
        if grace is not None:
            grace = check_block_grace(grace, where)
        if spin is not None:
            spin = check_spin_limit(spin, "@pytest.mark.flows(spin_limit=...)")
        session = FlowsSession(
            seed=seed,
            test_id=item.nodeid,
            console=bool(settings.get("console", _console_default(item))),
            allow_hosts=hosts,
            budget=settings.get("budget"),
            block_grace=grace,
            spin_limit=spin,
        )
    except FlowsUsageError as exc:
        raise pytest.UsageError(f"{item.nodeid}: {exc}") from None
    _explore_settings(item, settings, session)
    return session


def _explore_settings(item: pytest.Item, settings: dict[str, Any], session: FlowsSession) -> None:
    from pytest_flows._internal.errors import FlowsUsageError
    from pytest_flows._internal.exploration.race_check import check_mode
    from pytest_flows._internal.runtime.schedule import decode

    try:
        schedule = settings.get("schedule", item.config.getoption("flows_schedule"))
        if schedule is not None:
            decode(schedule)
        races = settings.get("races", str(item.config.getini("flows_races")).strip() or "off")
        session.schedule, session.races = schedule, check_mode(races, "@pytest.mark.flows")
    except FlowsUsageError as exc:
        raise pytest.UsageError(f"{item.nodeid}: {exc}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _wants_harness(item):
        item.stash[SESSION_KEY] = _session_for(item).open()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    session = item.stash.get(SESSION_KEY, None)
    if session is not None:
        from pytest_flows._internal.exploration.race_check import check
        from pytest_flows._internal.markers import marker_settings

        # races="fail": a state race the runs showed fails the test (and, asked for by
        # the marker, running no flow at all is an error: nothing was checked).
        check(session, marked="races" in marker_settings(item, "flows", MARKER_KWARGS))
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield
    session = item.stash.get(SESSION_KEY, None)
    if session is not None:
        session.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    outcome: Any = yield
    report = outcome.get_result()
    if call.when == "call":
        # The fakes' teardown checks read it: a failed test shows its own error only.
        item.stash[CALL_RAISED_KEY] = call.excinfo is not None
    session = item.stash.get(SESSION_KEY, None)
    if session is not None and report.failed and call.when == "call" and session.event_count():
        report.sections.append(("pytest-flows trace", session.trace.render()))
    if session is not None and report.failed:
        from pytest_flows._internal.recording.pytest_wiring import scrub_known_secrets

        scrub_known_secrets(report)


@pytest.fixture
def flows(request: pytest.FixtureRequest) -> FlowsSession:
    """The pytest-flows harness of this test: ``flows.run(MyFlow, inputs={...})``."""
    from pytest_flows._internal.session import session_of

    return session_of(request)
