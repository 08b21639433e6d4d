"""fake_crews on real flows: scripted CrewOutputs, every kickoff entry point, declarative steps."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import crewai
import pytest
from crewai import Agent, Crew, Task
from crewai.crews.crew_output import CrewOutput
from crewai.flow.flow import Flow, listen, router, start
from crewai.tasks.output_format import OutputFormat
from crewai_versions import needs_declarative_flows
from pydantic import BaseModel

from pytest_flows._internal.fakes.script import ScriptReplyError, UnscriptedRequest
from pytest_flows.crewai._crews import RUN_FOR_REAL, SYNC_KICKOFF_IN_LOOP, crew_output


class Verdict(BaseModel):
    score: int
    summary: str


def assessment_crew() -> Crew:
    analyst = Agent(role="Analyst", goal="Assess", backstory="Sharp.", llm="gpt-4o")
    editor = Agent(role="Editor", goal="Summarise", backstory="Terse.", llm="gpt-4o")
    notes = Task(
        name="notes", description="Take notes on {topic}", expected_output="notes", agent=analyst
    )
    verdict = Task(
        name="verdict",
        description="Judge {topic}",
        expected_output="a verdict",
        agent=editor,
        output_pydantic=Verdict,
    )
    return Crew(name="assessment", agents=[analyst, editor], tasks=[notes, verdict])


class AssessFlow(Flow):  # type: ignore[type-arg]
    @start()
    def assess(self) -> Verdict:
        output = assessment_crew().kickoff(inputs={"topic": self.state.get("topic", "agents")})
        return output.pydantic  # type: ignore[return-value]

    @router(assess)
    def gate(self, verdict: Verdict) -> str:
        return "ship" if verdict.score >= 7 else "rework"

    @listen("ship")
    def publish(self) -> str:
        return "published"

    @listen("rework")
    def redo(self) -> str:
        return "back to the drawing board"


@pytest.mark.parametrize(
    ("reply", "route", "output"),
    [
        (Verdict(score=9, summary="great"), "ship", "published"),
        ({"score": 2, "summary": "thin"}, "rework", "back to the drawing board"),
        ('{"score": 7, "summary": "ok"}', "ship", "published"),
    ],
    ids=["model", "dict", "json"],
)
def test_a_crews_structured_output_drives_the_router(
    flows: Any, fake_crews: Any, reply: Any, route: str, output: str
) -> None:
    fake_crews.on(crew="assessment").reply(reply)

    run = flows.run(AssessFlow, inputs={"topic": "fakes"})

    assert run.output == output
    assert run.trace.of_kind("router.chose")[0].get("label") == route
    assert fake_crews.inputs("assessment") == [{"topic": "fakes"}]
    kickoff = fake_crews.calls[0]
    assert kickoff.caller == {
        "flow": "AssessFlow",
        "method": "assess",
        "kind": "crew",
        "crew": "assessment",
        "agent": ["Analyst", "Editor"],
        "inputs": {"topic": "fakes"},
    }
    assert kickoff.response_model is Verdict
    result: CrewOutput = kickoff.reply
    assert isinstance(result.pydantic, Verdict)
    assert result.tasks_output[-1].output_format == OutputFormat.PYDANTIC
    assert result.tasks_output[-1].agent == "Editor"


def test_the_trace_shows_the_kickoff_with_its_inputs_and_output(
    flows: Any, fake_crews: Any
) -> None:
    fake_crews.reply(Verdict(score=8, summary="fine"))
    run = flows.run(AssessFlow)
    assert run.trace.lines()[:4] == [
        "flow started AssessFlow",
        "method started assess trigger=start",
        'crew kickoff assessment method=assess inputs={"topic": "agents"} '
        'output=Verdict{"score": 8, "summary": "fine"}',
        'method finished assess output={"score": 8, "summary": "fine"}',
    ]


def test_rules_match_agent_roles_and_input_subsets(flows: Any, fake_crews: Any) -> None:
    fake_crews.on(agent="Nobody").reply("never", optional=True)
    fake_crews.on(agent="Editor", inputs={"topic": "ai"}).reply({"score": 1, "summary": "x"})
    assert flows.run(AssessFlow, inputs={"topic": "ai"}).output == "back to the drawing board"


def test_a_result_that_does_not_fit_the_last_tasks_model_says_why(
    flows: Any, fake_crews: Any
) -> None:
    fake_crews.reply({"score": "high"})
    with pytest.raises(ScriptReplyError) as caught:
        flows.run(AssessFlow)
    assert str(caught.value) == (
        "pytest-flows: crew kickoff #1 (caller: flow=AssessFlow method=assess kind=crew "
        "crew=assessment agent=[Analyst, Editor] inputs={'topic': 'agents'}) expects a Verdict "
        "(its last task's output type), and the scripted result {'score': 'high'} does not "
        "fit it: score: Input should be a valid integer, unable to parse string as an integer; "
        "summary: Field required. Reply with a Verdict(...)."
    )


def test_crew_output_scripts_every_tasks_output(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply(crew_output(tasks=["raw notes", Verdict(score=9, summary="s")]))
    run = flows.run(AssessFlow)
    result: CrewOutput = fake_crews.calls[0].reply
    assert [t.raw for t in result.tasks_output] == ["raw notes", '{"score":9,"summary":"s"}']
    assert [t.name for t in result.tasks_output] == ["notes", "verdict"]
    assert result.pydantic == Verdict(score=9, summary="s")
    assert run.output == "published"


def test_a_crew_can_run_for_real_on_the_fake_llm(
    flows: Any, fake_crews: Any, fake_llm: Any
) -> None:
    fake_crews.on(crew="assessment").run_for_real()
    fake_llm.on(agent="Analyst").reply("notes about agents")
    fake_llm.on(agent="Editor").reply({"score": 3, "summary": "meh"})

    run = flows.run(AssessFlow)

    assert run.output == "back to the drawing board"
    assert (
        run.trace.lines()[2]
        == 'crew kickoff assessment method=assess inputs={"topic": "agents"} run=real'
    )
    assert [c.caller["agent"] for c in fake_llm.calls] == ["Analyst", "Editor"]
    assert fake_llm.calls[1].caller["task"] == "verdict"
    assert "notes about agents" in str(fake_llm.calls[1].messages)


def test_a_scripted_crew_failure_fails_the_step(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply(RuntimeError("crew blew up"))
    run = flows.run(AssessFlow, raise_on_error=False)
    assert isinstance(run.error, RuntimeError)
    assert run.trace.of_kind("crew.kickoff")[0].get("error") == "'RuntimeError: crew blew up'"


class AsyncKickoffs(Flow):  # type: ignore[type-arg]
    @start()
    async def both(self) -> list[str]:
        first = await assessment_crew().kickoff_async(inputs={"topic": "a"})
        second = await assessment_crew().akickoff(inputs={"topic": "b"})
        return [first.raw, second.raw]

    @listen(both)
    def each(self, raws: list[str]) -> list[str]:
        # Sync kickoffs belong in sync methods (in an async one they fail, as in production).
        each = assessment_crew().kickoff_for_each(inputs=[{"topic": "c"}, {"topic": "d"}])
        return [*raws, *(o.raw for o in each)]


def test_every_kickoff_entry_point_is_scripted(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply(lambda r: Verdict(score=1, summary=r.caller["inputs"]["topic"]), times=4)

    run = flows.run(AsyncKickoffs)

    assert [Verdict.model_validate_json(raw).summary for raw in run.output] == ["a", "b", "c", "d"]
    assert [c.data["entry"] for c in fake_crews.calls] == [
        "kickoff_async",
        "akickoff",
        "kickoff",
        "kickoff",
    ]


def test_an_unscripted_kickoff_shows_the_crew_and_the_line_to_add(
    flows: Any, fake_crews: Any
) -> None:
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(AssessFlow)
    assert str(caught.value) == (
        "pytest-flows: unscripted crew kickoff #1: no scripted crew result matches it.\n"
        "  caller: flow=AssessFlow method=assess kind=crew crew=assessment "
        "agent=[Analyst, Editor] inputs={'topic': 'agents'}\n"
        "  tasks:\n"
        "    - 'notes'\n"
        "    - 'verdict'\n"
        "  expects: Verdict (the last task's output type)\n"
        "  script: empty (nothing was scripted on fake_crews)\n"
        "Add this line to the test to answer it:\n"
        '    fake_crews.on(crew="assessment").reply(Verdict(...))'
    )


TEMPLATE = Path(crewai.__file__).parent / "flow" / "templates" / "flow_definition_example.yaml"


@needs_declarative_flows
@pytest.mark.parametrize(
    ("decision", "followed_up"), [("followup", True), ("done", False)], ids=["followup", "done"]
)
def test_declarative_crew_and_agent_steps_are_scripted(
    flows: Any, fake_crews: Any, decision: str, followed_up: bool
) -> None:
    from crewai.flow.flow import Flow as DeclaredFlow

    flow = DeclaredFlow.from_declaration(contents=TEMPLATE.read_text())
    fake_crews.on(kind="crew", agent="Research analyst").reply("Findings.")
    fake_crews.on(agent="Follow-up router").reply(decision)
    fake_crews.on(agent="Executive communications specialist").reply("Dear board", optional=True)

    run = flows.run(flow)

    assert run.trace.of_kind("router.chose")[0].get("label") == decision
    assert ("write_followup" in run.trace.names("method.started")) is followed_up
    assert fake_crews.calls[0].data["inputs"] == {
        "topic": "AI agent orchestration",
        "audience": "platform engineering leaders",
    }
    router_step = fake_crews.calls[1]
    assert router_step.caller["kind"] == "agent"
    assert router_step.prompt == "Reviewed research: Findings."
    assert run.trace.of_kind("agent.kickoff")[0].render() == (
        "agent kickoff Follow-up router method=route_followup "
        'inputs={"input": "Reviewed research: Findings."} '
        f"output={decision!r}"
    )


class YamlCrewFlow(Flow):  # type: ignore[type-arg]
    @start()
    def assess(self) -> str:
        # What `role: >` and a folded name in YAML give: trailing newlines.
        analyst = Agent(role="Analyst\n", goal="Assess", backstory="Sharp.", llm="gpt-4o")
        task = Task(name="notes\n", description="Notes", expected_output="notes", agent=analyst)
        crew = Crew(name="assessment\n", agents=[analyst], tasks=[task])
        return str(crew.kickoff().raw)


def test_crew_role_and_task_names_match_with_whitespace_stripped(
    flows: Any, fake_crews: Any
) -> None:
    fake_crews.on(crew="assessment", agent="Analyst").reply("assessed")
    assert flows.run(YamlCrewFlow).output == "assessed"
    kickoff = fake_crews.calls[0]
    assert (kickoff.caller["crew"], kickoff.caller["agent"]) == ("assessment", ["Analyst"])
    assert kickoff.data["tasks"] == ["notes"]


def one_task_crew(name: str = "writer") -> Crew:
    writer = Agent(role="Writer", goal="Write", backstory="Brief.", llm="gpt-4o")
    task = Task(name="write", description="Write on {topic}", expected_output="text", agent=writer)
    return Crew(name=name, agents=[writer], tasks=[task])


class SyncKickoffInAsyncFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def write(self) -> str:
        # Crashes in production: a sync kickoff inside the flow's running loop.
        return str(one_task_crew().kickoff(inputs={"topic": "x"}).raw)


class SyncKickoffInSyncFlow(Flow):  # type: ignore[type-arg]
    @start()
    def write(self) -> str:
        return str(one_task_crew().kickoff(inputs={"topic": "x"}).raw)


def test_a_scripted_sync_kickoff_in_an_async_method_fails_as_crewais_does(
    flows: Any, fake_crews: Any
) -> None:
    fake_crews.reply("text")
    run = flows.run(SyncKickoffInAsyncFlow, raise_on_error=False)
    assert isinstance(run.error, RuntimeError)
    assert str(run.error).startswith(
        "Agent execution was invoked synchronously from within a running event loop."
    )
    assert "must `await crew.kickoff_async()`" in run.error.__notes__[0]
    assert run.trace.of_kind("crew.kickoff")[0].get("error", "").startswith("'RuntimeError")


def test_the_same_kickoff_in_a_sync_method_is_fine(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply("text")
    assert flows.run(SyncKickoffInSyncFlow).output == "text"


def test_a_real_sync_kickoff_in_an_async_method_fails_the_same_way(
    flows: Any, fake_crews: Any, fake_llm: Any
) -> None:
    fake_crews.reply(RUN_FOR_REAL)
    fake_llm.reply("text", optional=True)
    run = flows.run(SyncKickoffInAsyncFlow, raise_on_error=False)
    assert isinstance(run.error, RuntimeError)
    assert str(run.error) == SYNC_KICKOFF_IN_LOOP


class FourCrewsFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def fan_out(self) -> list[str]:
        crews = [one_task_crew(name) for name in ("alpha", "beta", "gamma", "delta")]
        outputs = await asyncio.gather(*(crew.kickoff_async() for crew in crews))
        return [str(o.raw) for o in outputs]


class TwoNativeAsyncCrewsFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def fan_out(self) -> list[str]:
        crews = [one_task_crew(name) for name in ("alpha", "beta")]
        outputs = await asyncio.gather(*(crew.akickoff() for crew in crews))
        return [str(o.raw) for o in outputs]


def test_four_async_crews_with_30s_latency_take_30_virtual_seconds(
    flows: Any, fake_crews: Any
) -> None:
    for name in ("alpha", "beta", "gamma", "delta"):
        fake_crews.on(crew=name).reply(f"{name} done", latency=30)
    wall = time.clock_gettime(time.CLOCK_MONOTONIC)  # the harness freezes perf_counter & co.

    run = flows.run(FourCrewsFlow)

    assert time.clock_gettime(time.CLOCK_MONOTONIC) - wall < 5  # no real half-minute
    assert run.output == ["alpha done", "beta done", "gamma done", "delta done"]
    assert flows.clock.monotonic() == 30.0
    assert run.usage.virtual_seconds == 30.0
    assert run.usage.by_method["fan_out"].virtual_seconds == 120.0  # four overlapping waits
    finished = [e.name for e in run.trace.of_kind("crew.kickoff")]
    assert sorted(finished) == ["alpha", "beta", "delta", "gamma"]


def test_native_async_kickoffs_overlap_too(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply("one", "two", latency=30)
    assert flows.run(TwoNativeAsyncCrewsFlow).output == ["one", "two"]
    assert flows.clock.monotonic() == 30.0
    assert [c.data["entry"] for c in fake_crews.calls] == ["akickoff", "akickoff"]


def _finishing_order(seed: int) -> list[str]:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows.crewai._crews import FakeCrews

    with FlowsSession(seed=seed, test_id="four-crews") as session:
        crews = FakeCrews(session)
        session.bind("crews", crews)
        for name in ("alpha", "beta", "gamma", "delta"):
            crews.on(crew=name).reply(f"{name} done", latency=30)
        run = session.run(FourCrewsFlow)
        assert session.clock.monotonic() == 30.0
        return [e.name for e in run.trace.of_kind("crew.kickoff")]


def test_the_seed_decides_the_order_the_crews_finish_in() -> None:
    orders = {seed: _finishing_order(seed) for seed in range(6)}
    assert orders[0] == ["alpha", "beta", "gamma", "delta"]  # seed 0: the order they started
    assert orders[0] == _finishing_order(0)  # the same seed, the same order
    assert orders[3] == _finishing_order(3)
    assert all(sorted(order) == ["alpha", "beta", "delta", "gamma"] for order in orders.values())
    assert len({tuple(order) for order in orders.values()}) > 1  # other seeds, other orders


class GarbageFlow(Flow):  # type: ignore[type-arg]
    @start()
    def assess(self) -> str:
        output = assessment_crew().kickoff(inputs={"topic": "x"})
        if output.pydantic is None:
            return f"unparsed: {output.raw}"
        return "parsed"


def test_crew_output_raw_returns_unparsed_text_for_a_pydantic_task(
    flows: Any, fake_crews: Any
) -> None:
    fake_crews.reply(crew_output(raw="Sure! Here is your verdict: 9/10"))
    run = flows.run(GarbageFlow)
    assert run.output == "unparsed: Sure! Here is your verdict: 9/10"
    output = fake_crews.calls[0].reply
    assert (output.pydantic, output.json_dict) == (None, None)
    assert output.tasks_output[0].output_format is OutputFormat.PYDANTIC


def test_crew_output_raw_that_fits_the_model_is_parsed(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply(crew_output(raw='{"score": 9, "summary": "fine"}'))
    assert flows.run(GarbageFlow).output == "parsed"


def test_a_reply_callable_sees_the_crew_roles_and_inputs(flows: Any, fake_crews: Any) -> None:
    fake_crews.reply(
        lambda request: (
            f"{request.caller['crew']}/{request.caller['agent'][0]}/"
            f"{request.caller['inputs']['topic']}/{request.caller['method']}"
        )
    )
    assert flows.run(SyncKickoffInSyncFlow).output == "writer/Writer/x/write"
