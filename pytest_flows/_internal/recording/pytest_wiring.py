"""The pytest side of recording: ``@pytest.mark.recorded``, ``llm_cassette``, options, keys.

A recorded test's cassette is opened before its fixtures and closed after them;
its report (failure message, captured output and logs) goes through the
recording's scrubber, so a CI log never shows a secret the recording knows.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.recording.cassette_file import RECORD_MODES
from pytest_flows._internal.recording.report_scrubbers import TEST_SCRUBBERS
from pytest_flows._internal.secrets import PROVIDER_KEYS, is_secret_env_name

if TYPE_CHECKING:
    # The plugin imports this module at start-up, for every pytest run: cassettes (and
    # vcrpy) load when a test records or replays, the scrubber when a report or a
    # cassette needs it, the marker and file-name helpers when a test records.
    from pytest_flows._internal.recording.cassette import Recording
    from pytest_flows._internal.recording.scrub import Scrubber

__all__ = [
    "addoption",
    "cassette_path",
    "configure",
    "in_ci",
    "llm_cassette",
    "scrub_known_secrets",
]

_STARTED_KEYS: dict[str, str] = {}
MARKER_KWARGS = ("cassette", "record_mode", "match_on", "allow_unused")


def scrub_known_secrets(report: pytest.TestReport) -> None:
    """Remove every secret the session started with (or the environment holds now), in
    any spelling, from what pytest prints for a failed flows test: its failure, the
    trace section, captured output and logs. A run's inputs and outputs may hold a key
    the test passed along, and pytest's assertion rewriting would print it."""
    from pytest_flows._internal.recording.scrub import Scrubber

    _scrub_report(report, Scrubber(_STARTED_KEYS.values()))


def addoption(parser: pytest.Parser) -> None:
    # The plugin hides provider keys from tests before conftests load; keep
    # them for tests that record real calls (and to scrub them everywhere).
    _STARTED_KEYS.update({k: v for k, v in os.environ.items() if v and is_secret_env_name(k)})
    group = parser.getgroup("flows")
    group.addoption(
        "--flows-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="record mode of @pytest.mark.recorded tests (vcrpy's): once (default; none "
        "when CI is set), new_episodes, none, all",
    )
    parser.addini(
        "flows_record_mode", "record mode of recorded tests when CI is not set", default="once"
    )


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "recorded(cassette=None, record_mode=None, match_on=None, allow_unused=False): record "
        "this test's HTTP traffic (real LLM calls) to cassettes/<module>/<test>.yaml once and "
        "replay it offline afterwards",
    )
    if not config.pluginmanager.has_plugin("pytest-flows-recording"):
        config.pluginmanager.register(_RecordingHooks(), "pytest-flows-recording")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def _record_mode(item: pytest.Item, kwargs: dict[str, Any]) -> str:
    cli = item.config.getoption("flows_record_mode", None)
    if cli is not None:
        return str(cli)
    if in_ci():
        return "none"
    if kwargs.get("record_mode") is not None:
        return str(kwargs["record_mode"])
    return str(item.config.getini("flows_record_mode") or "once").strip()


def cassette_path(item: pytest.Item, name: str | None = None) -> Path:
    """``<test dir>/cassettes/<module>/<test>.yaml`` (or ``name`` in that folder)."""
    module = Path(str(item.path))
    folder = module.parent / "cassettes" / module.stem
    if name is None:  # the test's own file: classes and escaped parametrize ids included
        from pytest_flows._internal.file_names import item_file_stem

        return folder / f"{item_file_stem(item)}.yaml"
    if not isinstance(name, str) or not name:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.recorded(cassette=...) takes a file name or path, "
            f"got {name!r}"
        )
    path = Path(name)
    if not path.is_absolute():
        path = folder / re.sub(r"[^\w.\-\[\]/]", "_", name)
    return path if path.suffix in {".yaml", ".yml"} else path.with_name(path.name + ".yaml")


def _wants_recording(item: pytest.Item) -> bool:
    return item.get_closest_marker("recorded") is not None or "llm_cassette" in getattr(
        item, "fixturenames", ()
    )


def _marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    from pytest_flows._internal.markers import marker_settings

    return marker_settings(
        item, "recorded", MARKER_KWARGS, positional="cassette", booleans=("allow_unused",)
    )


def _allow_host(item: pytest.Item) -> Callable[[str], bool]:
    """What the test's network guard lets through (looked up when a request is recorded)."""

    def allow(host: str) -> bool:
        from pytest_flows._internal.runtime.network import loopback_only
        from pytest_flows._internal.stash import SESSION_KEY

        session = item.stash.get(SESSION_KEY, None)
        if session is None:  # not a flows test: no guard to agree with
            return True
        return loopback_only(session.allow_hosts)(host, None)

    return allow


class _Active:
    """A recording test's open cassette. A plain class, not a dataclass: building one
    costs about 0.25 ms, and this module loads at every start-up."""

    __slots__ = ("context", "failed", "recording", "stack")

    def __init__(self, stack: contextlib.ExitStack, context: Any, recording: Recording) -> None:
        self.stack, self.context, self.recording = stack, context, recording
        self.failed = False


