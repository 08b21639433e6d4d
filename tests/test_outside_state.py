"""outside_state reads a class's methods for what they share outside the state: module
globals holding data and attributes of ``self`` that one of them writes."""

from __future__ import annotations

import threading

from pytest_flows._internal.runtime.outside_state import outside_state, overlapping, shared_outside

SEEN: list[str] = []
LIMITS = {"max": 3}
LOCK = threading.Lock()
NAME = "constant"


class Base:  # stands for the framework's class: its names are not shared data
    state: object = None

    def kickoff(self) -> None:
        self.state = object()


class Flow(Base):
    def a(self) -> None:
        SEEN.append("a")
        with LOCK:
            _ = NAME

    def b(self) -> None:
        _ = len(SEEN), LIMITS["max"]
        self._record("b")

    def _record(self, who: str) -> None:
        self.calls = [who]

    def c(self) -> None:
        _ = LIMITS["max"], self.state


_FRAMEWORK = ("tests_base",)
Base.__module__ = "tests_base.flow"


def test_writes_reads_and_a_helpers_write_are_found() -> None:
    found = dict(outside_state(Flow, _FRAMEWORK))
    assert found == {
        f"module global {__name__}.SEEN": {"a": True, "b": False},
        "flow attribute self.calls": {"_record": True, "b": True},
    }  # LIMITS is only read, LOCK and NAME are no data, state is the framework's


def test_only_methods_that_ran_together_are_a_caveat() -> None:
    assert shared_outside(Flow, _FRAMEWORK, set()) == []
    assert shared_outside(Flow, _FRAMEWORK, {frozenset(("a", "c"))}) == []
    (caveat,) = shared_outside(Flow, _FRAMEWORK, {frozenset(("a", "b"))})
    assert caveat.startswith(f"module global {__name__}.SEEN is shared by Flow.a and Flow.b")


def test_overlapping_methods_are_read_from_starts_and_ends() -> None:
    events = [
        ("started", "begin"),
        ("finished", "begin"),
        ("started", "a"),
        ("started", "b"),
        ("finished", "a"),
        ("started", "c"),
        ("failed", "b"),
        ("finished", "c"),
    ]
    assert overlapping(events) == {frozenset(("a", "b")), frozenset(("b", "c"))}
