"""The toy adapter is a full citizen: registered with ``register_adapter()`` and importing
only ``pytest_flows.adapters`` (and ``pytest_flows.recorder.parts``), it gets golden
record and replay, ``--flows-cov`` with its own graph, and the flight recorder with
``flows.replay`` and ``--flows-replay``, with no file of pytest_flows naming it."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import toy_trips
import toyflow
import toyflow_adapter

import pytest_flows
from pytest_flows.recorder import read_record, record_flows

pytest_flows.register_adapter(toyflow_adapter.SPEC)

HERE = Path(__file__).parent

TRIP_TEST = """
import pytest
import toyflow
import toyflow_adapter

import pytest_flows
from pytest_flows import call_tool

pytest_flows.register_adapter(toyflow_adapter.SPEC)


class Trip(toyflow.Flow):
    tools = {"weather": lambda city: "real"}

    @toyflow.step
    def plan(self):
        choice = self.llm("Which city?", tools=("weather",))
        return self.tool(choice["tool"], **choice["args"])

    STEPS

    @toyflow.step
    def summary(self):
        return self.llm("Summarize")


@pytest.mark.golden
def test_trip(flows, fake_llm, fake_tools):
    fake_llm.reply(call_tool("weather", city="Paris"), "Paris: sunny")
    fake_tools.on("weather").reply("sunny")
    assert flows.run(Trip).output == "Paris: sunny"
"""


def test_golden_records_and_replays_a_toy_flow(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy_golden=TRIP_TEST.replace("STEPS", ""))
    recorded = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    recorded.assert_outcomes(passed=1)
    golden = json.loads(
        (pytester.path / "__goldens__" / "test_toy_golden" / "test_trip.json").read_text()
    )
    [run] = golden["runs"]
    assert (run["framework"], run["flow"], run["steps"]) == ("toyflow", "Trip", ["plan", "summary"])
    assert "method finished summary value='Paris: sunny'" in run["trace"]

    replayed = pytester.runpytest_inprocess("-p", "no:randomly")
    replayed.assert_outcomes(passed=1)

    # Today's flow has a step more: the toy's golden part reports the topology break.
    extra = "@toyflow.step\n    def check(self):\n        return 'ok'\n"
    pytester.makepyfile(test_toy_golden=TRIP_TEST.replace("STEPS", extra))
    broken = pytester.runpytest_inprocess("-p", "no:randomly")
    broken.assert_outcomes(failed=1)
    broken.stdout.fnmatch_lines(["*[[]topology[]] run 1 (Trip): the flow's steps changed*"])


COVERAGE_TEST = """
import toyflow
import toyflow_adapter

import pytest_flows

pytest_flows.register_adapter(toyflow_adapter.SPEC)


class Checkout(toyflow.Flow):
    @toyflow.step
    def cart(self):
        return "cart"

    @toyflow.step
    def pay(self):
        if self.state.get("declined"):
            raise RuntimeError("card declined")
        return "paid"

    @toyflow.step
    def ship(self):
        return "shipped"


def test_declined(flows):
    run = flows.run(Checkout, inputs={"declined": True}, raise_on_error=False)
    assert run.error is not None
"""


def test_flows_cov_counts_a_toy_flow_on_its_own_graph(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_cov_toy=COVERAGE_TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")
    result.assert_outcomes(passed=1)
    data = json.loads((pytester.path / "cov.json").read_text())
    [flow] = data["flows"]
    assert (flow["key"], flow["covered"], flow["total"]) == ("test_cov_toy.Checkout", 1, 3)
    result.stdout.fnmatch_lines(["*- flows coverage: 1/3 items, 33% -*"])


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A "production" run of toy_trips.Trip, recorded: its model, human and tools are
    the deployment's own (stand-ins here), no harness in sight."""
    directory = tmp_path_factory.mktemp("toy-records")
    replies = iter([{"tool": "weather", "args": {"city": "Lisbon"}}, "Lisbon, approved"])
    config = toyflow.config
    saved = (config.llm, config.human)
    config.llm = lambda flow, prompt, tools: next(replies)
    config.human = lambda flow, question: "yes"
    try:
        with record_flows(directory, frameworks=["toyflow"]) as recorder:
            assert toy_trips.Trip().kickoff() == "Lisbon, approved"
    finally:
        config.llm, config.human = saved
    [path] = recorder.written
    yield path


def test_the_recorder_records_a_toy_run(production: Path) -> None:
    record = read_record(production)
    assert (record.framework, record.target, record.outcome) == (
        "toyflow",
        "toy_trips:Trip",
        "finished",
    )
    kinds = [entry["kind"] for entry in record.entries]
    assert kinds.count("llm.request") == 2 and "human.answered" in kinds


def test_flows_replay_replays_a_recorded_toy_run(flows: Any, production: Path) -> None:
    result = flows.replay(production, toy_trips.Trip)
    run = result.check()
    assert run.output == "Lisbon, approved"
    assert run.state["city"] == "Lisbon"


def test_flows_replay_reports_where_todays_toy_flow_diverges(
    flows: Any, production: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def summary(self: Any) -> Any:
        return self.llm(f"Summarize the journey to {self.state['city']}")

    summary._toy_step = True  # type: ignore[attr-defined]
    monkeypatch.setattr(toy_trips.Trip, "summary", summary)
    result = flows.replay(production, toy_trips.Trip)
    assert result.first is not None
    assert "journey" in result.report()


def test_flows_replay_option_collects_a_toy_record(
    pytester: pytest.Pytester, production: Path
) -> None:
    run_id = read_record(production).run_id
    result = pytester.runpytest_inprocess(
        f"--flows-replay={production.parent}",
        "--flows-replay-allow=toy_trips",
        "-p",
        "no:randomly",
        "-v",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*test_replay?{run_id}?*PASSED*"])


def test_the_toy_adapter_imports_only_the_kits() -> None:
    allowed = {"pytest_flows.adapters", "pytest_flows.recorder.parts"}
    for name in ("toyflow_adapter.py", "toyflow_recorder.py"):
        tree = ast.parse((HERE / name).read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_flows")
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
            if alias.name.startswith("pytest_flows")
        }
        assert imported <= allowed, (name, imported)


def test_the_recorder_parts_seams_are_declared_and_resolve() -> None:
    from pytest_flows.adapters import Seam

    seams = list(toyflow_adapter.ADAPTER.seams())
    assert all(isinstance(seam, Seam) for seam in seams)
    assert {seam.target for seam in seams} == {
        f"toyflow:Flow.{name}" for name in ("kickoff", "llm", "ask", "tool")
    }


def test_a_record_of_a_framework_without_an_adapter_says_how_to_register_one(
    flows: Any, production: Path
) -> None:
    import dataclasses

    from pytest_flows import FlowsUsageError

    record = read_record(production)
    record = dataclasses.replace(record, header={**record.header, "framework": "nowhere"})
    with pytest.raises(FlowsUsageError, match=r"no adapter with a recorder part.*'nowhere'"):
        flows.replay(record, toy_trips.Trip)
    with pytest.raises(ValueError, match=r"unknown \['nowhere'\]; the frameworks are .*toyflow"):
        record_flows(production.parent, frameworks=["nowhere"])


def test_a_recorder_part_names_what_a_replay_is_given() -> None:
    from pytest_flows.adapters import RecorderPart

    with pytest.raises(ValueError, match="the flow 'class' or a 'factory'"):
        RecorderPart(module="toyflow_recorder", target="instance")
