"""Deprecated alias (races and exploring seeds): import from :mod:`pytest_flows` instead.

``pytest_flows.races`` was a documented import path before pytest-flows 0.2.0
moved its code under ``pytest_flows._internal``. It re-exports the same objects
and warns once when imported; it goes in 0.4.0 (CHANGELOG.md).

Two names differ. ``races`` (every race of a run) has no public name yet: the
name ``pytest_flows.races`` is this module's, so the root cannot export it; it
is re-exported from where it lives. ``explore`` here is not the public object:
it ran the flow once per seed, ``seeds=range(8)`` unless given, and returned
``RaceOutcomes``, while :func:`pytest_flows.explore` without ``seeds``
enumerates schedules. It keeps the old default and forwards everything to the
public one (with ``seeds`` given, the two are the same call).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pytest_flows import RaceOutcomes, RaceResult, race_of
from pytest_flows import explore as _explore
from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows._internal.exploration.races import races

#: Where each name lives now.
HOMES = {
    "pytest_flows": ["RaceOutcomes", "RaceResult", "explore", "race_of"],
}
#: Names whose object here differs from the public one, and why.
WRAPPERS = {"explore": "keeps seeds=range(8) as the default (the public explore enumerates)"}
#: Names the first round's page documented (``races(run)``) that have no public home
#: yet: the name ``pytest_flows.races`` is this module's, so the root cannot export it.
UNHOMED = {"races": "every race of a run; race_of(run, 'or(a, b)') reads one"}
__all__ = ["RaceOutcomes", "RaceResult", "explore", "race_of", "races"]


def explore(
    flows: Any, target: Any, *args: Any, seeds: Iterable[int] = range(8), **kwargs: Any
) -> Any:
    """Run ``target`` once per seed (``range(8)`` unless given) and collect its races
    into :class:`~pytest_flows.RaceOutcomes`, as ``pytest_flows.races.explore`` did:
    ``pytest_flows.explore(flows, target, *args, seeds=seeds, **kwargs)``."""
    return _explore(flows, target, *args, seeds=seeds, **kwargs)


warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
