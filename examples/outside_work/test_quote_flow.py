"""Real work outside the scheduler holds virtual time; a spinning thread yields."""

from __future__ import annotations

import pytest
from quote_flow import QuoteFlow, Spinner

from pytest_flows import FlowsDeadlockError


def test_the_sdk_answer_arrives_instead_of_an_invented_timeout(flows):
    run = flows.run(QuoteFlow)

    assert run.output == "41.5 (in stock)"  # what the bare runtime gives, every time
    assert "clock held thread 'pricing-io'" in run.trace.lines()


def test_the_same_result_on_the_bare_runtime():
    # The comparison the harness is held to: plain crewAI, no plugin in the way.
    assert QuoteFlow().kickoff() == "41.5 (in stock)"


@pytest.mark.flows(spin_limit=0.5)
def test_a_thread_spinning_with_no_one_to_wait_for_is_named(flows):
    with pytest.raises(FlowsDeadlockError, match="wait_for_ever"):
        flows.run(Spinner)
