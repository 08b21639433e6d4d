"""Misuse gets an error that names the problem and the fix; the adapter loads lazily."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import af_workflows as wf
import pytest
from agent_framework._workflows import _edge_runner, _runner

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import _patches as patches


def test_a_builder_must_be_built_first(flows):
    builder = wf.WorkflowBuilder(start_executor=wf.Start(id="start"), name="b")
    with pytest.raises(FlowsUsageError, match=r"got a WorkflowBuilder; build the workflow first"):
        flows.run(builder, "x")


def test_a_run_needs_a_message_responses_or_a_checkpoint(flows):
    with pytest.raises(FlowsUsageError, match=r"needs something to run: a message"):
        flows.run(wf.build_triage())


def test_a_message_cannot_go_with_responses(flows):
    with pytest.raises(FlowsUsageError, match=r"got both a message and responses=\.\.\."):
        flows.run(wf.build_triage(), "hi", responses={"r": True})


def test_one_positional_message_only(flows):
    with pytest.raises(FlowsUsageError, match=r"at most one positional argument"):
        flows.run(wf.build_triage(), "hi", "there")
    with pytest.raises(FlowsUsageError, match=r"both positionally and as message="):
        flows.run(wf.build_triage(), "hi", message="there")


def test_unknown_keyword_arguments_list_the_accepted_ones(flows):
    with pytest.raises(FlowsUsageError, match=r"unknown keyword argument\(s\) inputs; .*message"):
        flows.run(wf.build_triage(), inputs={"x": 1})


def test_an_input_the_start_executor_cannot_handle_is_the_workflows_error(flows):
    run = flows.run(wf.build_triage(), 42, raise_on_error=False)

    assert isinstance(run.error, RuntimeError)
    assert "cannot handle input of type 'int'" in str(run.error)
    assert run.status == "FAILED"


def test_the_seeded_order_patch_is_undone():
    original = _runner.gather_cancelling_siblings_on_error
    with patches.ordered_deliveries(lambda items: items[::-1]):
        assert _runner.gather_cancelling_siblings_on_error is not original
        assert _edge_runner.gather_cancelling_siblings_on_error is not original
    assert _runner.gather_cancelling_siblings_on_error is original
    assert _edge_runner.gather_cancelling_siblings_on_error is original


def test_observing_a_workflow_leaves_no_trace_on_it(flows):
    workflow = wf.build_diamond()
    runner = workflow._runner
    before = (dict(vars(runner)), dict(vars(runner.context)), dict(vars(runner.state)))

    flows.run(workflow, "hello")

    after = (dict(vars(runner)), dict(vars(runner.context)), dict(vars(runner.state)))
    assert [sorted(b) for b in before] == [sorted(a) for a in after]
    assert all("_execute_on_target" not in vars(r) for r in runner._edge_runners)


def test_importing_pytest_flows_does_not_import_agent_framework():
    code = textwrap.dedent(
        """
        import sys
        import pytest_flows, pytest_flows._internal.plugin
        print("agent_framework" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
