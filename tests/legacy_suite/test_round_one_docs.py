"""Tests as a user wrote them from the first round's pages (docs/*.md at 9da8b68):
every import is the path those pages showed. Do not modernise them: they pin that
last month's suites still pass (tests/test_legacy_suite.py runs this folder; the
same file passes on the first round's own code).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crewai import LLM
from crewai.flow.flow import Flow, listen, start
from dispatch_flows import Race, SyncRace
from pydantic import BaseModel
from summary_flow import ReleaseSummaryFlow

from pytest_flows.crewai.crews import crew_output
from pytest_flows.crewai.patches import check_patch_points
from pytest_flows.errors import FlowsUsageError
from pytest_flows.races import explore, race_of
from pytest_flows.recording import use_cassette
from pytest_flows.replies import ProviderError, RateLimitError, call_tool, stream
from pytest_flows.script import UnscriptedRequest
from pytest_flows.snapshot import FlowsSnapshotExtension, normalized, snapshot_text
from pytest_flows.store import CrashPoint, SimulatedCrash
from pytest_flows.strategies import check_time_travel
from pytest_flows.syrupy_extension import FlowsSnapshotExtension as ExtensionFromItsModule

CASSETTE = Path(__file__).parent / "cassettes" / "summary.yaml"
CHANGELOG = """\
- Added dark mode
- Sync is 3x faster
- New: export to PDF
- Fixed: login loop on expired sessions"""


class Note(BaseModel):
    text: str = ""
    steps: list[str] = []


class AskOnce(Flow[Note]):
    @start()
    def ask(self) -> str:
        self.state.text = str(LLM(model="gpt-4o").call("Say hello"))
        self.state.steps.append("ask")
        return self.state.text

    @listen(ask)
    def done(self, text: str) -> str:
        self.state.steps.append("done")
        return text.upper()


# -- fake-llm.md: what a reply can be ------------------------------------------------
def test_a_streamed_reply_is_the_joined_text(flows, fake_llm):
    fake_llm.reply(stream(["Hel", "lo"], interval=0.5))
    run = flows.run(AskOnce)
    assert run.output == "HELLO"


def test_a_rate_limit_is_retried_on_virtual_time(flows, fake_llm):
    fake_llm.reply(RateLimitError(retry_after=20), "hello")
    run = flows.run(AskOnce)
    assert run.output == "HELLO"
    assert len(fake_llm.calls) == 2


def test_a_provider_error_fails_the_run(flows, fake_llm):
    fake_llm.reply(ProviderError("upstream down", status_code=503))
    run = flows.run(AskOnce, raise_on_error=False)
    assert run.failed
    assert "upstream down" in str(run.error)


def test_call_tool_builds_a_tool_call():
    call = call_tool("search_web", query="agents")
    assert call.name == "search_web"
    assert call.arguments == {"query": "agents"}


def test_an_unscripted_call_fails_the_test(flows, fake_llm):
    with pytest.raises(UnscriptedRequest, match="unscripted LLM call"):
        flows.run(AskOnce)


# -- snapshots.md: races -------------------------------------------------------------
def test_the_fast_path_wins(flows):
    race = race_of(flows.run(Race))
    assert race.won == "fast_path"
    assert race.cancelled == ("slow_path",)
    assert race.fired == (("finish", "fast_path"),)


def test_exploring_seeds_finds_every_winner(flows):
    outcomes = explore(flows, SyncRace, seeds=range(48))
    assert outcomes.winners == {"alpha", "beta", "gamma"}
    assert outcomes.seeds == tuple(range(48))


def test_explore_without_seeds_runs_eight_seeds(flows):
    outcomes = explore(flows, Race)
    assert outcomes.seeds == tuple(range(8))
    assert outcomes.winners == {"fast_path"}


# -- snapshots.md: configuration, text ---------------------------------------------------
def test_the_extension_is_importable_from_both_modules(snapshot):
    assert FlowsSnapshotExtension is ExtensionFromItsModule
    assert snapshot.use_extension(FlowsSnapshotExtension) is not None


def test_snapshot_text_and_normalized(flows):
    run = flows.run(SyncRace)
    text = snapshot_text(run.trace)
    assert text.startswith("Trace\n")
    assert "flow started SyncRace" in text
    data = normalized({"id": "4c1f0a3e-7f7e-4d7a-9b1e-2d7d1f0a9c11", "n": 1})
    assert data == {"id": "<uuid:1>", "n": 1}


# -- recording.md: use_cassette ------------------------------------------------------
def test_a_cassette_replays_offline(flows, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-replay-only")  # the provider wants one
    with use_cassette(CASSETTE, record_mode="none") as recording:
        run = flows.run(ReleaseSummaryFlow, inputs={"changelog": CHANGELOG})
    assert run.output == "Dark mode, faster sync, PDF export."
    assert recording.play_count == 3


# -- state.md: properties, crash points ----------------------------------------------
class Counter(BaseModel):
    count: int = 0


class CountFlow(Flow[Counter]):
    @start()
    def one(self) -> int:
        self.state.count += 1
        return self.state.count

    @listen(one)
    def two(self, _: int) -> int:
        self.state.count += 1
        return self.state.count


def test_time_travel_property(flows, flow_store):
    check_time_travel(flows, flow_store, CountFlow, max_examples=5)


def test_crash_points_and_simulated_crash():
    point = CrashPoint(2, "after")
    assert (point.save, point.when) == (2, "after")
    assert issubclass(SimulatedCrash, BaseException)


# -- errors, adapters ------------------------------------------------------------------
def test_the_error_types():
    assert issubclass(FlowsUsageError, TypeError)


def test_the_adapter_helpers_are_there():
    assert callable(crew_output)
    check_patch_points()  # raises, naming the seam, when crewai moved one
