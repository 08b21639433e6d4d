"""The tests a user writes for Agent Framework's guessing game (see af_guessing_game.py).

``FlowsChatClient()`` stands in for the sample's hosted client: ``fake_llm``
scripts the agent's structured guesses, ``human`` answers the ``request_info``.
"""

from __future__ import annotations

from af_guessing_game import GuessOutput, HumanFeedbackRequest, build_workflow
from agent_framework import AgentResponse

from pytest_flows.agent_framework import FlowsChatClient, explore_seeds


def script_guesses(fake_llm, *guesses: int) -> None:
    fake_llm.on(agent="GuessingAgent").reply(*(GuessOutput(guess=g) for g in guesses))


def test_the_agent_guesses_until_the_human_says_correct(flows, fake_llm, human):
    script_guesses(fake_llm, 5, 8, 9)
    human.answer("higher", "higher", "correct")

    run = flows.run(build_workflow(FlowsChatClient()), "start")

    # The turn manager's own output, without the agent's responses:
    assert run.non_agent_outputs == ["Guessed correctly!"]
    # run.outputs also holds the AgentResponse the agent executor yields each turn
    # (Agent Framework's default output_from), with the parsed structured output:
    agent_turns = run.outputs_from("GuessingAgent")
    assert all(isinstance(turn, AgentResponse) for turn in agent_turns)
    assert [turn.value for turn in agent_turns] == [GuessOutput(guess=g) for g in (5, 8, 9)]
    assert run.outputs == [*agent_turns, "Guessed correctly!"]


def test_the_human_is_asked_about_each_guess(flows, fake_llm, human):
    script_guesses(fake_llm, 5, 3)
    human.answer("lower", "correct")

    flows.run(build_workflow(FlowsChatClient()), "start")

    asked = [exchange.data for exchange in human.requests]
    assert [a["request"] for a in asked] == [
        HumanFeedbackRequest(prompt=prompt(5)),
        HumanFeedbackRequest(prompt=prompt(3)),
    ]
    assert {(a["request_type"], a["response_type"]) for a in asked} == {(HumanFeedbackRequest, str)}
    assert len({a["request_id"] for a in asked}) == 2
    assert [exchange.reply for exchange in human.requests] == ["lower", "correct"]
    assert human.requests[0].caller["method"] == "turn_manager"
    assert human.requests[0].caller["data"] == {"prompt": prompt(5)}


def test_the_feedback_reaches_the_agent(flows, fake_llm, human):
    script_guesses(fake_llm, 5, 8)
    human.answer("higher", "correct")

    flows.run(build_workflow(FlowsChatClient()), "start")

    assert [call.prompt for call in fake_llm.calls] == [
        "Start by making your first guess.",
        "Feedback: higher. Your last guess was 5. "
        "Use this feedback to adjust and make your next guess (1-10).",
    ]
    assert all(call.response_model is GuessOutput for call in fake_llm.calls)


def test_answering_by_hand_as_the_sample_does(flows, fake_llm):
    # Without the human fixture the run stops at the request, as the sample's
    # event loop does; answer it with the request id, as the sample does.
    script_guesses(fake_llm, 7)
    workflow = build_workflow(FlowsChatClient())

    run = flows.run(workflow, "start")
    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    request = run.request()
    assert request.data == HumanFeedbackRequest(prompt=prompt(7))
    assert request.executor == "turn_manager" and request.response_type is str

    run = flows.run(workflow, responses={request.request_id: "correct"})

    assert run.non_agent_outputs == ["Guessed correctly!"]
    assert run.status == "IDLE"


def test_the_game_does_not_depend_on_the_seed(flows, fake_llm, human):
    fake_llm.on(agent="GuessingAgent").reply(GuessOutput(guess=4), times="always")
    human.answer("correct", times="always")

    seeds = explore_seeds(flows, lambda: build_workflow(FlowsChatClient()), "start", seeds=range(4))

    seeds.assert_deterministic()


def test_the_superstep_trace(flows, fake_llm, human, snapshot):
    script_guesses(fake_llm, 5, 6)
    human.answer("higher", "correct")

    run = flows.run(build_workflow(FlowsChatClient()), "start")

    assert run.trace.render() == snapshot


def prompt(guess: int) -> str:
    return (
        f"The agent guessed: {guess}. Type one of: higher (your number is higher than this "
        "guess), lower (your number is lower than this guess), correct, or exit."
    )
