"""Golden replay and a state migration check for the ticket flow.

Record (or accept a change) with ``pytest examples/golden --flows-golden-update``;
every other run restores the saves in ``__goldens__/`` on today's code.
"""

from __future__ import annotations

import pytest
from golden_tickets import TicketFlow
from pydantic import BaseModel

from pytest_flows import assert_resumes_old_states


@pytest.mark.golden
def test_urgent_ticket(flows, flow_store):
    run = flows.run(TicketFlow, inputs={"subject": "db down", "severity": 3})
    assert run.output == "paged on-call for 'db down'"


@pytest.mark.golden
def test_normal_ticket(flows, flow_store):
    run = flows.run(TicketFlow, inputs={"subject": "typo", "severity": 1})
    assert run.output == "queued 'typo'"


class TicketStateV0(BaseModel):
    """What the state looked like before ``reply`` existed."""

    subject: str = ""
    severity: int = 1


def test_states_of_the_previous_model_still_resume(flows, flow_store):
    def check(old, run):
        assert run.state["subject"] == old["subject"]
        assert run.output.endswith(repr(old["subject"]))

    assert_resumes_old_states(flows, flow_store, TicketFlow, TicketStateV0, check=check)
