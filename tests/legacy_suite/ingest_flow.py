"""A document-ingest pipeline that survives a crash at every step.

Four persisted steps: fetch the documents, split them into chunks, index the
chunks, publish the index. The process may die after any save (or between a
step and its save); the operator then resumes with ``kickoff(inputs={"id":
<the crashed run's id>})``, which crewai runs *from the start* on the restored
state. Two habits make that safe:

* every step records itself in ``state.done`` and skips work already done;
* the one external side effect (``OUTBOX.send``) carries an idempotency key,
  so a step that ran but whose save was lost may send again harmlessly.
"""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from pydantic import BaseModel

CORPUS = {
    "handbook": [
        "Flows are graphs.",
        "State is persisted after each step.",
        "Resume the state by id.",
    ],
}


class Outbox:
    """The external system the index is published to; it dedupes by key."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.deliveries = 0

    def send(self, key: str, size: int) -> None:
        self.deliveries += 1
        self.sent.setdefault(key, size)


OUTBOX = Outbox()


class IngestState(BaseModel):
    source: str = "handbook"
    documents: list[str] = []
    chunks: list[str] = []
    index: dict[str, int] = {}
    done: list[str] = []


@persist()
class IngestPipeline(Flow[IngestState]):
    @start()
    def fetch(self) -> int:
        if "fetch" not in self.state.done:
            self.state.documents = list(CORPUS[self.state.source])
            self.state.done.append("fetch")
        return len(self.state.documents)

    @listen(fetch)
    def split(self, _: int) -> int:
        if "split" not in self.state.done:
            self.state.chunks += [w for doc in self.state.documents for w in doc.split()]
            self.state.done.append("split")
        return len(self.state.chunks)

    @listen(split)
    def build_index(self, _: int) -> int:
        if "build_index" not in self.state.done:
            for chunk in self.state.chunks:
                word = chunk.strip(".").lower()
                self.state.index[word] = self.state.index.get(word, 0) + 1
            self.state.done.append("build_index")
        return len(self.state.index)

    @listen(build_index)
    def publish(self, _: int) -> str:
        if "publish" not in self.state.done:
            OUTBOX.send(key=f"{self.state.id}:index", size=len(self.state.index))
            self.state.done.append("publish")
        return f"published {len(self.state.index)} terms from {len(self.state.documents)} docs"


@persist()
class NaiveIngestPipeline(Flow[IngestState]):
    """The same pipeline without the habits: a resume repeats work (kept to test the test)."""

    @start()
    def fetch(self) -> int:
        self.state.documents = list(CORPUS[self.state.source])
        return len(self.state.documents)

    @listen(fetch)
    def split(self, _: int) -> int:
        self.state.chunks += [w for doc in self.state.documents for w in doc.split()]
        return len(self.state.chunks)

    @listen(split)
    def build_index(self, _: int) -> int:
        for chunk in self.state.chunks:
            word = chunk.strip(".").lower()
            self.state.index[word] = self.state.index.get(word, 0) + 1
        return len(self.state.index)

    @listen(build_index)
    def publish(self, _: int) -> str:
        OUTBOX.send(key=f"{self.state.id}:index", size=len(self.state.index))
        return f"published {len(self.state.index)} terms from {len(self.state.documents)} docs"
