"""The pytest plugin: options, markers, hooks and fixtures. It wires; it does not implement."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_flows import _imports, recording, syrupy_extension
from pytest_flows._markers import marker_settings
from pytest_flows._stash import SESSION_KEY
from pytest_flows.adapters import ADAPTERS, AdapterSpec, load_adapter
from pytest_flows.coverage import plugin as flows_coverage
from pytest_flows.fakes import conversation, fake_crews, fake_llm, flow_store, human  # noqa: F401
from pytest_flows.loop import DeterministicEventLoopPolicy

if TYPE_CHECKING:
    from pytest_flows.session import FlowsSession
from pytest_flows.recording import llm_cassette  # noqa: F401

#: Fixtures whose use puts a test on the harness.
FLOWS_FIXTURES = frozenset(
    {"flows", "flow_store", "fake_llm", "fake_crews", "human", "conversation"}
)
#: Keyword arguments ``@pytest.mark.flows(...)`` accepts.
MARKER_KWARGS = ("seed", "allow_hosts", "console")

_RESTORE = pytest.StashKey[list[Any]]()
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY")


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
    parser.addini("flows_seed", "default scheduler seed", default="0")
    parser.addini("flows_allow_hosts", "extra hosts flows tests may connect to", type="linelist")
    syrupy_extension.addoption(parser)
    recording.addoption(parser)
    flows_coverage.addoption(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before conftest files load: a conftest that imports crewai must already
    # see the isolated environment, the loop policy and the import hooks.
    _install(early_config)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "flows(seed=None, allow_hosts=(), console=False): run this test on the pytest-flows "
        "harness (deterministic loop, fixed ids and clock, offline) with these settings",
    )
    if config.getoption("flows_seed") is None:
        config.option.flows_seed = _ini_seed(config)
    _install(config)
    syrupy_extension.configure(config)
    recording.configure(config)
    flows_coverage.configure(config)


def _install(config: pytest.Config) -> None:
    if _RESTORE in config.stash:
        return
    restore: list[Any] = []
    config.stash[_RESTORE] = restore
    _isolate_environment(restore)
    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(DeterministicEventLoopPolicy())
    restore.append(lambda: asyncio.set_event_loop_policy(previous))
    for spec in ADAPTERS:
        # Configure each adapter as soon as its framework is imported: crewai
        # binds storage backends at import time of the user's flow modules.
        _imports.when_imported(spec.framework, _loader_for(spec))


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
    env: dict[str, str] = {}
    for spec in ADAPTERS:
        if importlib.util.find_spec(spec.framework) is not None:
            env.update(spec.environment)
    if not env:
        return
    # A fresh directory, removed at the end of the session. Not inside pytest's
    # basetemp: that is created (and emptied) only later, after conftests load.
    base = Path(tempfile.mkdtemp(prefix="pytest-flows-"))
    restore.append(lambda: shutil.rmtree(base, ignore_errors=True))
    for sub in ("data", "cache", "config"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        XDG_DATA_HOME=str(base / "data"),
        XDG_CACHE_HOME=str(base / "cache"),
        XDG_CONFIG_HOME=str(base / "config"),
        CREWAI_STORAGE_DIR="pytest-flows",
    )
    # Keys in the environment would let an unscripted call reach a provider.
    unset = [k for k in _PROVIDER_KEYS if k in os.environ]
    saved = {k: os.environ.get(k) for k in [*env, *unset]}
    os.environ.update(env)
    for key in unset:
        del os.environ[key]

    def undo() -> None:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    restore.append(undo)


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
    return bool(cli) or bool(item.config.getini("flows_all"))


def _session_for(item: pytest.Item) -> FlowsSession:
    config = item.config
    settings = marker_settings(item, "flows", MARKER_KWARGS)
    seed = settings.get("seed", config.getoption("flows_seed"))
    if seed is None:
        seed = 0
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.flows(seed=...) expects a whole number >= 0, got {seed!r}"
        )
    from pytest_flows.errors import FlowsUsageError
    from pytest_flows.network import check_allow_hosts

    try:
        marked = check_allow_hosts(
            settings.get("allow_hosts", ()), "@pytest.mark.flows(allow_hosts=...)"
        )
    except FlowsUsageError as exc:
        raise pytest.UsageError(f"{item.nodeid}: {exc}") from None
    hosts = [*config.getini("flows_allow_hosts"), *marked]
    from pytest_flows.session import FlowsSession  # pydantic and friends: only when used

    return FlowsSession(
        seed=seed,
        test_id=item.nodeid,
        console=bool(settings.get("console", config.getoption("flows_console"))),
        allow_hosts=hosts,
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _wants_harness(item):
        item.stash[SESSION_KEY] = _session_for(item).open()


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
    session = item.stash.get(SESSION_KEY, None)
    if session is not None and report.failed and call.when == "call" and session.event_count():
        report.sections.append(("pytest-flows trace", session.trace.render()))


@pytest.fixture
def flows(request: pytest.FixtureRequest) -> FlowsSession:
    """The pytest-flows harness of this test: ``flows.run(MyFlow, inputs={...})``."""
    from pytest_flows.session import session_of

    return session_of(request)
