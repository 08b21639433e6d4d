"""A flows suite writes nothing into the project but the documented folders (issue 29, B7):
the property helpers' hypothesis runs included (``.hypothesis/constants`` names
absolute paths of the source tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE = """
from crewai import LLM
from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from pydantic import BaseModel

from pytest_flows import check_crash_resume, check_fork_isolation


class S(BaseModel):
    id: str = ""
    n: int = 0
    done: list[str] = []


@persist()
class Steps(Flow[S]):
    @start()
    def first(self):
        if "first" not in self.state.done:
            self.state.n += 1
            self.state.done.append("first")

    @listen(first)
    def second(self):
        if "second" not in self.state.done:
            self.state.n += 1
            self.state.done.append("second")
        return LLM("gpt-4o").call(f"n={self.state.n}")


def test_crash_resume(flows, flow_store, fake_llm):
    fake_llm.auto()
    check_crash_resume(flows, flow_store, Steps, max_examples=3)


def test_fork_isolation(flows, flow_store, fake_llm):
    # Its state machine is what reaches hypothesis' cache of the source's constants.
    fake_llm.auto()
    check_fork_isolation(flows, flow_store, Steps, max_examples=2)


def test_plain_run(flows, fake_llm):
    fake_llm.auto()
    assert flows.run(Steps).state.n == 2
"""


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_a_flows_suite_writes_nothing_into_the_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytester makes the project the home directory, and importing crewai writes its
    # own files there (~/.config/crewai, its credentials key) with or without us.
    monkeypatch.setenv("HOME", str(pytester.path.parent / "home"))
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_suite=SUITE)
    before = _files(pytester.path)

    # A subprocess: hypothesis fixes its default home (the cwd) when it is imported.
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=3)
    # pytester's own: the run's basetemp (where tmp_path lives) and its captured output
    ours = ("runpytest-", "stdout", "stderr", "__pycache__")
    written = {f for f in _files(pytester.path) - before if not f.startswith(ours)}
    written = {f for f in written if "__pycache__" not in f}
    assert "\n".join(sorted(written)) == ""


def test_a_hypothesis_home_the_user_set_is_kept(tmp_path: Path) -> None:
    from hypothesis import configuration

    from pytest_flows._internal.state.strategies import private_storage

    configuration.set_hypothesis_home_dir(tmp_path)
    try:
        with private_storage():
            assert configuration.storage_directory("x").path == tmp_path / "x"
    finally:
        configuration.set_hypothesis_home_dir(None)
