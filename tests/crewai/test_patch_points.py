"""Every private crewai seam pytest-flows patches is still where it was."""

from __future__ import annotations

import pytest
from crewai.events.event_bus import CrewAIEventsBus

from pytest_flows.crewai import patches


def test_all_crewai_patch_points_are_in_place() -> None:
    patches.check_patch_points()


def test_a_moved_seam_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(CrewAIEventsBus, "reset_runtime_state")
    with pytest.raises(AssertionError) as info:
        patches.check_patch_points()
    assert str(info.value).startswith(
        "pytest-flows' crewai patch points moved (crewai upgrade?): "
        "crewai_event_bus.reset_runtime_state() is gone. "
        "pytest-flows supports crewai>=1.15.23,<1.16 (installed: crewai "
    )
