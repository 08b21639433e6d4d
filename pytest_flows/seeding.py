"""Reseeding the scheduler for a block: the one way every property and exploration
helper runs a flow under another seed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_flows.loop import Scheduler

__all__ = ["reseeded"]


@contextlib.contextmanager
def reseeded(scheduler: Scheduler, seed: int | None) -> Iterator[None]:
    """Run the block with ``scheduler`` reseeded to ``seed`` (None: leave it as is).

    The scheduler object stays the same: the adapters captured it when the
    test's session opened (crewai's race ordering holds its ``order``), so a
    replacement would leave them on the old seed.
    """
    if seed is None:
        yield
        return
    previous = scheduler.seed
    scheduler.seed = seed
    scheduler.__post_init__()  # a fresh random stream (and thread scheduler) for the seed
    try:
        yield
    finally:
        scheduler.seed = previous
        scheduler.__post_init__()
