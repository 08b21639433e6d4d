"""The tests a user writes for an @entrypoint workflow."""

from __future__ import annotations

from lg_essay import essay_writer

from pytest_flows import FlowsSession


def test_the_essay_is_written_and_published(flows, human):
    human.on(method="essay_writer").answer("publish")

    run = flows.run(essay_writer, "tests")

    assert run.values == {
        "essay": (
            "Tests: why - a paragraph.\nTests: how - a paragraph.\nTests: what next - a paragraph."
        ),
        "published": True,
    }
    # the task calls sit under the entrypoint's task, in call order
    assert run.trace.lines()[3:6] == [
        "task started essay_writer triggers=[__start__]",
        "  task started outline[0]",
        '  task finished outline[0] writes=["tests: why", "tests: how", "tests: what next"]',
    ]


def test_finished_tasks_are_not_run_again_on_resume(flows, human):
    human.answer("publish")
    run = flows.run(essay_writer, "tests")
    resumed_part = run.trace.lines()[
        run.trace.lines().index("graph resumed LangGraph answers=[i1]") :
    ]
    # after the answer the entrypoint re-runs from its top, but its finished tasks
    # are read back from the checkpoint: only review runs again
    assert [line.strip() for line in resumed_part if "task started" in line] == [
        "task started essay_writer triggers=[__start__]",
        "task started review[4]",
    ]


def test_one_trace_under_every_seed():
    traces = set()
    for seed in range(3):
        with FlowsSession(seed=seed, test_id="essay") as flows:
            flows.run(essay_writer, "tests")
            traces.add(flows.trace.render())
    assert len(traces) == 1
