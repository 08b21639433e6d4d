"""Four crews at once on virtual time; production's crash kept; garbage output."""

from __future__ import annotations

import time

from market_flow import REGIONS, LegacyMarketFlow, MarketFlow, Outlook

from pytest_flows.crewai import crew_output


def script_the_regions(fake_crews):
    for growth, region in enumerate(REGIONS, start=1):
        fake_crews.on(crew=region).reply(Outlook(region=region, growth=growth), latency=30)


def test_four_crews_of_30_seconds_finish_in_30_virtual_seconds(flows, fake_crews):
    script_the_regions(fake_crews)
    wall = time.clock_gettime(time.CLOCK_MONOTONIC)  # the harness freezes time.time & co.

    run = flows.run(MarketFlow)

    assert run.output == "emea: +1.0%; apac: +2.0%; americas: +3.0%; africa: +4.0%"
    assert flows.clock.monotonic() == 30.0  # concurrent, not 120
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - wall < 10  # and no real waiting
    # Which crew finishes first is the seed's choice, the same every run.
    finished = [e.name for e in run.trace.of_kind("crew.kickoff")]
    assert sorted(finished) == sorted(REGIONS)


def test_roles_from_yaml_match_without_their_trailing_newline(flows, fake_crews):
    script_the_regions(fake_crews)
    flows.run(MarketFlow)
    assert fake_crews.calls[0].caller["agent"] == ["emea analyst"]


def test_a_crew_that_returns_garbage_is_reported_not_crashed_on(flows, fake_crews):
    script_the_regions(fake_crews)
    fake_crews.on(crew="apac", inputs={"region": "apac"}).reply(
        crew_output(raw="I think APAC will grow!"), latency=30
    )
    fake_crews.allow_unused()  # the plain apac outlook is not needed now

    run = flows.run(MarketFlow)

    assert run.output == (
        "emea: +1.0%; unreadable outlook (I think APAC will gr); americas: +3.0%; africa: +4.0%"
    )


def test_a_sync_kickoff_in_async_code_fails_as_in_production(flows, fake_crews):
    fake_crews.reply("never used: the kickoff fails first", optional=True)

    run = flows.run(LegacyMarketFlow, raise_on_error=False)

    assert isinstance(run.error, RuntimeError)
    assert "invoked synchronously from within a running event loop" in str(run.error)
