"""The human fixture on real flows: @human_feedback (console and provider paths), ask(), pause."""

from __future__ import annotations

from typing import Any

import pytest
from crewai.flow.async_feedback.types import HumanFeedbackPending, PendingFeedbackContext
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.script import ScriptReplyError, UnscriptedRequest

OUTCOMES = ["approved", "rejected", "needs_changes"]


class ReviewFlow(Flow):  # type: ignore[type-arg]
    """Console path: the decorator names no provider."""

    @start()
    @human_feedback(message="Approve this draft?", emit=OUTCOMES, llm="gpt-4o-mini")
    def draft(self) -> str:
        return "Draft v1"

    @listen("approved")
    def publish(self) -> str:
        return "published"

    @listen("rejected")
    def discard(self) -> str:
        return "discarded"

    @listen("needs_changes")
    def revise(self) -> str:
        return "revised"


class SlackProvider:
    """What a production provider does: post the request and pause."""

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        raise HumanFeedbackPending(context=context)


class ProviderReviewFlow(Flow):  # type: ignore[type-arg]
    """Provider path: the decorator names a custom provider."""

    @start()
    @human_feedback(
        message="Approve this draft?",
        emit=OUTCOMES,
        llm="gpt-4o-mini",
        default_outcome="rejected",
        provider=SlackProvider(),
    )
    def draft(self) -> str:
        return "Draft v1"

    @listen("approved")
    def publish(self) -> str:
        return "published"

    @listen("rejected")
    def discard(self) -> str:
        return "discarded"

    @listen("needs_changes")
    def revise(self) -> str:
        return "revised"


ROUTES = {"approved": "published", "rejected": "discarded", "needs_changes": "revised"}


@pytest.mark.parametrize("flow", [ReviewFlow, ProviderReviewFlow], ids=["console", "provider"])
@pytest.mark.parametrize("outcome", OUTCOMES)
def test_each_outcome_routes_to_its_listener(
    flows: Any, human: Any, flow: type, outcome: str
) -> None:
    human.on(method="draft").answer("my verdict", outcome=outcome)

    run = flows.run(flow)

    assert run.output == ROUTES[outcome]
    assert run.trace.of_kind("human.feedback")[0].render() == (
        f"human feedback draft message='Approve this draft?' answer='my verdict' outcome={outcome}"
    )
    assert run.flow.last_human_feedback.feedback == "my verdict"
    assert run.flow.last_human_feedback.outcome == outcome
    assert human.requests[0].data["output"] == "Draft v1"


def test_free_text_feedback_is_classified_by_the_fake_llm(
    flows: Any, human: Any, fake_llm: Any
) -> None:
    human.answer("Please tighten the intro")
    fake_llm.on(purpose="feedback").reply({"outcome": "needs_changes"})

    run = flows.run(ReviewFlow)

    assert run.output == "revised"
    classification = fake_llm.calls[0]
    assert classification.caller["method"] == "draft"
    assert classification.caller["model"] == "gpt-4o-mini"
    assert classification.data == {"outcomes": OUTCOMES, "feedback": "Please tighten the intro"}
    assert "Please tighten the intro" in classification.prompt


@pytest.mark.parametrize(
    ("flow", "route"), [(ReviewFlow, "published"), (ProviderReviewFlow, "discarded")]
)
def test_an_empty_answer_takes_the_default_outcome(
    flows: Any, human: Any, flow: type, route: str
) -> None:
    human.answer("")
    assert flows.run(flow).output == route


def test_an_outcome_the_step_does_not_emit_is_refused(flows: Any, human: Any) -> None:
    human.answer(outcome="maybe")
    with pytest.raises(ScriptReplyError) as caught:
        flows.run(ReviewFlow)
    assert str(caught.value) == (
        "pytest-flows: human.answer(outcome=\"maybe\") names outcome 'maybe', which the step "
        "does not emit; its outcomes are approved, rejected, needs_changes."
    )


@pytest.mark.parametrize("flow", [ReviewFlow, ProviderReviewFlow], ids=["console", "provider"])
def test_pause_then_resume_with_an_explicit_outcome(flows: Any, human: Any, flow: type) -> None:
    human.pause()

    run = flows.run(flow)

    assert isinstance(run.output, HumanFeedbackPending)
    assert run.output.context.method_name == "draft"
    assert run.output.context.emit == OUTCOMES
    assert run.trace.lines()[-5:] == [
        "human feedback draft message='Approve this draft?' answer=<paused>",
        "method paused draft message='Approve this draft?'",
        "flow paused " + flow.__name__ + " method=draft message='Approve this draft?'",
        # what crewai persists of a paused flow (no flow_store needed to see it)
        "state saved draft id=<uuid:1> n=1",
        "feedback saved draft id=<uuid:1>",
    ]

    resumed = human.resume(run, "ship it", outcome="approved")

    assert resumed.output == "published"
    assert resumed.state["id"] == run.state["id"]
    assert resumed.trace.lines()[0] == (
        "human resumed draft message='Approve this draft?' answer='ship it' outcome=approved"
    )
    assert "method finished publish output='published'" in resumed.trace.lines()


