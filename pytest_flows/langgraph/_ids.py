"""LangGraph's ids, fixed per test, and the stable names the trace gives them.

A checkpoint id is ``uuid6(clock_seq=step)`` (``langgraph.checkpoint.base.id``): the
clock (the harness's virtual one), 48 bits of the module's global ``random`` and a
module-level ``_last_v6_timestamp`` that only grows. Task ids, interrupt ids and
subgraph namespaces are hashes of the checkpoint id, so they follow. Channel versions
(``InMemorySaver.get_next_version``) and retry jitter (``pregel._retry``) draw from the
same global ``random``. Per test, each of those modules gets a ``random.Random``
seeded from the test and the seed, and the last timestamp starts empty: the same test
and seed give the same ids in any process, under any hash seed, in any test order.
"""

from __future__ import annotations

import contextlib
import random
import uuid
from collections.abc import Iterator
from typing import Any

from pytest_flows.langgraph._seams import SEAMS

__all__ = ["ID_MODULE", "TIMESTAMPED", "Names", "deterministic_ids", "ids_after"]

ID_MODULE = "langgraph.checkpoint.base.id"

#: The modules whose global ``random`` LangGraph draws ids, versions and jitter from.
_RANDOM_USERS = (
    f"{ID_MODULE}:random",
    "langgraph.checkpoint.memory:random",
    "langgraph.pregel._retry:random",
)

#: The modules that stamp checkpoints with ``datetime.now(timezone.utc)`` (``ts``).
TIMESTAMPED = (
    "langgraph.pregel._checkpoint:datetime",
    "langgraph.pregel._loop:datetime",
)

#: 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
_UUID_EPOCH_OFFSET = 0x01B21DD213814000


@contextlib.contextmanager
def deterministic_ids(seed_text: str) -> Iterator[None]:
    """LangGraph's id sources seeded from ``seed_text`` (the test and its seed), and
    the uuid6 clock guard emptied, for the block; everything restored afterwards."""
    with contextlib.ExitStack() as stack:
        for n, target in enumerate(_RANDOM_USERS):
            rng = random.Random(f"pytest-flows-langgraph:{seed_text}:{n}")
            stack.enter_context(SEAMS[target].replace(_SeededRandom(rng)))
        # The guard only grows: left as an earlier test (or real time) set it, the
        # ids of this test would depend on what ran before it.
        stack.enter_context(SEAMS[f"{ID_MODULE}:_last_v6_timestamp"].replace(None))
        ticking = _Ticking()
        for target in TIMESTAMPED:
            seam = SEAMS[target]
            owner, name = seam.owner_and_name
            stack.enter_context(seam.replace(ticking.subclass(getattr(owner, name))))
        yield


#: ``random``'s module functions as imported (a test's ``patch("random.uniform")``
#: replaces the module attribute, not these).
_ORIGINAL = {name: getattr(random, name) for name in ("random", "uniform", "getrandbits")}


class _SeededRandom:
    """Stands for the ``random`` module in a LangGraph module: its functions draw from a
    seeded ``random.Random``, unless the test patched that function of ``random`` itself
    (``patch("random.uniform", ...)``, as LangGraph's own retry tests do): then the
    patch answers, as it would without the harness."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def __getattr__(self, name: str) -> Any:
        current = getattr(random, name)
        if name in _ORIGINAL and current is _ORIGINAL[name]:
            return getattr(self._rng, name)
        return current


class _Ticking:
    """Checkpoint timestamps that never repeat: each is at least a microsecond after the
    previous one (the virtual clock stands still while a graph runs, where a real one
    moves between two checkpoints; LangGraph and its users order checkpoints by
    ``created_at``, which a still clock would tie)."""

    def __init__(self) -> None:
        from pytest_flows.adapters import internal_lock

        # the harness's bookkeeping: a switch point here is none in production
        self._lock = internal_lock()
        self._last: Any = None

    def subclass(self, base: Any) -> Any:
        import datetime as _dt

        ticking = self

        def now(cls: Any, tz: Any = None) -> Any:
            value = base.now(tz)
            with ticking._lock:
                last = ticking._last
                comparable = last is not None and (last.tzinfo is None) == (value.tzinfo is None)
                if comparable and value <= last:
                    value = last + _dt.timedelta(microseconds=1)
                ticking._last = value
            return value

        return type(
            base.__name__, (base,), {"now": classmethod(now), "__module__": base.__module__}
        )


def _v6_timestamp(checkpoint_id: str) -> int | None:
    """The 100-ns timestamp a uuid6 checkpoint id carries, or None (not a uuid6)."""
    try:
        value = uuid.UUID(checkpoint_id)
    except (TypeError, ValueError):
        return None
    if value.version != 6:
        return None
    number = value.int
    return ((number >> 80) << 12) | ((number >> 64) & 0x0FFF)


def ids_after(checkpoint_ids: list[str]) -> None:
    """New checkpoint ids sort after ``checkpoint_ids`` (stored ones), whatever the clock.

    LangGraph takes a thread's latest checkpoint to be its greatest id; a thread stored
    under a later clock than the test's virtual one would otherwise get new checkpoints
    that sort older, and its state would look unchanged after a run. The uuid6 guard is
    moved past the newest stored id (the virtual epoch starts after it, for ids).
    """
    import importlib

    module: Any = importlib.import_module(ID_MODULE)
    stamps = [s for s in map(_v6_timestamp, checkpoint_ids) if s is not None]
    if not stamps:
        return
    newest = max(stamps)
    last = module._last_v6_timestamp
    if last is None or last < newest:
        module._last_v6_timestamp = newest


class Names:
    """Stable names for one test's LangGraph ids, in first-seen order: checkpoints
    ``c1``, ``c2``..., interrupts ``i1``..., threads keep theirs."""

    def __init__(self) -> None:
        self._checkpoints: dict[str, str] = {}
        self._interrupts: dict[str, str] = {}

    def checkpoint(self, checkpoint_id: Any) -> str:
        if checkpoint_id is None:
            return "-"
        key = str(checkpoint_id)
        name = self._checkpoints.get(key)
        if name is None:
            name = self._checkpoints[key] = f"c{len(self._checkpoints) + 1}"
        return name

    def knows_checkpoint(self, checkpoint_id: Any) -> bool:
        return str(checkpoint_id) in self._checkpoints

    def interrupt(self, interrupt_id: Any) -> str:
        key = str(interrupt_id)
        name = self._interrupts.get(key)
        if name is None:
            name = self._interrupts[key] = f"i{len(self._interrupts) + 1}"
        return name

    def checkpoint_id(self, name: str) -> str | None:
        """The raw id a name stands for (None: no such name in this test)."""
        return next((raw for raw, n in self._checkpoints.items() if n == name), None)
