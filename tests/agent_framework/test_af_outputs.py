"""Who yielded each workflow output: output_records, outputs_from(), non_agent_outputs."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import FlowsChatClient, OutputRecord


def test_each_output_names_its_executor_and_superstep(flows):
    run = flows.run(wf.build_diamond(), "hello")

    assert run.output_records == [OutputRecord(4, "short", "SHORT:HELLO|olleh", by_agent=False)]
    assert run.outputs_from("short") == run.non_agent_outputs == run.outputs


def test_agent_responses_are_outputs_but_not_non_agent_outputs(flows, fake_llm):
    fake_llm.on(agent="weather").reply("Sunny.")

    run = flows.run(wf.build_weather(FlowsChatClient(), output_agent=True), "Oslo?")

    assert [r.executor for r in run.output_records] == ["weather"]
    assert run.output_records[0].by_agent
    assert run.outputs[0].text == "Sunny."
    assert run.non_agent_outputs == []
    assert run.outputs_from(run.flow.executors["weather"]) == run.outputs


def test_outputs_from_needs_known_executors(flows):
    run = flows.run(wf.build_diamond(), "hello")

    with pytest.raises(FlowsUsageError, match="needs the executors"):
        run.outputs_from()
    with pytest.raises(FlowsUsageError, match=r"no executor 'shrot'.*'short'"):
        run.outputs_from("shrot")
