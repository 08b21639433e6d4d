"""Every access that can race is an access (issue 42): a nested model's method call, a
mutation through an alias of a state list (recorded when it happens), a module global
(a caveat naming it) and a router that loops back to a listener (no conflict).

Each compares a complete search with a seed sweep: the search must hold every outcome
the seeds reach (or, where it cannot record the access, say so)."""

from __future__ import annotations

import sys

import pytest
from access_flows import (
    LOG,
    AliasAppend,
    AttributeLog,
    GlobalLog,
    LoopAppends,
    NestedCopy,
    NestedMethod,
    OrCycle,
    RouterLoop,
)

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration.explore import outcome_key

_ID = "tests::accesses"


def _seeded(flow: type, seeds: range) -> set[str]:
    reached = set()
    for seed in seeds:
        with FlowsSession(seed=seed, test_id=_ID) as session:
            reached.add(outcome_key(session.run(flow, raise_on_error=False)))
    return reached


def _explored(flow: type, budget: int = 200) -> object:
    with FlowsSession(test_id=_ID) as session:
        return explore(session, flow, max_schedules=budget)


def test_a_nested_models_method_call_is_a_read() -> None:
    # model_copy() of state.usage once recorded nothing: both listeners' copies were
    # invisible, the search said complete after 2 schedules with tokens == 1 only, and
    # seeds reach tokens == 2 (one copies after the other stored its update).
    found = _explored(NestedCopy)
    assert found.complete, found.caveat
    assert {o.state.usage.tokens for o in found} == {1, 2}
    assert _seeded(NestedCopy, range(16)) <= set(found.texts)
    assert [(c.field, c.first, c.second) for c in found.conflicts] == [("state.usage", "a", "b")]


def test_a_nested_models_own_method_is_a_write_until_it_returns() -> None:
    # bump() reads tokens, sleeps and writes them back, inside the model: recorded as
    # one write when the call began, the search stopped complete after 2 schedules with
    # tokens == 1, while seeds reach 2 (one call ran whole before the other began).
    found = _explored(NestedMethod)
    assert found.complete, found.caveat
    assert {o.state.usage.tokens for o in found} == {1, 2}
    assert _seeded(NestedMethod, range(16)) <= set(found.texts)
    assert [(c.field, c.first, c.second) for c in found.conflicts] == [("state.usage", "a", "b")]


def test_an_append_through_an_alias_is_a_write_when_it_happens() -> None:
    # a reads the list, sleeps 0.5 s, then appends through its alias; b appends after the
    # same sleep. Recorded at a's read (0.5 s before b's append: too far to hold a back
    # past it), the two appends were never ordered: ["b", "a"] was missing.
    found = _explored(AliasAppend)
    assert found.complete, found.caveat
    assert {tuple(o.state.order) for o in found} == {("a", "b"), ("b", "a")}
    assert _seeded(AliasAppend, range(16)) <= set(found.texts)


def test_a_race_on_a_module_global_is_a_caveat_naming_it() -> None:
    # The search cannot see LOG's appends, and seeds reach an order it lacks: it must
    # not say complete, and it names the global and the two methods.
    found = _explored(GlobalLog)
    missed = _seeded(GlobalLog, range(24)) - set(found.texts)
    LOG.clear()
    assert missed == {'output="b,a" | state={}'}
    assert not found.complete
    assert "module global access_flows.LOG" in found.caveat
    assert "GlobalLog.a and GlobalLog.b" in found.caveat
    assert "not complete: module global access_flows.LOG" in str(found)


def test_a_race_on_an_attribute_of_the_flow_is_a_caveat_naming_it() -> None:
    found = _explored(AttributeLog)
    assert not found.complete
    assert "flow attribute self.calls is shared by AttributeLog.a and AttributeLog.b" in (
        found.caveat
    )


def test_a_global_only_one_method_at_a_time_touches_is_no_caveat() -> None:
    # RouterLoop's methods never overlap: nothing outside the state to warn about, and
    # the router that sends work round again is no conflict with it.
    found = _explored(RouterLoop)
    assert found.complete and not found.caveat
    assert found.conflicts == []
    assert [o.state.n for o in found] == [3]


def test_appends_of_tasks_on_the_loop_keep_their_order() -> None:
    with FlowsSession(test_id="tests::random-flows") as session:
        found = explore(session, LoopAppends, max_schedules=200)
    reached = set()
    for seed in (0, 3):
        with FlowsSession(seed=seed, test_id="tests::random-flows") as seeded:
            reached.add(outcome_key(seeded.run(LoopAppends)))
    assert found.complete, found.caveat
    assert sorted(o.state.log for o in found) == [["s0", "m2", "m3"], ["s0", "m3", "m2"]]
    assert reached == set(found.texts)


def test_crewais_rearm_of_a_fired_or_listener_is_a_write_of_its_fires_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A router's fresh label re-arms the fired or_ listeners it feeds (crewAI's
    # _rearm_or_listeners_for_trigger, in a cycle): like its clear of them, a source's
    # end after it fires such a listener again, so it is recorded as the clear is.
    from pytest_flows.crewai import _patches

    rearms: list[str] = []
    original = _patches.record_access

    def spy(key: str, *, write: bool, **kwargs: object) -> None:
        if sys._getframe(1).f_code.co_name == "rearmed" and write:
            rearms.append(key)
        original(key, write=write, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_patches, "record_access", spy)
    with FlowsSession(test_id=_ID) as session:
        run = session.run(OrCycle, schedule="s")
    assert run.state.n == 2  # work ran again: re-armed by the router's "again"
    assert rearms == ["fires:work"]
