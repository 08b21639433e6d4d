"""Every reach pytest-flows makes into Agent Framework is declared, resolves, and fails loudly."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from agent_framework._workflows import _edge_runner, _runner_context

from pytest_flows._internal.contract.adapters import ADAPTERS
from pytest_flows._internal.contract.seams import SeamsMoved, problems
from pytest_flows.agent_framework import check_patch_points
from pytest_flows.agent_framework._seams import RECORDER_SEAMS, SEAMS

SUPPORTED = next(s for s in ADAPTERS if s.framework == "agent_framework").supported


def test_every_declared_agent_framework_seam_resolves_on_the_installed_version() -> None:
    assert problems(SEAMS) == []
    check_patch_points()


def test_a_moved_seam_names_itself_the_installed_version_and_the_supported_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(_edge_runner, "gather_cancelling_siblings_on_error")
    monkeypatch.delattr(_runner_context.InProcRunnerContext, "add_event")
    with pytest.raises(SeamsMoved) as moved:
        check_patch_points()
    lines = str(moved.value).splitlines()
    assert lines[0] == (
        f"pytest-flows' agent_framework seams moved (agent-framework-core "
        f"{version('agent-framework-core')} is installed; pytest-flows supports {SUPPORTED}). "
        "Pin a supported version or report it with the lines below:"
    )
    assert lines[1:] == [
        "  agent_framework._workflows._edge_runner:gather_cancelling_siblings_on_error (patch: "
        "the seed orders each superstep's concurrent deliveries) is gone (AttributeError: module "
        "'agent_framework._workflows._edge_runner' has no attribute "
        "'gather_cancelling_siblings_on_error')",
        "  agent_framework._workflows._runner_context:InProcRunnerContext.add_event (patch: "
        "events: observe() reports it for one workflow (an instance attribute shadows it)) "
        "is gone (AttributeError: add_event)",
    ]


def test_an_edge_runner_that_overrides_the_shadowed_method_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def own(self: object, *args: object) -> None:
        return None

    monkeypatch.setattr(_edge_runner.FanOutEdgeRunner, "_execute_on_target", own, raising=False)
    (line,) = [p for p in problems(SEAMS) if "_execute_on_target" in p]
    assert line.endswith("is overridden by ['FanOutEdgeRunner']")


def test_no_module_of_the_adapter_patches_agent_framework_by_hand() -> None:
    """Patches go through the registry (SEAMS[...].replace/shadow or seams.replaced)."""
    from pathlib import Path

    import pytest_flows.agent_framework as package

    offenders = [
        f"{path.name}:{number}"
        for path in sorted(Path(package.__file__).parent.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "setattr(" in line or (".__dict__[" in line and "] = " in line)
    ]
    assert offenders == []


def test_the_adapter_hands_its_declared_seams_to_the_contract() -> None:
    from pytest_flows.agent_framework._adapter import ADAPTER

    assert list(ADAPTER.seams()) == [*SEAMS, *RECORDER_SEAMS]
