"""Every order two scripted crews can end in, explored; the script answers each run."""

from __future__ import annotations

from crew_flow import TwoCrews

from pytest_flows import FlowsSession, explore


def script_the_crews(fake_crews) -> None:
    # Scripted once each: every run of the search meets the script as it stands here.
    fake_crews.on(crew="market").reply("demand grows")
    fake_crews.on(crew="tech").reply("chips are cheap")


def test_the_summary_follows_whichever_crew_ends_first(flows: FlowsSession, fake_crews) -> None:
    script_the_crews(fake_crews)
    found = explore(flows, TwoCrews, max_schedules=200)
    assert found.complete
    assert sorted(o.run.output for o in found.outcomes) == [
        "chips are cheap + demand grows",
        "demand grows + chips are cheap",
    ]
    # The race behind it: both crews' listeners append to state.notes.
    assert {c.field for c in found.conflicts} == {"state.notes"}
    # After the search the script is as before it: a plain run meets the same replies.
    assert sorted(flows.run(TwoCrews).state.notes) == ["chips are cheap", "demand grows"]
