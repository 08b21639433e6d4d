"""The tests a user writes for a flow with parallel steps, a router and slow I/O."""

from __future__ import annotations

import pytest
from triage_flow import TriageFlow


def test_an_outage_opens_an_incident(flows):
    run = flows.run(TriageFlow, inputs={"text": "The dashboard is DOWN again"})

    assert run.state.route == "incident"
    assert run.output == "We are aware of the outage and are on it."
    assert "router chose decide label=incident" in run.trace.lines()


@pytest.mark.parametrize(
    ("text", "tier", "route"),
    [
        ("site down", "enterprise", "incident"),  # an outage beats the VIP flag
        ("invoice question", "enterprise", "priority"),
        ("invoice question", "free", "standard"),
    ],
)
def test_routing(flows, text, tier, route):
    run = flows.run(TriageFlow, inputs={"text": text, "customer_tier": tier})
    assert run.state.route == route


def test_the_whole_run_reads_as_a_trace(flows):
    run = flows.run(TriageFlow, inputs={"text": "useless app", "customer_tier": "free"})

    assert run.trace.render() == (
        'flow started TriageFlow inputs={"customer_tier": "free", "text": "useless app"}\n'
        "method started receive trigger=start\n"
        "method finished receive output='useless app'\n"
        "method started check_language trigger=receive\n"
        "method started check_outage trigger=receive\n"
        "method started look_up_account trigger=receive\n"
        "method finished check_language output='checked language'\n"
        "method finished check_outage output='checked outage'\n"
        "method finished look_up_account output='looked up account'\n"
        "method started decide trigger=and(check_language, check_outage, look_up_account)"
        " via look_up_account\n"
        "method finished decide output='standard'\n"
        "router chose decide label=standard\n"
        "method started queue trigger=decide:standard\n"
        "method finished queue output='Thanks, we will get back to you within two days.'\n"
        "flow finished TriageFlow output='Thanks, we will get back to you within two days.'\n"
    )


def test_the_slow_lookup_costs_no_wall_time(flows):
    flows.run(TriageFlow, inputs={"text": "hello"})
    assert flows.clock.monotonic() == 20  # twenty virtual seconds, not real ones


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_any_order_of_the_parallel_checks_gives_the_same_result(seed):
    # Each seed picks another completion order of the parallel sync checks;
    # the flow must not depend on it. (Run the suite with --flows-seed=N too.)
    from pytest_flows import FlowsSession

    with FlowsSession(seed=seed, test_id="triage") as flows:
        run = flows.run(TriageFlow, inputs={"text": "useless, and it is down"})
    assert sorted(run.state.flags) == ["abusive", "outage"]
    assert run.state.route == "incident"


def test_an_empty_ticket_fails_with_the_flows_own_error(flows):
    with pytest.raises(ValueError, match="ticket has no text"):
        flows.run(TriageFlow, inputs={"text": "  "})

    run = flows.run(TriageFlow, inputs={"text": ""}, raise_on_error=False)
    assert run.failed
    assert run.trace.lines()[-1] == "flow failed TriageFlow error='ValueError: ticket has no text'"
