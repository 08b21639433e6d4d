"""The ``--flows-cov`` collector: per-test counting, xdist combining, reports."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_flows._internal.coverage import notes
from pytest_flows._internal.coverage.counting import count
from pytest_flows._internal.coverage.data import CoverageData
from pytest_flows._internal.stash import SESSION_KEY

__all__ = ["FlowsCoverage"]

_NOTES = pytest.StashKey[contextlib.ExitStack]()
_STARTED = pytest.StashKey[list[notes.Started]]()
#: Key of a worker's data in xdist's ``workeroutput``.
WORKER_KEY = "pytest_flows_cov"


class FlowsCoverage:
    """The coverage collector of one pytest run (a worker's, under xdist)."""

    def __init__(self, config: pytest.Config, threshold: float | None) -> None:
        self.config = config
        self.threshold = threshold
        self.data = CoverageData()
        self.failed_under = False
        self.written: list[str] = []

    @property
    def _is_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    # -- per test ------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        stack = contextlib.ExitStack()
        item.stash[_STARTED] = stack.enter_context(notes.collecting())
        item.stash[_NOTES] = stack
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield
        stack = item.stash.get(_NOTES, None)
        if stack is None:
            return
        stack.close()
        started = item.stash[_STARTED]
        session = item.stash.get(SESSION_KEY, None)
        if session is None or not started:
            return
        for note in started:
            if note.problem:
                self.data.problems.add(
                    f"could not read the structure of {note.name!r}: {note.problem}"
                )
        self.data.add_test(item.nodeid, count(session.trace, started))

    # -- xdist -----------------------------------------------------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if output:
            self.data.merge(CoverageData.from_json(json.loads(output)))

    # -- the end ---------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self._is_worker:
            workeroutput: dict[str, Any] = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput[WORKER_KEY] = json.dumps(self.data.to_json())
            return
        option = self.config.option
        from pytest_flows._internal.secret_check import secret_values_in

        leaked = secret_values_in(json.dumps(self.data.to_json(), ensure_ascii=False))
        if leaked and (option.flows_cov_json or option.flows_cov_html):
            # a test id or a label holds a secret: the report is committed or published
            self.written.append(
                f"coverage report NOT written: it would hold the value of ${', $'.join(leaked)} "
                "(in a test id, flow or label name); keep credentials out of parametrize ids"
            )
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        if option.flows_cov_json:
            path = Path(option.flows_cov_json)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.data.to_json(), indent=2) + "\n", encoding="utf-8")
            self.written.append(f"JSON written to {path}")
        if option.flows_cov_html:
            from pytest_flows._internal.coverage.html import write_html

            index = write_html(self.data, Path(option.flows_cov_html))
            self.written.append(f"HTML written to {index}")
        if self.threshold is not None and self.data.percent() < self.threshold:
            self.failed_under = True
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._is_worker:
            return
        from pytest_flows._internal.coverage.report import percent_text, report_lines

        covered, total = self.data.totals()
        terminalreporter.write_sep(
            "-", f"flows coverage: {covered}/{total} items, {percent_text(self.data.percent())}"
        )
        for line in report_lines(self.data):
            terminalreporter.write_line(line)
        for line in self.written:
            terminalreporter.write_line(line)
        if self.threshold is not None:
            verdict = (
                f"FAIL Required flow-graph coverage of {self.threshold:g}% not reached. "
                f"Total coverage: {self.data.percent():.2f}%"
                if self.failed_under
                else f"Required flow-graph coverage of {self.threshold:g}% reached. "
                f"Total coverage: {self.data.percent():.2f}%"
            )
            terminalreporter.write_line(verdict, red=self.failed_under, green=not self.failed_under)
