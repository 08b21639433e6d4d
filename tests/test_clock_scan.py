"""freezegun's scan for clock functions is remembered per module, and stays right."""

from __future__ import annotations

import sys
import time
import types

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.clock_scan import remembering_scan


def _module(name: str, **names: object) -> types.ModuleType:
    module = types.ModuleType(name)
    vars(module).update(names)
    return module


def test_an_unchanged_module_is_scanned_once() -> None:
    scans: list[str] = []

    def scan(module: types.ModuleType) -> list[tuple[str, object]]:
        scans.append(module.__name__)
        return [("clock", module.clock)]

    remembered = remembering_scan(scan)
    module = _module("clock_scan_unchanged", clock=time.monotonic)

    assert remembered(module) == remembered(module) == [("clock", time.monotonic)]
    assert scans == ["clock_scan_unchanged"]


def test_a_module_that_gained_or_lost_a_name_or_was_reloaded_is_scanned_again() -> None:
    scans: list[str] = []

    def scan(module: types.ModuleType) -> list[tuple[str, object]]:
        scans.append(module.__name__)
        return sorted((k, v) for k, v in vars(module).items() if v is time.time)

    remembered = remembering_scan(scan)
    module = _module("clock_scan_changed")
    assert remembered(module) == []
    module.now = time.time
    assert remembered(module) == [("now", time.time)]
    del module.now
    assert remembered(module) == []
    assert remembered(_module("clock_scan_changed")) == []  # another object, same name

    assert len(scans) == 4


def test_a_clock_name_bound_after_the_first_session_reads_virtual_time_in_the_next() -> None:
    # `from time import time` in a module imported between two flows tests: the
    # remembered scan must not hide the new name from freezegun.
    module = _module("clock_scan_late_import", monotonic=time.monotonic)
    sys.modules[module.__name__] = module
    try:
        with FlowsSession(test_id="clock-scan-1"):
            assert module.monotonic() == time.monotonic()  # the fake, on virtual time
        module.wall = time.time
        with FlowsSession(test_id="clock-scan-2") as session:
            session.scheduler.clock.advance(5)
            assert module.wall() == time.time()  # the fake: the real clock reads today
        assert module.wall is time.time  # the real one again
    finally:
        del sys.modules[module.__name__]
