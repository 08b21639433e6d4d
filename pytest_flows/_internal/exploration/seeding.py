"""Reseeding the scheduler for a block, and running a flow under many seeds: the one
way every property and exploration helper (and both adapters) does it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.runtime.loop import Scheduler
    from pytest_flows._internal.session import FlowsSession

__all__ = ["reseeded", "runs_by_seed"]


@contextlib.contextmanager
def reseeded(scheduler: Scheduler, seed: int | None) -> Iterator[None]:
    """Run the block with ``scheduler`` reseeded to ``seed`` (None: leave it as is).

    The scheduler object stays the same (:meth:`Scheduler.reseed`).
    """
    if seed is None:
        yield
        return
    previous = scheduler.seed
    scheduler.reseed(seed)
    try:
        yield
    finally:
        scheduler.reseed(previous)


def runs_by_seed(
    flows: FlowsSession,
    fresh: Callable[[], Any],
    seeds: Iterable[int],
    outcome: Callable[[FlowRun], str],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> tuple[dict[int, FlowRun], dict[str, list[int]]]:
    """Run ``fresh()`` once per seed (failed runs kept) and group the seeds by ``outcome``.

    The seed exploration every adapter's helpers share: ``explore(seeds=...)``
    groups by the races a run had, Agent Framework's ``explore_seeds`` by the
    whole trace and final state.
    """
    from pytest_flows._internal.fakes.rewind import ScriptMark

    runs: dict[int, FlowRun] = {}
    grouped: dict[str, list[int]] = {}
    # Every seed runs the same scenario: each answers from the scripts as they stand now.
    mark = ScriptMark(flows)
    for seed in seeds:
        with reseeded(flows.scheduler, seed):
            run = mark.replay(
                lambda: flows.run(fresh(), *args, raise_on_error=False, **dict(kwargs or {}))
            )
        runs[seed] = run
        grouped.setdefault(outcome(run), []).append(seed)
    return runs, grouped
