"""What the race detector records: dict keys and fields inside nested dicts and models."""

from __future__ import annotations

import time

from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel, Field

from pytest_flows import FlowsSession, explore


class DictClaim(Flow):
    """Check-then-write on a key of an unstructured (dict) state."""

    @start()
    def begin(self) -> None:
        self.state["items"] = []
        self.state["seen"] = 0

    def _claim(self, who: str) -> None:
        if len(self.state["items"]) < 1:
            time.sleep(0.01)
            self.state["items"].append(who)

    @listen(begin)
    def left(self) -> None:
        self._claim("left")

    @listen(begin)
    def right(self) -> None:
        self._claim("right")


class Limits(BaseModel):
    left: int = 0
    right: int = 0
    shared: int = 0


class Nested(BaseModel):
    limits: Limits = Field(default_factory=Limits)


class OwnNestedFields(Flow[Nested]):
    """Each listener bumps its own field of a nested model: nothing to interleave."""

    @start()
    def begin(self) -> None:
        return None

    @listen(begin)
    def left(self) -> None:
        self.state.limits.left = self.state.limits.left + 1

    @listen(begin)
    def right(self) -> None:
        self.state.limits.right = self.state.limits.right + 1


class SharedNestedField(Flow[Nested]):
    """Both listeners read-modify-write one field of a nested model."""

    @start()
    def begin(self) -> None:
        return None

    def _bump(self) -> None:
        n = self.state.limits.shared
        time.sleep(0.01)
        self.state.limits.shared = n + 1

    @listen(begin)
    def left(self) -> None:
        self._bump()

    @listen(begin)
    def right(self) -> None:
        self._bump()


class NestedDictKeys(Flow):
    """A dict inside a dict state: one key each, and one key both bump."""

    @start()
    def begin(self) -> None:
        self.state["counts"] = {"left": 0, "right": 0, "both": 0}

    @listen(begin)
    def left(self) -> None:
        counts = self.state["counts"]
        counts["left"] += 1
        both = counts["both"]
        time.sleep(0.01)
        counts["both"] = both + 1

    @listen(begin)
    def right(self) -> None:
        counts = self.state["counts"]
        counts["right"] += 1
        both = counts["both"]
        time.sleep(0.01)
        counts["both"] = both + 1


def _fields(found: object) -> set[tuple[str, str, str]]:
    return {(c.field, c.first, c.second) for c in found.conflicts}  # type: ignore[attr-defined]


def test_a_dict_states_key_is_named_in_the_conflict(flows: FlowsSession) -> None:
    found = explore(flows, DictClaim, max_schedules=500)
    assert found.complete
    assert _fields(found) == {("state.items", "left", "right")}
    assert sorted(o.run.state["items"] for o in found.outcomes) == [
        ["left"],
        ["left", "right"],
        ["right"],
        ["right", "left"],
    ]


def test_own_fields_of_a_nested_model_do_not_conflict(flows: FlowsSession) -> None:
    found = explore(flows, OwnNestedFields, max_schedules=50)
    assert found.complete and found.conflicts == []
    assert found.schedules_run == 1  # nothing two threads touch: nothing to interleave
    assert [o.run.state.limits.model_dump() for o in found] == [
        {"left": 1, "right": 1, "shared": 0}
    ]


def test_a_shared_field_of_a_nested_model_is_named_by_its_path(flows: FlowsSession) -> None:
    found = explore(flows, SharedNestedField, max_schedules=500)
    assert found.complete
    assert _fields(found) == {("state.limits.shared", "left", "right")}
    assert sorted(o.run.state.limits.shared for o in found) == [1, 2]


def test_keys_of_a_nested_dict_are_recorded_one_by_one(flows: FlowsSession) -> None:
    found = explore(flows, NestedDictKeys, max_schedules=500)
    assert found.complete
    assert _fields(found) == {("state.counts.both", "left", "right")}
    assert sorted(o.run.state["counts"]["both"] for o in found) == [1, 2]
    assert {o.run.state["counts"]["left"] for o in found} == {1}


def test_a_view_is_never_stored_inside_the_state(flows: FlowsSession) -> None:
    run = flows.run(NestedDictKeys, schedule="s")
    assert type(run.state["counts"]) is dict