def test_pause_then_from_pending_and_resume_by_hand(flows: Any, human: Any, fake_llm: Any) -> None:
    human.pause()
    run = flows.run(ReviewFlow)
    flow_id = run.output.context.flow_id

    restored = ReviewFlow.from_pending(flow_id)  # crewai's default store: in memory
    fake_llm.on(purpose="feedback").reply({"outcome": "rejected"})

    assert restored.pending_feedback.method_output == "Draft v1"
    assert restored.resume("not good enough") == "discarded"
    assert restored.state["id"] == flow_id
    with pytest.raises(ValueError, match="No pending feedback"):
        ReviewFlow.from_pending(flow_id)


def test_resuming_a_run_that_did_not_pause_says_so(flows: Any, human: Any) -> None:
    human.answer(outcome="approved")
    run = flows.run(ReviewFlow)
    with pytest.raises(
        FlowsUsageError, match=r"the run did not pause \(its output is 'published'\)"
    ):
        human.resume(run, "again")


class WizardFlow(Flow):  # type: ignore[type-arg]
    @start()
    def interview(self) -> dict[str, Any]:
        return {
            "name": self.ask("What is your name?"),
            "colour": self.ask("Favourite colour?", metadata={"step": 2}),
            "age": self.ask("How old are you?", timeout=30),
        }


def test_an_ask_wizard_of_three_questions(flows: Any, human: Any) -> None:
    human.on(message="name").answer("Ada")
    human.on(message="colour").answer("green")
    human.on(message="old").answer("36", after=10)

    run = flows.run(WizardFlow)

    assert run.output == {"name": "Ada", "colour": "green", "age": "36"}
    assert flows.clock.monotonic() == 10.0
    assert [r.caller["occurrence"] for r in human.requests] == [1, 2, 3]
    assert human.requests[1].data["metadata"] == {"step": 2}
    assert run.trace.of_kind("human.ask")[2].render() == (
        "human ask interview message='How old are you?' answer='36'"
    )


def test_answers_in_order_and_by_occurrence(flows: Any, human: Any) -> None:
    human.on(method="interview", occurrence=2).answer("second")
    human.answer("first", "third")
    assert flows.run(WizardFlow).output == {"name": "first", "colour": "second", "age": "third"}


def test_a_timeout_passes_virtually_and_ask_returns_none(flows: Any, human: Any) -> None:
    human.answer("Ada", "green")
    human.on(message="old").timeout()

    run = flows.run(WizardFlow)

    assert run.output["age"] is None
    assert flows.clock.monotonic() == 30.0
    assert run.trace.lines()[-3] == (
        "human ask interview message='How old are you?' answer=<timeout after 30s>"
    )


def test_a_slow_answer_times_out_too(flows: Any, human: Any) -> None:
    human.answer("Ada", "green")
    human.answer("36", after=45)
    assert flows.run(WizardFlow).output["age"] is None
    assert flows.clock.monotonic() == 30.0


def test_a_timeout_for_an_ask_without_timeout_is_refused(flows: Any, human: Any) -> None:
    human.timeout()
    with pytest.raises(ScriptReplyError) as caught:
        flows.run(WizardFlow)
    assert str(caught.value).startswith(
        "pytest-flows: human request #1 is Flow.ask() in 'interview' without a timeout, so "
        "human.timeout() would wait forever."
    )


def test_an_unexpected_feedback_request_shows_it_and_the_line_to_add(
    flows: Any, human: Any
) -> None:
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(ReviewFlow)
    assert str(caught.value) == (
        "pytest-flows: unscripted human request #1: no scripted answer matches it.\n"
        "  caller: flow=ReviewFlow method=draft kind=feedback occurrence=1\n"
        "  message: 'Approve this draft?'\n"
        "  output under review: 'Draft v1'\n"
        "  outcomes: approved, rejected, needs_changes\n"
        "  script: empty (nothing was scripted on human)\n"
        "Add this line to the test to answer it:\n"
        '    human.on(method="draft").answer(outcome="approved")'
    )


def test_an_unexpected_ask_shows_it_and_the_line_to_add(flows: Any, human: Any) -> None:
    human.answer("Ada")
    human.on(method="elsewhere").answer("x", optional=True)
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(WizardFlow)
    lines = str(caught.value).splitlines()
    assert lines[:3] == [
        "pytest-flows: unscripted human request #2: no scripted answer matches it.",
        "  caller: flow=WizardFlow method=interview kind=ask occurrence=2",
        "  message: 'Favourite colour?'",
    ]
    assert lines[-1] == (
        '    human.on(method="interview", message="Favourite colour", occurrence=2).answer("...")'
    )


