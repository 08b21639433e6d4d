"""crewai memory in flows tests: an in-memory store that behaves as the default one.

Every ``Flow()`` builds a ``Memory(root_scope="/flow/<name>")`` whose storage is
crewai's default, LanceDB in the platform's data directory (seconds to import,
files on disk). In a flows test a ``Memory`` whose storage the test did not
choose (the default ``"lancedb"`` spec) gets an :class:`InMemoryStorage`
instead: one per test, shared by every such ``Memory`` as the default database
would be, keeping and finding records as LanceDB does (the same scores, filters,
scopes and orders). A storage the test chose - a path, ``"qdrant-edge"``, a
backend instance - is crewai's, untouched.

The embedder is the network edge of memory: crewai's default embeds with OpenAI.
It is replaced only when the test asks for the ``flow_memory`` fixture, and only
for a ``Memory`` that chose no embedder: :class:`FakeEmbedder` gives the same
vector for the same text in every process, and texts sharing words lie close.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pytest_flows.adapters import in_isolation, internal_lock
from pytest_flows.crewai._seams import SEAMS

__all__ = [
    "FakeEmbedder",
    "FlowMemory",
    "InMemoryStorage",
    "install",
    "memory_storage",
    "per_test_memory",
]

#: The spec ``Memory()`` gets when the test chose no storage.
DEFAULT_SPEC = "lancedb"

#: The stores of the open flows tests, innermost last.
_stores: list[InMemoryStorage] = []


def memory_storage(spec: str) -> InMemoryStorage | None:
    """crewai's memory storage factory while pytest-flows is loaded: where isolation is
    in force and the test chose no storage, the test's in-memory store; elsewhere
    ``None``, i.e. crewai's own choice."""
    if spec != DEFAULT_SPEC or not in_isolation():
        return None
    return _stores[-1] if _stores else InMemoryStorage()


@contextlib.contextmanager
def per_test_memory() -> Iterator[InMemoryStorage]:
    """For one flows test: the store every default-storage ``Memory`` of it shares."""
    store = InMemoryStorage()
    _stores.append(store)
    try:
        yield store
    finally:
        _stores.remove(store)


# -- the store -------------------------------------------------------------------------


def _within(scope: str, prefix: str | None) -> bool:
    """LanceDB's ``scope LIKE '<prefix>%'`` (no filter for None, "" or "/")."""
    if prefix is None or not prefix.strip("/"):
        return True
    return scope.startswith(prefix.rstrip("/"))


def _matches(record: Any, categories: list[str] | None, metadata: dict[str, Any] | None) -> bool:
    if categories and not any(c in record.categories for c in categories):
        return False
    return not metadata or all(record.metadata.get(k) == v for k, v in metadata.items())


def _squared_l2(a: list[float], b: list[float]) -> float:
    return math.fsum((x - y) * (x - y) for x, y in zip(a, b, strict=False))


