"""The adapter contract (pytest_flows._internal.contract.adapters): typed hooks with defaults,
registration without a core edit (register_adapter, the entry-point group), one fake_llm type, one
reseed, and the state properties on an Agent Framework workflow through its store
backend's operations()."""

import asyncio
import sys
import textwrap
from typing import Any

import pytest

from pytest_flows._internal.contract import registry
from pytest_flows._internal.contract.adapters import (
    AdapterBase,
    AdapterSpec,
    adapter_specs,
    register_adapter,
)
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.seeding import reseeded
from pytest_flows._internal.fakes.llm_script import LLMScript


class Minimal(AdapterBase):
    name = "minimal"


def test_the_base_adapter_binds_nothing_and_explains_resume():
    adapter = Minimal()
    assert [
        hook(None, object())  # type: ignore[arg-type]
        for hook in (
            adapter.bind_llm,
            adapter.bind_human,
            adapter.bind_store,
            adapter.bind_crews,
            adapter.bind_tools,
        )
    ] == [None] * 5
    assert adapter.seams() == ()
    with pytest.raises(FlowsUsageError, match=r"human.resume\(\) does not apply to minimal"):
        adapter.resume_human(None, object(), object(), "ok", None)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match=r"Minimal\.accepts"):
        adapter.accepts(object())


def test_an_unknown_kind_of_fake_is_refused(flows):
    with pytest.raises(FlowsUsageError, match="no such kind of fake; the kinds are llm, human"):
        flows.bind("llm-ish", object())


def test_registering_is_idempotent_and_one_adapter_per_framework():
    spec = AdapterSpec("contract_fw", "contract_fw_adapter", "contract-fw", "a contract flow")
    register_adapter(spec)
    register_adapter(spec)
    assert [s for s in adapter_specs() if s.framework == "contract_fw"] == [spec]
    other = AdapterSpec("contract_fw", "elsewhere", "contract-fw", "a contract flow")
    with pytest.raises(FlowsUsageError, match="register only one of them"):
        register_adapter(other)
    with pytest.raises(FlowsUsageError, match="takes an AdapterSpec"):
        register_adapter("contract_fw_adapter")  # type: ignore[arg-type]


def test_an_entry_point_registers_an_adapter_when_the_list_is_first_needed(tmp_path, monkeypatch):
    (tmp_path / "ep_adapter_spec.py").write_text(
        "from pytest_flows.adapters import AdapterSpec\n"
        "SPEC = AdapterSpec('ep_fw', 'ep_fw_adapter', 'ep-fw', 'an entry-point flow')\n"
    )
    dist = tmp_path / "ep_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""\
            [pytest_flows.adapters]
            ep_fw = ep_adapter_spec:SPEC
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points_read", False)
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))

    assert "ep_fw" in [s.framework for s in adapter_specs()]
    assert "ep_adapter_spec" in sys.modules  # loaded only now, when the list was needed


def test_a_bad_entry_point_names_what_it_should_be(tmp_path, monkeypatch):
    (tmp_path / "ep_bad_spec.py").write_text("SPEC = 'not a spec'\n")
    dist = tmp_path / "ep_bad-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-bad\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pytest_flows.adapters]\nbad = ep_bad_spec:SPEC\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points_read", False)
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))

    with pytest.raises(FlowsUsageError, match="is a str, not an AdapterSpec"):
        adapter_specs()


# -- one fake_llm, whatever the framework ---------------------------------------------------
def test_fake_llm_is_the_same_script_type_with_crewai_imported(flows, fake_llm):
    crewai = pytest.importorskip("crewai")
    flows.ensure("crewai")  # imported after the session opened: activate (and bind) now
    assert type(fake_llm) is LLMScript
    handle = fake_llm.handle("gpt-4o", framework="crewai")
    assert isinstance(handle, crewai.BaseLLM)
    assert crewai.LLM("gpt-4o") is handle  # what the flow's code gets is the same handle
    fake_llm.reply("hi")
    assert handle.call("hello") == "hi"
    assert fake_llm.calls[0].prompt == "hello"


def test_a_handle_for_an_unbound_framework_says_which_are_bound(fake_llm):
    with pytest.raises(FlowsUsageError, match="the frameworks bound to this fake_llm are"):
        fake_llm.handle("gpt-4o", framework="nope")


# -- one reseed ---------------------------------------------------------------------------
def test_both_adapters_reseed_the_same_way(flows):
    pytest.importorskip("agent_framework")
    from pytest_flows.agent_framework import seeded

    scheduler = flows.scheduler
    with reseeded(flows.scheduler, 7):
        via_core = flows.scheduler.order(list(range(12)))
        assert flows.scheduler.seed == 7
    with seeded(flows, 7):
        assert flows.scheduler is scheduler  # crewai's race ordering holds this object
        via_agent_framework = flows.scheduler.order(list(range(12)))
    assert via_agent_framework == via_core != list(range(12))
    assert flows.scheduler.seed == 0


# -- the state properties on a workflow -----------------------------------------------------
def _counter_workflow(saves_state: bool) -> Any:
    # No `from __future__ import annotations` in this module: Agent Framework reads the
    # handler's WorkflowContext annotation, which must be a real object here.
    from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

    class Counter(Executor):
        def __init__(self) -> None:
            super().__init__(id="counter")
            self.visits = 0

        @handler
        async def step(self, n: int, ctx: WorkflowContext[int, str]) -> None:
            self.visits += 1
            ctx.set_state("last", n)
            if n >= 3:
                await ctx.yield_output(f"done at {n} after {self.visits} visits")
            else:
                await asyncio.sleep(1)
                await ctx.send_message(n + 1)

        async def on_checkpoint_save(self) -> dict[str, Any]:
            return {"visits": self.visits} if saves_state else {}

        async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
            self.visits = int(state.get("visits", 0))

    class Echo(Executor):
        @handler
        async def echo(self, n: int, ctx: WorkflowContext[int]) -> None:
            await ctx.send_message(n)

    counter, echo = Counter(), Echo(id="echo")
    return (
        WorkflowBuilder(start_executor=counter, name="counter")
        .add_edge(counter, echo)
        .add_edge(echo, counter)
        .build()
    )


def test_crash_resume_holds_for_a_workflow_that_checkpoints_its_state(flows, flow_store):
    pytest.importorskip("agent_framework")
    from pytest_flows import check_crash_resume

    check_crash_resume(
        flows, flow_store, lambda: _counter_workflow(True), inputs={"message": 1}, max_examples=8
    )


def test_crash_resume_catches_a_workflow_that_loses_executor_state(flows, flow_store):
    pytest.importorskip("agent_framework")
    from pytest_flows import CrashPoint, assert_crash_resume

    with pytest.raises(AssertionError, match="crash-resume equivalence fails") as failed:
        assert_crash_resume(
            flows,
            flow_store,
            lambda: _counter_workflow(False),
            CrashPoint(2),
            inputs={"message": 1},
        )
    assert "'done at 3 after 3 visits', continued 'done at 3 after 2 visits'" in str(failed.value)


def test_human_resume_on_a_workflow_explains_how_workflows_continue(flows, human):
    pytest.importorskip("agent_framework")
    run = flows.run(_counter_workflow(True), 3)
    with pytest.raises(FlowsUsageError, match=r"human.resume\(\) does not apply to agent_fr"):
        human.resume(run, "ok")