def test_ask_does_not_swallow_script_errors(flows: Any, human: Any) -> None:
    # crewai turns provider exceptions into "no answer" (None); a script error must not be.
    with pytest.raises(UnscriptedRequest):
        flows.run(WizardFlow)


@pytest.fixture
def no_persistence_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in an app that registered none (set up before the human fixture binds)."""
    import crewai.flow.persistence.factory as factory

    monkeypatch.setattr(factory, "_factory", None)


def test_without_a_persistence_factory_a_pause_is_kept_in_memory(
    no_persistence_factory: None, flows: Any, human: Any
) -> None:
    import crewai.flow.persistence.factory as factory

    human.pause()
    run = flows.run(ReviewFlow)
    store = factory.default_flow_persistence()
    assert type(store).__name__ == "_InMemoryPendingStore"
    assert store.pending_ids == [run.output.context.flow_id]

    resumed = human.resume(run, outcome="rejected")

    assert resumed.output == "discarded"
    assert store.pending_ids == []


class ConsoleFlow(Flow):  # type: ignore[type-arg]
    """Many crewAI-examples flows still read the console with a bare input()."""

    @start()
    def get_topic(self) -> str:
        return input("Enter a topic: ")

    @listen(get_topic)
    def confirm(self, topic: str) -> str:
        answer = input(f"Research {topic}? [y/n] ")
        return f"{topic}:{answer}"


def test_a_bare_input_is_answered_with_the_prompt_in_the_ledger_and_trace(
    flows: Any, human: Any
) -> None:
    human.on(message="topic").answer("AI agents")
    human.on(kind="input", method="confirm").answer("y", after=5)

    run = flows.run(ConsoleFlow)

    assert run.output == "AI agents:y"
    assert [(r.caller["kind"], r.caller["method"], r.prompt) for r in human.requests] == [
        ("input", "get_topic", "Enter a topic: "),
        ("input", "confirm", "Research AI agents? [y/n] "),
    ]
    assert flows.clock.monotonic() == 5.0
    assert run.trace.of_kind("human.input")[0].render() == (
        "human input get_topic message='Enter a topic: ' answer='AI agents'"
    )


def test_an_unscripted_input_shows_the_prompt_and_the_line_to_add(flows: Any, human: Any) -> None:
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(ConsoleFlow)
    lines = str(caught.value).splitlines()
    assert lines[1] == "  caller: flow=ConsoleFlow method=get_topic kind=input occurrence=1"
    assert lines[2] == "  message: 'Enter a topic: '"
    assert lines[-1] == '    human.on(method="get_topic", message="Enter a topic").answer("...")'


def test_input_cannot_pause(flows: Any, human: Any) -> None:
    human.pause()
    with pytest.raises(ScriptReplyError, match=r"is input\(\) in 'get_topic'.*cannot pause\(\)"):
        flows.run(ConsoleFlow)


def test_input_is_replaced_only_while_a_human_is_bound() -> None:
    import builtins

    from pytest_flows._internal.fakes.human_script import ScriptedHuman
    from pytest_flows.crewai import _human as crewai_human

    scripted = ScriptedHuman()
    scripted.answer("typed")
    real = builtins.input
    with crewai_human._console_input(scripted):
        assert input("prompt? ") == "typed"
    assert builtins.input is real
    assert scripted.requests[0].caller == {"kind": "input", "occurrence": 1}


class AutoApprover:
    """A provider with logic of its own: the thing a test of the provider checks."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        self.seen.append(str(context.method_output))
        if "v1" in str(context.method_output):
            raise HumanFeedbackPending(context=context)  # first drafts wait for a person
        return "approved"


APPROVER = AutoApprover()


class ApproverFlow(Flow):  # type: ignore[type-arg]
    @start()
    @human_feedback(message="Approve?", emit=OUTCOMES, llm="gpt-4o-mini", provider=APPROVER)
    def draft(self) -> str:
        return str(self.state.get("draft", "Draft v1"))

    @listen("approved")
    def publish(self) -> str:
        return "published"


def test_use_provider_lets_the_flows_own_provider_answer(
    flows: Any, human: Any, fake_llm: Any
) -> None:
    APPROVER.seen.clear()
    human.on(method="draft").use_provider(times=2)
    fake_llm.on(purpose="feedback").reply({"outcome": "approved"})

    paused = flows.run(ApproverFlow)
    done = flows.run(ApproverFlow, inputs={"draft": "Draft v2"})

    assert isinstance(paused.output, HumanFeedbackPending)  # the provider paused
    assert done.output == "published"
    assert APPROVER.seen == ["Draft v1", "Draft v2"]
    assert [e.get("answer") for e in flows.trace.of_kind("human.feedback")] == [
        "<paused>",
        "'approved'",
    ]


def test_use_provider_on_a_step_without_one_is_a_usage_error(flows: Any, human: Any) -> None:
    human.use_provider()
    with pytest.raises(FlowsUsageError, match=r"'draft' has no feedback provider of its own"):
        flows.run(ReviewFlow)
