"""flow_store's patches: crewai's persistence and checkpoints read and write the store.

crewai persists a flow through ``@persist`` backends (``SQLiteFlowPersistence``)
and checkpoints through providers (``JsonProvider``, ``SqliteProvider``) that
write files. During a ``flow_store`` test those go to the in-memory store, still
encoded by crewai's own code (used by :mod:`pytest_flows.crewai._persistence` and
:mod:`pytest_flows.crewai._checkpoints`); the seams are declared in
:mod:`pytest_flows.crewai._seams`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from crewai.flow.runtime import Flow

from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._seams import SEAMS

__all__ = [
    "json_checkpoint_location",
    "restore_intent",
    "routed_checkpoints",
    "routed_sqlite_persistence",
    "sqlite_checkpoint_id",
    "sqlite_codec",
]


def sqlite_codec() -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Any] | None]:
    """``SQLiteFlowPersistence``'s own encoding: (state -> dict, ``json.dumps`` default)."""
    from crewai.flow.persistence import sqlite

    to_state_dict: Callable[[Any], dict[str, Any]] = sqlite.SQLiteFlowPersistence._to_state_dict
    json_default: Callable[[Any], Any] | None = compat.sqlite_json_default()
    return to_state_dict, json_default


def json_checkpoint_location(directory: str, branch: str, parent_id: str | None) -> str:
    """Where ``JsonProvider.checkpoint`` would write (validates the branch like it does)."""
    from crewai.state.provider.json_provider import _build_path

    return str(_build_path(directory, branch, parent_id))


def sqlite_checkpoint_id() -> str:
    """The id ``SqliteProvider.checkpoint`` would give a new checkpoint."""
    from crewai.state.provider.sqlite_provider import _make_id

    checkpoint_id: str = _make_id()[0]
    return checkpoint_id


_KICKOFF_CODE: Any = Flow.kickoff_async.__code__


def restore_intent(flow_uuid: str) -> str:
    """Why ``load_state(flow_uuid)`` is being called: ``resume``, ``fork`` or ``load``.

    crewai loads a persisted state for two reasons inside ``kickoff_async``:
    ``inputs["id"]`` (resume; the local ``restore_uuid`` is set right before)
    and ``restore_from_state_id`` (fork). Anything else is a plain ``load``.
    """
    frame = sys._getframe(1)
    for _ in range(8):
        if frame is None:
            break
        if frame.f_code is _KICKOFF_CODE:
            local = frame.f_locals
            if "restore_uuid" in local:
                return "resume"
            if local.get("restore_from_state_id") == flow_uuid:
                return "fork"
            return "load"
        frame = frame.f_back  # type: ignore[assignment]
    return "load"


_PROVIDER_METHODS = ("checkpoint", "acheckpoint", "from_checkpoint", "afrom_checkpoint", "prune")


def _provider_methods(router: Any, cls: type, kind: str) -> tuple[Any, ...]:
    """The five provider methods of ``cls``, answered by ``router``."""
    original_read = cls.__dict__["from_checkpoint"]
    original_aread = cls.__dict__["afrom_checkpoint"]

    def checkpoint(
        self: Any, data: str, location: str, *, parent_id: str | None = None, branch: str = "main"
    ) -> str:
        written: str = router.write(kind, data, location, parent_id, branch)
        return written

    async def acheckpoint(self: Any, *args: Any, **kwargs: Any) -> str:
        return checkpoint(self, *args, **kwargs)

    def from_checkpoint(self: Any, location: str) -> str:
        raw: str | None = router.read(location)
        if raw is None:
            router.missing(location)  # raises unless a real checkpoint is there
            raw = original_read(self, location)
        return raw

    async def afrom_checkpoint(self: Any, location: str) -> str:
        raw: str | None = router.read(location)
        if raw is None:
            router.missing(location)
            raw = await original_aread(self, location)
        return raw

    def prune(self: Any, location: str, max_keep: int, *, branch: str = "main") -> int:
        removed: int = router.prune(location, max_keep, branch)
        return removed

    return checkpoint, acheckpoint, from_checkpoint, afrom_checkpoint, prune


@contextlib.contextmanager
def routed_checkpoints(router: Any) -> Iterator[None]:
    """Send every ``JsonProvider``/``SqliteProvider`` read and write to ``router``.

    ``router.write(kind, data, location, parent_id, branch) -> location``,
    ``router.read(location) -> str | None`` (None: not the store's),
    ``router.prune(location, max_keep, branch) -> int``,
    ``router.missing(location)`` (raises unless a real checkpoint is there) and
    ``router.kind_of(location) -> "json" | "sqlite" | None``. ``detect_provider``
    (used by every restore) answers from the router for the store's locations.
    """
    import crewai.state.provider.utils as provider_utils
    from crewai.state.provider.json_provider import JsonProvider
    from crewai.state.provider.sqlite_provider import SqliteProvider

    original_detect = provider_utils.detect_provider

    def detect_provider(path: str) -> Any:
        kind = router.kind_of(str(path))
        if kind == "json":
            return JsonProvider()
        if kind == "sqlite":
            return SqliteProvider()
        return original_detect(path)

    with contextlib.ExitStack() as stack:
        for cls, kind in ((JsonProvider, "json"), (SqliteProvider, "sqlite")):
            owner = f"{cls.__module__}:{cls.__name__}"
            methods = _provider_methods(router, cls, kind)
            for name, value in zip(_PROVIDER_METHODS, methods, strict=True):
                stack.enter_context(SEAMS[f"{owner}.{name}"].replace(value))
        stack.enter_context(
            SEAMS["crewai.state.provider.utils:detect_provider"].replace(detect_provider)
        )
        yield


_SQLITE = "crewai.flow.persistence.sqlite:SQLiteFlowPersistence"
_SQLITE_METHODS = (
    "save_state",
    "load_state",
    "save_pending_feedback",
    "load_pending_feedback",
    "clear_pending_feedback",
)


@contextlib.contextmanager
def routed_sqlite_persistence(target: Any) -> Iterator[None]:
    """Make explicit ``SQLiteFlowPersistence(...)`` instances read and write ``target``.

    ``@persist(SQLiteFlowPersistence("flows.db"))`` binds a real database file at
    import time; during a ``flow_store`` test its calls go to the store instead.
    """

    def init_db(self: Any) -> None:
        return None

    def delegate(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(target, name)(*args, **kwargs)

        method.__name__ = name
        return method

    with contextlib.ExitStack() as stack:
        stack.enter_context(SEAMS[f"{_SQLITE}.init_db"].replace(init_db))
        for name in _SQLITE_METHODS:
            stack.enter_context(SEAMS[f"{_SQLITE}.{name}"].replace(delegate(name)))
        yield