_ACTIVE = pytest.StashKey[_Active]()
#: Outlive the cassettes: the teardown report is scrubbed too.
_SCRUBBERS = pytest.StashKey[list["Scrubber"]]()
_SCRUBBERS_TOKEN = pytest.StashKey[contextvars.Token[list["Scrubber"] | None]]()


@contextlib.contextmanager
def _provider_keys(may_record: bool) -> Iterator[None]:
    """While a test may record: the keys the session started with. Replay only: placeholders.

    Every provider key, and every secret-looking variable the session started
    with, gets the same placeholder: a flow that puts one in a request sends the
    placeholder, which is scrubbed like the real value, so the request still matches.
    """
    from pytest_flows._internal.recording.scrub import REPLAY_KEY

    added = []
    for key in sorted({*PROVIDER_KEYS, *_STARTED_KEYS}):
        if os.environ.get(key):
            continue
        value = _STARTED_KEYS.get(key) if may_record else REPLAY_KEY
        if value:
            os.environ[key] = value
            added.append(key)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


class _RecordingHooks:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        # Every cassette this test opens, by marker or use_cassette, registers its scrubber.
        scrubbers: list[Scrubber] = []
        item.stash[_SCRUBBERS] = scrubbers
        item.stash[_SCRUBBERS_TOKEN] = TEST_SCRUBBERS.set(scrubbers)
        if not _wants_recording(item):
            return
        from pytest_flows._internal.recording.cassette import check_options, use_cassette
        from pytest_flows._internal.recording.matching import DEFAULT_MATCH_ON

        settings = _marker_kwargs(item)
        mode = _record_mode(item, settings)
        path = cassette_path(item, settings.get("cassette"))
        match_on = settings.get("match_on") or DEFAULT_MATCH_ON
        try:
            if settings.get("record_mode") is not None:
                # checked even when CI or the command line overrides it
                check_options(settings["record_mode"], match_on)
            mode, match_on = check_options(mode, match_on)
        except FlowsUsageError as exc:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.recorded: {exc}") from None
        may_record = mode in {"all", "new_episodes"} or (mode == "once" and not path.exists())
        stack = contextlib.ExitStack()
        stack.enter_context(_provider_keys(may_record))
        context = use_cassette(
            path,
            record_mode=mode,
            match_on=match_on,
            allow_unused=bool(settings.get("allow_unused", False)),
            allow_host=_allow_host(item),
            secrets=list(_STARTED_KEYS.values()),
        )
        try:
            recording = context.__enter__()
        except BaseException:
            stack.close()
            raise
        item.stash[_ACTIVE] = _Active(stack, context, recording)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        active = item.stash.get(_ACTIVE, None)
        if active is not None and report.failed:
            from pytest_flows._internal.recording.drift import PromptDriftError

            active.failed = True
            drifts = active.recording.drifts
            shown = call.excinfo is not None and isinstance(call.excinfo.value, PromptDriftError)
            if drifts and not shown:
                report.sections.append(("pytest-flows recording", str(drifts[0])))
        for scrubber in item.stash.get(_SCRUBBERS, ()):
            _scrub_report(report, scrubber)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            yield
        finally:
            try:
                _close_cassette(item)
            finally:
                token = item.stash.get(_SCRUBBERS_TOKEN, None)
                if token is not None:
                    del item.stash[_SCRUBBERS_TOKEN]
                    with contextlib.suppress(ValueError):  # set in another context
                        TEST_SCRUBBERS.reset(token)


def _close_cassette(item: pytest.Item) -> None:
    active = item.stash.get(_ACTIVE, None)
    if active is None:
        return
    del item.stash[_ACTIVE]
    with active.stack:
        if active.failed:
            # Keep the cassette as it was: a failed test records nothing.
            failure = RuntimeError("the test failed")
            with contextlib.suppress(RuntimeError):
                active.context.__exit__(RuntimeError, failure, None)
        else:
            active.context.__exit__(None, None, None)


def _scrub_report(report: pytest.TestReport, scrubber: Scrubber) -> None:
    """Remove known secrets from what pytest prints: failure, captured output, logs."""
    scrubber.add_environment()
    report.sections[:] = [(title, scrubber.text(text)) for title, text in report.sections]
    if report.longrepr is not None:
        text = str(report.longrepr)
        if scrubber.found_in(text):
            # Plain text loses pytest's colours; only ever done when a secret was in it.
            report.longrepr = scrubber.text(text)


@pytest.fixture
def llm_cassette(request: pytest.FixtureRequest) -> Recording:
    """The cassette of this test (requesting it turns recording on, like the marker)."""
    active = request.node.stash.get(_ACTIVE, None)
    if active is None:
        raise FlowsUsageError(
            f"{request.node.nodeid}: no cassette is active; mark the test with "
            "@pytest.mark.recorded."
        )
    recording: Recording = active.recording
    return recording
