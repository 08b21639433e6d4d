"""Seeds explore the orders a superstep's executors may run in: races show up."""

from __future__ import annotations

import pytest
from af_inventory import build_fixed, build_racy

from pytest_flows.agent_framework import explore_seeds


def test_the_fixed_workflow_is_the_same_under_every_seed(flows):
    exploration = explore_seeds(flows, build_fixed, 5, seeds=range(20))

    exploration.assert_deterministic()
    assert {run.output for run in exploration.runs.values()} == {"stock left: 5"}


def test_the_racy_workflow_is_caught(flows):
    exploration = explore_seeds(flows, build_racy, 5, seeds=range(20))

    # Both warehouses read stock=10; north writes 8, south writes 7: the last
    # writer wins (an update is lost), and who writes last depends on the seed.
    outputs = {run.output for run in exploration.runs.values()}
    assert outputs == {"stock left: 8", "stock left: 7"}
    with pytest.raises(AssertionError, match="different runs across seeds"):
        exploration.assert_deterministic()


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=pytest.mark.flows(seed=s)) for s in range(4)]
)
def test_the_fixed_workflow_under_the_tests_seed(flows, seed):
    # Or run a whole test under several seeds (also: pytest --flows-seed=N).
    run = flows.run(build_fixed(), 5)

    assert run.output == "stock left: 5"
    assert run.state == {"stock": 5}
