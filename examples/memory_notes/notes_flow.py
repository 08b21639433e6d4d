"""A flow that remembers in one method and recalls in a later one (crewAI memory).

``take_notes`` remembers each note under a scope of its topic; ``answer`` recalls
what is closest to the question. The flow's memory is crewai's own: every
``Flow()`` gets a ``Memory(root_scope="/flow/notesflow")``. Each note gives its
scope, categories and importance, so remembering needs no LLM; recall is
``depth="shallow"`` (vector search only).
"""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel


class Note(BaseModel):
    topic: str
    text: str


class NotesState(BaseModel):
    notes: list[Note] = []
    question: str = ""
    answer: list[str] = []


class NotesFlow(Flow[NotesState]):
    @start()
    def take_notes(self) -> int:
        for note in self.state.notes:
            self.remember(note.text, scope=note.topic, categories=[note.topic], importance=0.5)
        return len(self.state.notes)

    @listen(take_notes)
    def answer(self) -> list[str]:
        matches = self.recall(self.state.question, depth="shallow", limit=2)
        self.state.answer = [m.record.content for m in matches]
        return self.state.answer