class InMemoryStorage:
    """crewai's ``StorageBackend`` in a list, with ``LanceDBStorage``'s semantics.

    Search ranks by squared L2 distance and scores ``1 / (1 + distance)`` as
    LanceDB's default metric does; scope prefixes, categories, metadata filters,
    ``min_score``, newest-first listings, scope trees, the dimension check and
    ``reset``'s range all follow ``LanceDBStorage``. Records are copied in and out,
    as a database would.
    """

    def __init__(self) -> None:
        self._records: list[Any] = []  # insertion order
        self._dim = 0
        self._lock = internal_lock()

    # -- writes ----------------------------------------------------------------
    def _check_dim(self, records: list[Any]) -> None:
        from crewai.memory.storage.backend import EmbeddingDimensionMismatchError

        dims = [len(r.embedding) for r in records if r.embedding]
        for dim in dims:
            if dims[0] != dim:
                raise EmbeddingDimensionMismatchError(dims[0], dim)
        if dims and self._dim and dims[0] != self._dim:
            raise EmbeddingDimensionMismatchError(self._dim, dims[0])

    def _stored(self, record: Any) -> Any:
        copy = record.model_copy(deep=True)
        if not copy.embedding or len(copy.embedding) != self._dim:
            copy.embedding = [0.0] * self._dim
        return copy

    def save(self, records: list[Any]) -> None:
        if not records:
            return
        with self._lock:
            self._check_dim(records)
            if not self._dim:
                self._dim = next((len(r.embedding) for r in records if r.embedding), 0)
            self._records.extend(self._stored(r) for r in records)

    def update(self, record: Any) -> None:
        with self._lock:
            if self._records and record.embedding:
                self._check_dim([record])
            self._records = [r for r in self._records if r.id != record.id]
            self._records.append(self._stored(record))

    def touch_records(self, record_ids: list[str]) -> None:
        wanted = set(record_ids)
        now = datetime.utcnow()  # what LanceDBStorage stamps
        with self._lock:
            for record in self._records:
                if record.id in wanted:
                    record.last_accessed = now

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        def doomed(record: Any) -> bool:
            if record_ids and not (categories or metadata_filter):
                return record.id in record_ids
            if categories or metadata_filter:
                return (
                    _within(record.scope, scope_prefix)
                    and _matches(record, categories, metadata_filter)
                    and not (older_than and record.created_at >= older_than)
                )
            # LanceDB: "<prefix>% OR scope = '/'", and created_at compared as ISO text
            in_scope = _within(record.scope, scope_prefix) or record.scope == "/"
            old = older_than is None or record.created_at.isoformat() < older_than.isoformat()
            return in_scope and old

        with self._lock:
            kept = [r for r in self._records if not doomed(r)]
            gone = len(self._records) - len(kept)
            self._records = kept
            return gone

    def reset(self, scope_prefix: str | None = None) -> None:
        with self._lock:
            if scope_prefix is None or not scope_prefix.strip("/"):
                self._records, self._dim = [], 0
                return
            low = scope_prefix.rstrip("/")
            high = f"{low}/\uffff"
            self._records = [r for r in self._records if not (low <= r.scope < high)]

    # -- reads -------------------------------------------------------------------
    def _snapshot(self, scope_prefix: str | None = None) -> list[Any]:
        with self._lock:
            return [r for r in self._records if _within(r.scope, scope_prefix)]

    def get_record(self, record_id: str) -> Any:
        found = [r for r in self._snapshot() if r.id == record_id]
        return found[0].model_copy(deep=True) if found else None

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[Any, float]]:
        from crewai.memory.storage.backend import EmbeddingDimensionMismatchError

        records = self._snapshot(scope_prefix)
        if not records:
            return []
        if self._dim and len(query_embedding) != self._dim:
            raise EmbeddingDimensionMismatchError(self._dim, len(query_embedding))
        ranked = sorted(
            (
                (_squared_l2(query_embedding, r.embedding or []), i, r)
                for i, r in enumerate(records)
            ),
            key=lambda t: (t[0], t[1]),
        )
        # LanceDB takes the nearest `limit` (3x with a filter), then filters them
        window = ranked[: limit * 3 if (categories or metadata_filter) else limit]
        out: list[tuple[Any, float]] = []
        for distance, _, record in window:
            if not _matches(record, categories, metadata_filter):
                continue
            score = 1.0 / (1.0 + distance)
            if score >= min_score:
                out.append((record.model_copy(deep=True), score))
            if len(out) >= limit:
                break
        return out[:limit]

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[Any]:
        if limit <= 0 or offset < 0:
            return []
        prefix = scope_prefix
        if prefix is not None and prefix.strip("/") and not prefix.startswith("/"):
            prefix = "/" + prefix
        records = sorted(self._snapshot(prefix), key=lambda r: r.created_at, reverse=True)
        return [r.model_copy(deep=True) for r in records[offset : offset + limit]]

    def get_scope_info(self, scope: str) -> Any:
        from crewai.memory.types import ScopeInfo

        scope = scope.rstrip("/") or "/"
        prefix = scope if scope != "/" else ""
        if prefix and not prefix.startswith("/"):
            prefix = "/" + prefix
        records = self._snapshot(prefix or None)
        child_prefix = prefix + "/"
        children = {
            child_prefix + r.scope[len(child_prefix) :].split("/", 1)[0]
            for r in records
            if r.scope.startswith(child_prefix) and r.scope[len(child_prefix) :].split("/", 1)[0]
        }
        stamps = [r.created_at for r in records]
        return ScopeInfo(
            path=scope or "/",
            record_count=len(records),
            categories=sorted({c for r in records for c in r.categories}),
            oldest_record=min(stamps) if stamps else None,
            newest_record=max(stamps) if stamps else None,
            child_scopes=sorted(children),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        parent = parent.rstrip("/") or ""
        prefix = (parent + "/") if parent else "/"
        children: set[str] = set()
        for record in self._snapshot(prefix if prefix != "/" else None):
            if record.scope.startswith(prefix) and record.scope != (prefix.rstrip("/") or "/"):
                first = record.scope[len(prefix) :].split("/", 1)[0]
                if first:
                    children.add(prefix + first)
        return sorted(children)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self._snapshot(scope_prefix):
            for category in record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        if scope_prefix is None or not scope_prefix.strip("/"):
            return len(self._snapshot())
        return int(self.get_scope_info(scope_prefix).record_count)

    async def asave(self, records: list[Any]) -> None:
        self.save(records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[Any, float]]:
        return self.search(
            query_embedding, scope_prefix, categories, metadata_filter, limit, min_score
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        return self.delete(scope_prefix, categories, record_ids, older_than, metadata_filter)


# -- the embedder ----------------------------------------------------------------------

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """A deterministic embedder: each word adds ±1 to a bucket picked by its SHA-256,
    and the vector is scaled to unit length. The same text always gives the same
    vector (in every process), and texts that share words lie close."""

    def __init__(self, dimensions: int = 64) -> None:
        if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1:
            from pytest_flows.adapters import FlowsUsageError

            raise FlowsUsageError(
                f"FakeEmbedder(dimensions=...) expects a whole number >= 1, got {dimensions!r}"
            )
        self.dimensions = dimensions

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in _WORD.findall(text.lower()):
            digest = hashlib.sha256(word.encode()).digest()
            bucket = int.from_bytes(digest[:4], "big") % self.dimensions
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(math.fsum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    def __call__(self, input: list[str]) -> list[list[float]]:
        return [self.embed(text) for text in input]


# -- the flow_memory fixture -----------------------------------------------------------


class FlowMemory:
    """What the test's flows remembered, per scope; the ``flow_memory`` fixture.

    ``flow_memory.contents("/flow/notes")`` lists what was remembered in that scope
    (and below), in the order it was saved; ``records(...)`` the ``MemoryRecord``
    copies; ``scopes()`` every scope holding a record; ``embedder`` the
    :class:`FakeEmbedder` each ``Memory`` without an embedder of its own uses.
    """

    def __init__(self, storage: InMemoryStorage, embedder: FakeEmbedder | None = None) -> None:
        self.storage = storage
        self.embedder = embedder if embedder is not None else FakeEmbedder()

    def records(self, scope: str = "/") -> list[Any]:
        return [r.model_copy(deep=True) for r in self.storage._snapshot(scope)]

    def contents(self, scope: str = "/") -> list[str]:
        return [r.content for r in self.storage._snapshot(scope)]

    def scopes(self) -> list[str]:
        return sorted({r.scope for r in self.storage._snapshot()})

    def __repr__(self) -> str:
        per_scope = {s: len(self.contents(s)) for s in self.scopes()}
        return f"<flow_memory {per_scope}>"


@contextlib.contextmanager
def install(memory: FlowMemory) -> Iterator[FlowMemory]:
    """While the fixture lives: a ``Memory`` that chose no embedder uses the fake one."""
    embedder = memory.embedder

    def default_embedder() -> FakeEmbedder:
        return embedder

    with SEAMS["crewai.memory.unified_memory:_default_embedder"].replace(default_embedder):
        yield memory


def current_store() -> InMemoryStorage:
    """The open test's store (one is opened if crewai's adapter is not active yet)."""
    return _stores[-1] if _stores else InMemoryStorage()
