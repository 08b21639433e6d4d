"""The conformance suite for crewai ``FlowPersistence`` backends.

What crewai relies on when it resumes (``restore_from_state_id``), forks and
pauses for human feedback, checked against any backend: states come back as
the JSON-shaped dict ``SQLiteFlowPersistence`` returns (a pydantic state
validates back to an equal model), the newest save of an id wins, ids do not
leak into each other, pending feedback round-trips and clears, concurrent saves
are all kept, a missing id loads ``None`` and a corrupt record raises instead of
loading as a fresh start.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel, Field

__all__ = ["FlowPersistenceSuite", "SampleItem", "SampleState"]


class SampleItem(BaseModel):
    name: str
    qty: int = 1


class SampleState(BaseModel):
    """A state with the field types real flows persist (JSON-native and not)."""

    id: str = ""
    counter: int = 0
    ratio: float = 0.5
    tags: list[str] = Field(default_factory=list)
    when: dt.datetime = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    ref: uuid.UUID = uuid.UUID(int=7)
    items: list[SampleItem] = Field(default_factory=list)
    notes: dict[str, str] = Field(default_factory=dict)
    maybe: str | None = None


def _state(state_id: str, counter: int = 0) -> SampleState:
    return SampleState(
        id=state_id,
        counter=counter,
        tags=["a", "b"],
        items=[SampleItem(name="x", qty=2)],
        notes={"k": "v ü"},
    )


class FlowPersistenceSuite:
    """Checks for a crewai ``FlowPersistence``; subclass it in a ``Test*`` class.

    Provide a ``persistence`` fixture that returns a fresh, empty backend.
    Override :meth:`corrupt_state` to run the corrupt-record check (it is
    skipped otherwise), and set ``supports_pending_feedback = False`` for a
    backend that keeps crewai's default (no pending-feedback storage).
    """

    supports_pending_feedback: bool = True
    #: Threads and saves per thread of the concurrency check.
    concurrent_threads: int = 4
    concurrent_saves: int = 5

    def corrupt_state(self, persistence: Any, flow_uuid: str) -> None:
        """Damage the stored latest state of ``flow_uuid`` (as a bad disk write would)."""
        pytest.skip(
            f"{type(self).__name__} does not override corrupt_state(persistence, flow_uuid); "
            "write a damaged record there (say, truncated JSON) to run this check"
        )

    # -- round trips through the codec --------------------------------------------
    def test_missing_id_loads_none(self, persistence: Any) -> None:
        assert persistence.load_state("never-saved") is None

    def test_dict_state_round_trips(self, persistence: Any) -> None:
        state = {"id": "dict-1", "n": 3, "nested": {"list": [1, 2.5, None, True], "s": "é"}}
        persistence.save_state("dict-1", "start", state)
        assert persistence.load_state("dict-1") == state

    def test_model_state_round_trips_through_the_codec(self, persistence: Any) -> None:
        state = _state("model-1", counter=4)
        persistence.save_state("model-1", "step", state)
        loaded = persistence.load_state("model-1")
        assert isinstance(loaded, dict), (
            f"load_state must return a dict (crewai validates it into the state model), "
            f"got {type(loaded).__qualname__}"
        )
        assert loaded == state.model_dump(mode="json"), (
            "load_state must return what SQLiteFlowPersistence returns: "
            "model_dump(mode='json') of the saved state"
        )
        assert SampleState.model_validate(loaded) == state

    def test_saving_does_not_keep_a_reference(self, persistence: Any) -> None:
        log = ["a"]
        persistence.save_state("ref-1", "start", {"id": "ref-1", "log": log})
        log.append("changed after the save")
        assert persistence.load_state("ref-1") == {"id": "ref-1", "log": ["a"]}

    # -- latest and lineage ----------------------------------------------------------
    def test_latest_save_wins(self, persistence: Any) -> None:
        for n, method in enumerate(["start", "middle", "end"], start=1):
            persistence.save_state("hist-1", method, _state("hist-1", counter=n))
        loaded = persistence.load_state("hist-1")
        assert loaded is not None and loaded["counter"] == 3

    def test_ids_are_kept_apart(self, persistence: Any) -> None:
        persistence.save_state("a-1", "start", _state("a-1", counter=1))
        persistence.save_state("b-1", "start", _state("b-1", counter=2))
        persistence.save_state("a-1", "next", _state("a-1", counter=10))
        a, b = persistence.load_state("a-1"), persistence.load_state("b-1")
        assert a is not None and (a["id"], a["counter"]) == ("a-1", 10)
        assert b is not None and (b["id"], b["counter"]) == ("b-1", 2)

    # -- pending human feedback ---------------------------------------------------------
    def _context(self, flow_uuid: str) -> Any:
        from crewai.flow.async_feedback.types import PendingFeedbackContext

        return PendingFeedbackContext(
            flow_id=flow_uuid,
            flow_class="app.flows.ReviewFlow",
            method_name="review",
            method_output={"draft": "text"},
            message="Approve?",
            emit=["approved", "rejected"],
            default_outcome="rejected",
            requested_at=dt.datetime(2026, 1, 2, 3, 4, 5),
        )

    def test_pending_feedback_round_trips_and_clears(self, persistence: Any) -> None:
        if not self.supports_pending_feedback:
            pytest.skip("supports_pending_feedback = False")
        state = _state("fb-1", counter=5)
        persistence.save_pending_feedback("fb-1", self._context("fb-1"), state)
        loaded = persistence.load_pending_feedback("fb-1")
        assert loaded is not None, "load_pending_feedback returned None right after a save"
        loaded_state, context = loaded
        assert loaded_state == state.model_dump(mode="json")
        assert (context.flow_id, context.method_name, context.emit, context.method_output) == (
            "fb-1",
            "review",
            ["approved", "rejected"],
            {"draft": "text"},
        )
        assert context.default_outcome == "rejected"
        # crewai resumes a paused flow from its state too (SQLite saves both)
        latest = persistence.load_state("fb-1")
        assert latest is not None and latest["counter"] == 5
        persistence.clear_pending_feedback("fb-1")
        assert persistence.load_pending_feedback("fb-1") is None

    def test_missing_pending_feedback_loads_none(self, persistence: Any) -> None:
        assert persistence.load_pending_feedback("never-paused") is None

    # -- concurrency -----------------------------------------------------------------------
    def test_concurrent_saves_are_all_kept(self, persistence: Any) -> None:
        threads, saves = self.concurrent_threads, self.concurrent_saves
        start = threading.Barrier(threads)

        def writer(t: int) -> None:
            start.wait()
            for n in range(1, saves + 1):
                persistence.save_state(f"own-{t}", f"step{n}", _state(f"own-{t}", counter=n))
                persistence.save_state("shared", f"t{t}", {"id": "shared", "writer": t, "n": n})

        with ThreadPoolExecutor(threads) as pool:
            for future in [pool.submit(writer, t) for t in range(threads)]:
                future.result()
        for t in range(threads):
            own = persistence.load_state(f"own-{t}")
            assert own is not None and own["counter"] == saves, (
                f"own-{t}: expected its last save (counter={saves}), got {own!r}"
            )
        shared = persistence.load_state("shared")
        assert shared is not None and shared["writer"] in range(threads)
        assert shared["n"] in range(1, saves + 1)

    # -- damaged records -----------------------------------------------------------------------
    def test_corrupt_record_raises(self, persistence: Any) -> None:
        persistence.save_state("bad-1", "start", _state("bad-1"))
        self.corrupt_state(persistence, "bad-1")
        # None would make crewai start the flow afresh under the same id,
        # silently dropping the work that was saved.
        try:
            result = persistence.load_state("bad-1")
        except Exception:
            return
        pytest.fail(
            f"load_state returned {result!r} for a corrupt record instead of raising: crewai "
            "would resume from it (or, for None, start afresh under the same id)"
        )
