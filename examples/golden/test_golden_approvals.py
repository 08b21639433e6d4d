"""Golden replay of a flow that checkpoints and pauses for a human.

The golden file keeps every save, checkpoint and the pending-feedback record,
and what the human answered; every later run restores each of them on today's
code and resumes it with the same answer.
"""

from __future__ import annotations

import pytest
from golden_approvals import ApprovalFlow, checkpointed


@pytest.mark.golden
def test_a_purchase_waits_for_the_manager_then_is_ordered(flows, flow_store, human):
    human.pause()  # the manager has not answered yet: the flow pauses
    inputs = {"item": "laptop", "amount": 1200}
    paused = flows.run(ApprovalFlow(checkpoint=checkpointed()), inputs=inputs)
    assert paused.state.status == "priced"

    ordered = human.resume(paused, "yes, go ahead", outcome="approved")
    assert ordered.output == "ordered laptop"
