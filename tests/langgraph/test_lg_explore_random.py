"""Exploration is sound on generated LangGraph graphs (a fan-out by edges or ``Send``,
sync or async workers on a shared ``InMemoryStore`` with sleeps, each returning what it
read, failing, calling ``interrupt()`` or writing a plain channel; a join, a router):
every outcome seeds reach is among a complete exploration's, and every outcome replays
from its schedule. See tests/crewai/test_explore_random.py; ``PYTEST_FLOWS_LONG=1``
widens it as for the other two frameworks (``PYTEST_FLOWS_SOUNDNESS_LOG`` lists each
graph's search: complete, schedules, outcomes, seconds)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from lg_random_graphs import Spec, Worker, graph_source, graph_specs
from random_flows import (
    MAX_SCHEDULES,
    SEEDS,
    SHARDS,
    SOUNDNESS_SETTINGS,
    Checked,
    check_drawn,
    check_sound,
    load,
)

INPUT = {"notes": []}
#: The cap of the named graphs' searches below (each asserts its own bound under it).
NAMED_CAP = 150


def check_graph(
    build: Any,
    source: str,
    *,
    asynchronous: bool,
    spec: Spec | None = None,
    max_schedules: int = NAMED_CAP,
) -> Checked:
    """The invariant for the graph ``build`` returns (``random_flows.check_sound``); the
    seeds run under the test id the counterexamples below were found under."""
    return check_sound(
        build,
        (INPUT,),
        source,
        seeds=SEEDS,
        max_schedules=max_schedules,
        rebuild=build,
        options={"asynchronous": True} if asynchronous else {},
        test_id="tests::random-graphs",
        log_extra={"ends": [w.end for w in spec.workers]} if spec is not None else None,
    )


@pytest.mark.parametrize("shard", range(SHARDS))
@SOUNDNESS_SETTINGS
@given(spec=graph_specs())
def test_seeded_outcomes_are_among_a_complete_explorations(shard: int, spec: Spec) -> None:
    source = graph_source(spec)
    check_drawn(
        source,
        lambda: check_graph(
            load(source, "build"),
            source,
            asynchronous=spec.is_async,
            spec=spec,
            max_schedules=MAX_SCHEDULES,
        ),
    )


def test_a_generated_async_graph_has_the_one_outcome_asyncio_gives():
    # Two async workers read x, sleep as long, write x + 1. asyncio runs ready tasks
    # first in, first out and their timers in the order they were set, so bare the
    # update is lost every time (x == 1); the harness invents no other order.
    spec = Spec(
        is_async=True,
        send=False,
        router=False,
        workers=(Worker((("get", "x"), ("sleep", 1), ("put", "x"))),) * 2,
    )
    source = graph_source(spec)
    build = load(source, "build")
    checked = check_graph(build, source, asynchronous=True)
    assert checked == Checked(complete=True, schedules=1, outcomes=1, seeded=1)
    import asyncio

    bare = asyncio.run(build().ainvoke(dict(INPUT)))
    assert bare["notes"][-1] == "join {'x': 1, 'y': 0}"


def test_the_source_of_a_spec_is_what_a_user_writes():
    spec = Spec(is_async=False, send=True, router=True, workers=(Worker((("put", "y"),)),) * 2)
    source = graph_source(spec)
    assert "Send(n, s)" in source and "add_conditional_edges('join', route" in source
    notes = load(source, "build")().invoke(dict(INPUT))["notes"]
    assert notes == ["fan", "w0:0", "w1:0", "join {'x': 0, 'y': 1}"]  # x is 0: no "hi"


def test_two_failing_sync_workers_surface_either_error_in_a_complete_search():
    # Which error surfaces depends on the order the two end in and the runner sees
    # them (LangGraph popped them from a set: by memory address). 77 schedules today
    # (34 while a future's key was numbered across the runs of a search, see below; 55
    # before a commit that waits for the pool's lock was ordered against the shutdown).
    failing = Worker((("put", "x"),), "fail")
    spec = Spec(is_async=False, send=False, router=False, workers=(failing, failing))
    source = graph_source(spec)
    build = load(source, "build")
    checked = check_graph(build, source, asynchronous=False)
    assert checked.complete and checked.outcomes == 2, checked
    assert checked.schedules <= 100, checked


#: Generated shapes with real overlap, checked on every run (the sample above is small):
#: (spec, outcomes a complete search finds, schedules it takes today)
OVERLAPPING = {
    # two read-modify-writes of one key: either last, or the update lost
    "lost-update": (Spec(False, False, False, (Worker((("get", "x"), ("put", "x"))),) * 2), 3, 14),
    # one fails after a put, the other's write saved or not when the runner stops
    "fail-beside-a-writer": (
        Spec(
            False,
            False,
            False,
            (Worker((("put", "y"),), "fail"), Worker((("get", "x"), ("put", "x")))),
        ),
        2,
        37,
    ),
}


@pytest.mark.parametrize("name", sorted(OVERLAPPING))
def test_generated_graphs_with_overlap_explore_complete_with_every_seeded_outcome(name: str):
    spec, outcomes, schedules = OVERLAPPING[name]
    source = graph_source(spec)
    checked = check_graph(load(source, "build"), source, asynchronous=spec.is_async, spec=spec)
    assert checked.complete, checked
    assert checked.outcomes == outcomes, checked
    assert checked.schedules <= 2 * schedules, checked


def test_a_writer_and_two_readers_of_one_key_explore_every_order():
    # The long random check's counterexample: seed 4 (test id tests::random-graphs) has
    # w1 read after w0's put and w2 before it, which a search said complete after 25
    # schedules without (the other three outcomes). The race of w1's read and w0's put
    # (w2's read between them) was left to the run that reverses the latest race (w2's
    # read, the put), and in that run the put's thread slept where w1 read (its put ran
    # first at an earlier point), so the reversal tried nothing; the order it stood for
    # begins with w2's worker taking its job (docs/exploration.md, "A race behind a
    # sleeping thread"). 27 schedules now, all four outcomes.
    spec = Spec(
        is_async=False,
        send=False,
        router=False,
        workers=(Worker((("put", "x"),)), Worker((("get", "x"),)), Worker((("get", "x"),))),
    )
    source = graph_source(spec)
    checked = check_graph(load(source, "build"), source, asynchronous=False, spec=spec)
    # seeds 0..7 reach all four (seed 4: "w1:1", "w2:0"), and the search finds them all
    assert checked.seeded == 4, checked
    assert checked.complete and checked.outcomes == 4, checked
    assert checked.schedules <= 70, checked


def test_a_sibling_whose_writes_a_failure_drops_explores_every_order():
    # The long random check's second counterexample: w1 reads, sleeps 0.08 s and fails;
    # w0 reads, sleeps 0.11 s, reads twice more and returns. Seed 3 holds w1 back while
    # the clock runs to w0's wake-up, so w0 ends after the runner saw w1 fail and shut
    # its pool: w0's writes are dropped (notes []). A search said complete after 8
    # schedules with w0's writes saved only: a future's key (each task's start and end
    # write it, the runner's look at the futures reads it) was numbered across the runs
    # of the search, so a step of an earlier run never matched this run's, and w0's
    # worker slept past the runner's look at its future. Numbered per run: 9 schedules,
    # both outcomes.
    spec = Spec(
        is_async=False,
        send=False,
        router=False,
        workers=(
            Worker((("get", "x"), ("sleep", 11), ("get", "x"), ("get", "x"))),
            Worker((("get", "x"), ("get", "x"), ("sleep", 8)), "fail"),
        ),
    )
    source = graph_source(spec)
    checked = check_graph(load(source, "build"), source, asynchronous=False, spec=spec)
    assert checked.seeded == 2, checked  # seeds 0..7: saved, and dropped (seed 3)
    assert checked.complete and checked.outcomes == 2, checked
    assert checked.schedules <= 20, checked


def test_two_interrupts_before_an_error_explore_either_last():
    # The long random check's counterexample (2026-12-06, shrunk by hand): w0 and w1
    # both write the plain channel `last` (InvalidUpdateError when the superstep ends),
    # w2 and w3 interrupt, w3 after a sleep. Each interrupting task puts its interrupt on
    # the stream as it ends, with a values chunk holding its interrupt alone; the error
    # leaves that chunk as the run's last, so which of w2 and w3 ended last is in the
    # outcome. Seeds 7 and 10 hold w2 back past w3's wake-up; a search of 10 schedules
    # said complete with w3 last only: the two puts recorded nothing. An interrupt's
    # put now writes the stream's key (lg:stream): 100 schedules, both outcomes. The
    # interrupting task's end writes it too, where its commit takes the pool's submit
    # lock (soundness_misses/two_interrupts_past_two_sleeps.txt): 204 schedules. The
    # runner's add of a future is ordered against an interrupting end (which thread
    # commits it: soundness_misses/two_interrupts_in_a_send_fan_out.txt): 338.
    interrupting = Worker((("get", "y"),), "interrupt")
    sleeping = Worker((("sleep", 3),), "interrupt")
    last = Worker((), "last")
    spec = Spec(False, False, False, (last, last, interrupting, sleeping))
    source = graph_source(spec)
    checked = check_graph(
        load(source, "build"), source, asynchronous=False, spec=spec, max_schedules=400
    )
    assert checked.seeded == 2, checked  # seed 7 has w2 last, the others w3
    assert checked.complete and checked.outcomes == 2, checked
    assert checked.schedules <= 450, checked
