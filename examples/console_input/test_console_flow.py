"""``input()`` in flow code, answered by ``human``."""

from __future__ import annotations

from console_flow import ConsoleResearchFlow


def test_the_topic_and_the_confirmation_come_from_the_console(flows, human, fake_crews):
    human.on(message="topic").answer("  AI agents ")
    human.on(message=r"\[y/n\]").answer("y", after=5)  # the user takes 5 virtual seconds
    fake_crews.on(crew="research", inputs={"topic": "AI agents"}).reply("a report")

    run = flows.run(ConsoleResearchFlow)

    assert run.output == "a report"
    assert [(r.caller["kind"], r.caller["method"]) for r in human.requests] == [
        ("input", "get_topic"),
        ("input", "confirm"),
    ]
    assert human.requests[1].prompt == "Research 'AI agents'? [y/n] "
    assert run.trace.of_kind("human.input")[0].render() == (
        "human input get_topic message='Enter a topic: ' answer='  AI agents '"
    )


def test_saying_no_cancels(flows, human):
    human.answer("AI agents", "n")
    assert flows.run(ConsoleResearchFlow).output == "cancelled"
