"""Every reach into LangGraph that it does not promise to keep, declared once.

The core adapter runs graphs through public API only (``Pregel.stream``/``astream``,
``Pregel.copy``, ``get_state``, langchain-core's ``register_configure_hook``
callbacks); what it patches is where LangGraph draws ids and jitter from module
state. :func:`check_patch_points` resolves every declaration (the test suite calls
it): after an upgrade it fails once, listing each seam that moved.

The fakes' and the store's seams live with them (``_llm_seams.py``: ``LLM_SEAMS``,
``_store_seams.py``: ``STORE_SEAMS``); each joins ``SEAMS`` below with one line.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_flows.adapters import Registry, Seam, check_seams, framework_versions

__all__ = ["RECORDER_SEAMS", "SEAMS", "check_patch_points"]

_ID = "langgraph.checkpoint.base.id"


def _a_random_module(found: Any) -> str | None:
    return None if found is __import__("random") else f"is {found!r}, not the random module"


def _a_datetime_class(found: Any) -> str | None:
    import datetime

    ok = isinstance(found, type) and issubclass(found, datetime.datetime)
    return None if ok else f"is {found!r}, not datetime.datetime"


CORE = (
    Seam(
        f"{_ID}:random",
        "patch",
        "checkpoint ids take 48 random bits (uuid6's node): seeded per test",
        probe=_a_random_module,
    ),
    Seam(
        f"{_ID}:_last_v6_timestamp",
        "patch",
        "uuid6 never repeats a timestamp (a module-level guard that only grows): emptied "
        "per test, and moved past a thread's newest stored checkpoint",
    ),
    Seam(
        f"{_ID}:uuid6",
        "read",
        "the guard and the random bits above are what uuid6 reads",
        source=("_last_v6_timestamp", "random.getrandbits(", "time.time_ns()"),
    ),
    *(
        Seam(
            f"{module}:datetime",
            "patch",
            "checkpoint timestamps (ts, created_at) come from datetime.now(): each is made at "
            "least a microsecond after the last, as a moving clock makes them",
            probe=_a_datetime_class,
        )
        for module in ("langgraph.pregel._checkpoint", "langgraph.pregel._loop")
    ),
    Seam(
        "concurrent.futures.thread:_global_shutdown_lock",
        "patch",
        "ThreadPoolExecutor.submit starts a worker (a switch point) holding this lock, made "
        "at import: LangGraph submits from pool workers, so per test it is one the "
        "scheduler manages",
    ),
    Seam(
        "concurrent.futures.thread:ThreadPoolExecutor.submit",
        "read",
        "the lock above is the one submit takes",
        source=("_global_shutdown_lock",),
    ),
    Seam(
        "langgraph.checkpoint.memory:random",
        "patch",
        "InMemorySaver's channel versions end in random.random(): seeded per test",
        probe=_a_random_module,
    ),
    Seam(
        "langgraph.pregel._retry:random",
        "patch",
        "a RetryPolicy's jitter is random.uniform (moves the virtual clock): seeded per test",
        probe=_a_random_module,
    ),
)


def _optional(module: str, name: str) -> tuple[Seam, ...]:
    """The seams another part of the adapter declares, when that part is present."""
    try:
        found = importlib.import_module(f"pytest_flows.langgraph.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"pytest_flows.langgraph.{module}":
            raise
        return ()
    return tuple(getattr(found, name))


SEAMS = Registry(
    "langgraph",
    __name__,
    *CORE,
    *_optional("_llm_seams", "LLM_SEAMS"),
    *_optional("_store_seams", "STORE_SEAMS"),
    *_optional("_explore_seams", "EXPLORE_SEAMS"),
    *_optional("_kept_pool", "KEPT_POOL_SEAMS"),
)
#: The flight recorder part's (pytest_flows/recorder/_langgraph.py), a registry of its own.
RECORDER_SEAMS = Registry("langgraph", __name__, *_optional("_recorder_seams", "RECORDER"))


def check_patch_points() -> None:
    """Raise ``SeamsMoved`` naming every declared LangGraph seam that moved."""
    installed, supported = framework_versions("langgraph")
    check_seams(
        (*SEAMS, *RECORDER_SEAMS), owner="langgraph", installed=installed, supported=supported
    )
