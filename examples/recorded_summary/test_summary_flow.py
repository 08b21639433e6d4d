"""The tests a user writes for the release-notes summarizer.

``test_the_recorded_run`` makes real HTTP calls the first time it runs and
records them in ``cassettes/test_summary_flow/test_the_recorded_run.yaml``;
from then on (and always in CI) it replays them offline. The other tests script
the model with ``fake_llm``. Both kinds compare their trace with a snapshot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from standin_openai import StandInOpenAI
from summary_flow import ReleaseSummaryFlow

CHANGELOG = """\
- Added dark mode
- Sync is 3x faster
- New: export to PDF
- Fixed: login loop on expired sessions"""

CASSETTE = Path(__file__).parent / "cassettes" / "test_summary_flow" / "test_the_recorded_run.yaml"


@pytest.fixture
def openai_endpoint(llm_cassette, monkeypatch):
    """While the cassette is (re)recorded, the calls go to a stand-in server on
    this machine. A replay connects to nothing."""
    if llm_cassette.replay_only:
        yield
        return
    with StandInOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-example-recording-key-0000")
        yield


@pytest.mark.recorded
def test_the_recorded_run(flows, openai_endpoint, llm_cassette, snapshot):
    run = flows.run(ReleaseSummaryFlow, inputs={"changelog": CHANGELOG})

    assert run.output == "Dark mode, faster sync, PDF export."
    assert run.trace == snapshot
    if llm_cassette.replay_only:
        assert llm_cassette.play_count == 3  # key points, summary (streamed), shorten


def test_the_committed_cassette_holds_no_key():
    text = CASSETTE.read_text()
    assert "sk-example" not in text
    assert "authorization" not in text.lower()
    assert "Summarize for users:" in text  # the prompts are there, readable


def test_a_short_summary_is_published_as_is(flows, fake_llm, snapshot):
    fake_llm.on(method="key_points").reply("- Added dark mode")
    fake_llm.on(method="write_summary").reply("Dark mode is here.")

    run = flows.run(ReleaseSummaryFlow, inputs={"changelog": "- Added dark mode"})

    assert run.output == "Dark mode is here."
    assert run.trace == snapshot
