"""A golden recorded under one --flows-seed replays under every other (issue 29, B6).

A run that paused for a human outputs ``HumanFeedbackPending(... flow '<id>' ...)``;
the flow id is a uuid the seed draws. The golden keeps the output in its normal
form, and compares normal forms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("crewai")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "golden" / "golden_approvals.py"

TEST = """
import pytest
from golden_approvals import ApprovalFlow, checkpointed


@pytest.mark.golden
def test_purchase(flows, flow_store, human):
    human.pause()
    paused = flows.run(ApprovalFlow(checkpoint=checkpointed()), inputs={"item": "pen", "amount": 3})
    assert paused.state.status == "priced"
    ordered = human.resume(paused, "fine", outcome="approved")
    assert ordered.output == "ordered pen"
"""


def test_a_paused_golden_recorded_at_seed_0_replays_under_other_seeds(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(golden_approvals=EXAMPLE.read_text(), test_purchase=TEST)
    recorded = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--flows-seed", "0", "--flows-golden-update"
    )
    recorded.assert_outcomes(passed=1)
    golden = next(pytester.path.glob("__goldens__/**/*.json")).read_text()
    assert "Human feedback pending for flow '<uuid:1>'" in golden

    for seed in ("3",):
        replayed = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-seed", seed)
        replayed.assert_outcomes(passed=1)
