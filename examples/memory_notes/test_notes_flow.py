"""The tests a user writes for a flow with memory: what it remembered per scope, what
it recalled, and the same answer as the bare runtime."""

from __future__ import annotations

from pathlib import Path

from crewai.memory.unified_memory import Memory
from notes_flow import NotesFlow

from pytest_flows.crewai import FakeEmbedder

NOTES = [
    {"topic": "launch", "text": "the alpha launch is on tuesday at noon"},
    {"topic": "design", "text": "the beta needs a new logo"},
    {"topic": "people", "text": "dana prefers email over calls"},
]
INPUTS = {"notes": NOTES, "question": "when is the alpha launch"}


def test_it_recalls_what_an_earlier_method_remembered(flows, flow_memory):
    run = flows.run(NotesFlow, inputs=INPUTS)

    assert run.output[0] == "the alpha launch is on tuesday at noon"
    # what the flow remembered, per scope
    assert flow_memory.contents("/flow/notesflow/launch") == [NOTES[0]["text"]]
    assert flow_memory.scopes() == [
        "/flow/notesflow/design",
        "/flow/notesflow/launch",
        "/flow/notesflow/people",
    ]
    assert [r.categories for r in flow_memory.records("/flow/notesflow/people")] == [["people"]]


#: What the flow answers and keeps, on the bare runtime and under the harness alike
#: (the two tests below compare each with it).
ANSWER = ["the alpha launch is on tuesday at noon", "the beta needs a new logo"]
KEPT = [
    ("/flow/notesflow/design", "the beta needs a new logo", ["design"], 0.5),
    ("/flow/notesflow/launch", "the alpha launch is on tuesday at noon", ["launch"], 0.5),
    ("/flow/notesflow/people", "dana prefers email over calls", ["people"], 0.5),
]


def _kept(records):
    return sorted((r.scope, r.content, r.categories, r.importance) for r in records)


def test_under_the_harness(flows, flow_memory):
    """The flow's own memory (the in-memory store, flow_memory's FakeEmbedder)."""
    run = flows.run(NotesFlow, inputs=INPUTS)

    assert run.output == ANSWER
    assert _kept(flow_memory.records()) == KEPT


def test_on_the_bare_runtime(tmp_path: Path):
    """No pytest-flows fixture: crewai's default LanceDB store, in a directory of this
    test, with the same FakeEmbedder (importing lancedb costs seconds). Compared with
    the harnessed run through ANSWER and KEPT: the output (the recalled notes, in
    order) and every record kept (scope, content, categories, importance)."""
    memory = Memory(
        storage=str(tmp_path / "lancedb"),  # chosen: crewai's own store, never replaced
        embedder=FakeEmbedder(),
        root_scope="/flow/notesflow",
    )
    output = NotesFlow(memory=memory).kickoff(inputs=INPUTS)

    assert output == ANSWER
    assert _kept(memory.list_records()) == KEPT
