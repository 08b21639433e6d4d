"""Supported framework ranges: a missing module or seam names the range and the version."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from pytest_flows._internal.contract.adapters import ADAPTERS, unsupported

CREWAI = next(s for s in ADAPTERS if s.framework == "crewai")
AGENT_FRAMEWORK = next(s for s in ADAPTERS if s.framework == "agent_framework")


def test_the_supported_ranges_are_the_extras_ranges() -> None:
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads(
        (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    extras = pyproject["project"]["optional-dependencies"]
    assert extras["crewai"] == [CREWAI.supported]
    assert extras["agent-framework"] == [AGENT_FRAMEWORK.supported]


def test_a_missing_framework_module_names_the_supported_range() -> None:
    pytest.importorskip("crewai")
    missing = ModuleNotFoundError(
        "No module named 'crewai.events.stream_context'", name="crewai.events.stream_context"
    )
    error = unsupported(CREWAI, missing)
    message = str(error)
    assert "pytest-flows' crewai adapter cannot load" in message
    assert "No module named 'crewai.events.stream_context'" in message
    assert f"It supports crewai>=1.14.7,<1.16; crewai {version('crewai')} is installed" in message
    assert "pip install 'pytest-flows[crewai]'" in message
    assert error.name == "crewai.events.stream_context"


def test_an_unrelated_import_error_is_left_alone() -> None:
    other = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert unsupported(CREWAI, other) is other


def test_a_moved_crewai_seam_names_the_supported_range(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("crewai")
    from crewai.events.event_bus import crewai_event_bus

    from pytest_flows.crewai import _patches as patches

    monkeypatch.setattr(type(crewai_event_bus), "reset_runtime_state", None)
    with pytest.raises(AssertionError) as moved:
        patches.check_patch_points()
    message = str(moved.value)
    assert "CrewAIEventsBus.reset_runtime_state (call: " in message
    assert f"crewai {version('crewai')} is installed; pytest-flows supports {CREWAI.supported}" in (
        message
    )
