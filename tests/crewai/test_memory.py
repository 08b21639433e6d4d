"""crewai memory in flows tests: the in-memory store keeps and finds records as the
default store does, a storage the test chose is never overridden, and flow_memory
shows what was remembered per scope (crewai/_memory.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError
from crewai.memory.types import MemoryRecord
from crewai.memory.unified_memory import Memory

from pytest_flows import FlowsSession
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.crewai._memory import FakeEmbedder, InMemoryStorage, memory_storage

NOTES = [
    ("/project/alpha", "the alpha launch is on tuesday", ["plans"]),
    ("/project/alpha/risks", "alpha depends on the billing migration", ["risks"]),
    ("/project/beta", "beta needs a new logo", ["design"]),
    ("/people", "dana prefers email over calls", ["contacts"]),
]


def _memory(**kwargs: Any) -> Memory:
    # Every field given: no LLM analysis, so no LLM is needed
    return Memory(llm="gpt-4o-mini", **kwargs)


def _remember_notes(memory: Memory) -> None:
    for scope, text, categories in NOTES:
        memory.remember(text, scope=scope, categories=categories, importance=0.5)


def test_memory_keeps_and_finds_records_honouring_scopes(flow_memory: Any) -> None:
    memory = _memory()
    assert isinstance(memory._storage, InMemoryStorage)
    _remember_notes(memory)

    found = memory.recall("when is the alpha launch", scope="/project", depth="shallow")
    assert found[0].record.content == "the alpha launch is on tuesday"
    assert {m.record.scope for m in found} <= {
        "/project/alpha",
        "/project/alpha/risks",
        "/project/beta",
    }
    assert [m.record.content for m in memory.recall("logo", scope="/people", depth="shallow")] == [
        "dana prefers email over calls"
    ]
    assert memory.list_scopes("/project") == ["/project/alpha", "/project/beta"]
    assert memory.info("/project").record_count == 3
    assert memory.list_categories("/project/alpha") == {"plans": 1, "risks": 1}

    # what was remembered, per scope, in the order it was saved
    assert flow_memory.contents("/project/alpha") == [NOTES[0][1], NOTES[1][1]]
    assert flow_memory.scopes() == [
        "/people",
        "/project/alpha",
        "/project/alpha/risks",
        "/project/beta",
    ]
    assert [r.categories for r in flow_memory.records("/people")] == [["contacts"]]

    memory.forget(scope="/project/beta")
    assert flow_memory.contents("/project") == [NOTES[0][1], NOTES[1][1]]
    memory.reset("/project/alpha")
    assert flow_memory.contents() == [NOTES[3][1]]


def test_every_default_memory_of_a_test_shares_one_store_as_the_default_database_does(
    flow_memory: Any,
) -> None:
    _memory().remember("written by one", scope="/shared", categories=[], importance=0.5)
    other = _memory()
    assert [m.record.content for m in other.recall("one", depth="shallow")] == ["written by one"]
    assert other._storage is flow_memory.storage


def test_a_storage_the_test_chose_is_never_overridden(flows: FlowsSession, tmp_path: Path) -> None:
    assert memory_storage("lancedb") is flow_memory_store(flows)
    assert memory_storage(str(tmp_path / "db")) is None  # a path: crewai's LanceDB there
    assert memory_storage("qdrant-edge") is None
    chosen = InMemoryStorage()
    assert _memory(storage=chosen, embedder=FakeEmbedder())._storage is chosen


def flow_memory_store(flows: FlowsSession) -> Any:
    from pytest_flows.crewai._memory import current_store

    return current_store()


def test_crewai_chooses_the_store_outside_flows_tests() -> None:
    assert memory_storage("lancedb") is None


def test_without_flow_memory_the_embedder_is_crewais_own(flows: FlowsSession) -> None:
    from crewai.memory import unified_memory

    # the network edge stays crewai's unless the test asked for the fake
    assert not isinstance(unified_memory._default_embedder, FakeEmbedder)
    assert unified_memory._default_embedder.__module__ == "crewai.memory.unified_memory"


def test_flow_memory_gives_a_memory_without_an_embedder_the_fake_one(flow_memory: Any) -> None:
    assert _memory()._embedder is flow_memory.embedder
    mine = FakeEmbedder(dimensions=8)
    assert _memory(embedder=mine)._embedder is mine


def test_the_fake_embedder_is_deterministic_and_puts_shared_words_close() -> None:
    embed = FakeEmbedder()
    a, b, c = embed(["the alpha launch", "alpha launch date", "a new logo"])
    assert embed(["the alpha launch"]) == [a]
    assert len(a) == 64 and abs(sum(x * x for x in a) - 1.0) < 1e-9
    dot = lambda u, v: sum(x * y for x, y in zip(u, v, strict=True))  # noqa: E731
    assert dot(a, b) > dot(a, c)
    assert embed([""]) == [[0.0] * 64]
    with pytest.raises(FlowsUsageError, match="dimensions"):
        FakeEmbedder(dimensions=0)


def _record(text: str, dim: int, **kwargs: Any) -> MemoryRecord:
    return MemoryRecord(content=text, embedding=FakeEmbedder(dim).embed(text), **kwargs)


def test_the_store_refuses_a_vector_of_another_dimension_as_lancedb_does() -> None:
    store = InMemoryStorage()
    store.save([_record("four", 4)])
    with pytest.raises(EmbeddingDimensionMismatchError):
        store.save([_record("eight", 8)])
    with pytest.raises(EmbeddingDimensionMismatchError):
        store.search([0.0] * 8)
    store.reset()
    store.save([_record("eight", 8)])  # an empty store takes any dimension


def _exercise(store: Any) -> list[Any]:
    """The same operations on a store; what each returned, comparable across stores."""
    embed = FakeEmbedder(16)
    records = [
        MemoryRecord(
            content=text,
            scope=scope,
            categories=categories,
            metadata={"n": i},
            embedding=embed.embed(text),
            importance=0.1 * i,
        )
        for i, (scope, text, categories) in enumerate(NOTES)
    ]
    store.save(records[:2])
    store.save(records[2:])

    def hits(found: list[tuple[MemoryRecord, float]]) -> list[tuple[str, float]]:
        return [(r.content, round(score, 6)) for r, score in found]

    out: list[Any] = [
        hits(store.search(embed.embed("alpha launch"), limit=3)),
        hits(store.search(embed.embed("alpha"), scope_prefix="/project/alpha")),
        hits(store.search(embed.embed("logo"), categories=["design", "contacts"])),
        hits(store.search(embed.embed("logo"), metadata_filter={"n": 3})),
        hits(store.search(embed.embed("logo"), min_score=0.5)),
        store.list_scopes("/"),
        store.list_scopes("/project"),
        store.list_categories("/project"),
        store.count(),
        store.count("/project/alpha"),
        store.get_scope_info("/project").model_dump(exclude={"oldest_record", "newest_record"}),
        store.get_record(records[1].id).content,
        store.get_record("nope"),
        sorted(r.content for r in store.list_records("/project", limit=2)),
    ]
    changed = records[2].model_copy(update={"content": "beta needs two logos"})
    store.update(changed)
    out.append(store.get_record(records[2].id).content)
    out.append(store.delete(categories=["contacts"]))
    out.append(store.delete(record_ids=[records[0].id]))
    store.reset("/project/alpha")
    out.append(store.count())
    out.append(store.delete(scope_prefix="/project"))
    store.reset()
    out.append(store.count())
    return out


def test_the_store_answers_as_crewais_default_lancedb_store(tmp_path: Path) -> None:
    """Parity with LanceDBStorage on the same operations (importing lancedb costs
    seconds of CPU: run with PYTEST_FLOWS_LANCEDB=1)."""
    if not os.environ.get("PYTEST_FLOWS_LANCEDB"):
        pytest.skip("set PYTEST_FLOWS_LANCEDB=1 to compare with LanceDB")
    from crewai.memory.storage.lancedb_storage import LanceDBStorage

    assert _exercise(InMemoryStorage()) == _exercise(LanceDBStorage(path=str(tmp_path / "db")))


def test_the_store_on_its_own() -> None:
    out = _exercise(InMemoryStorage())
    assert out[0][0][0] == "the alpha launch is on tuesday"  # the nearest first
    assert out[5] == ["/people", "/project"]
    assert out[8:10] == [4, 2]
    assert out[-1] == 0
