"""A memory store that keeps nothing, so ``Flow()`` in a flows test never loads lancedb
or an embedder, nor writes a file."""

from __future__ import annotations

from typing import Any

from pytest_flows._internal.isolation import in_isolation

__all__ = ["NullMemoryStorage", "memory_storage"]


def memory_storage(spec: str) -> NullMemoryStorage | None:
    """crewai's memory storage factory while pytest-flows is loaded: a store that keeps
    nothing where isolation is in force; elsewhere ``None``, i.e. crewai's own choice."""
    return NullMemoryStorage() if in_isolation() else None


class NullMemoryStorage:
    """Satisfies crewai's ``StorageBackend`` protocol: saves vanish, searches find nothing."""

    def save(self, records: list[Any]) -> None:
        return None

    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []

    def delete(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def update(self, record: Any) -> None:
        return None

    def get_record(self, record_id: str) -> Any:
        return None

    def list_records(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []

    def get_scope_info(self, scope: str) -> Any:
        from crewai.memory.types import ScopeInfo

        return ScopeInfo(path=scope)

    def list_scopes(self, parent: str = "/") -> list[str]:
        return []

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        return {}

    def count(self, scope_prefix: str | None = None) -> int:
        return 0

    def reset(self, scope_prefix: str | None = None) -> None:
        return None

    async def asave(self, records: list[Any]) -> None:
        return None

    async def asearch(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []

    async def adelete(self, *args: Any, **kwargs: Any) -> int:
        return 0
