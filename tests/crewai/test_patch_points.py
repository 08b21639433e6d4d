"""Every reach pytest-flows makes into crewai is declared, resolves, and fails loudly if moved."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from crewai.events.event_bus import CrewAIEventsBus
from crewai.flow.runtime import Flow

from pytest_flows._internal.contract.adapters import ADAPTERS
from pytest_flows._internal.contract.seams import SeamsMoved, problems
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai import _seams as seams

SUPPORTED = next(s for s in ADAPTERS if s.framework == "crewai").supported


def test_every_declared_crewai_seam_resolves_on_the_installed_crewai() -> None:
    assert problems(seams.SEAMS) == []
    patches.check_patch_points()  # the documented name, and the crew/tool/stdlib checks


def test_a_deleted_seam_names_itself_the_installed_crewai_and_the_supported_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(CrewAIEventsBus, "reset_runtime_state")
    with pytest.raises(SeamsMoved) as moved:
        patches.check_patch_points()
    assert str(moved.value).splitlines() == [
        f"pytest-flows' crewai seams moved (crewai {version('crewai')} is installed; "
        f"pytest-flows supports {SUPPORTED}). Pin a supported version or report it with "
        "the lines below:",
        "  crewai.events.event_bus:CrewAIEventsBus.reset_runtime_state (call: no RuntimeState "
        "leaks between tests) is gone (AttributeError: reset_runtime_state)",
    ]


def test_a_changed_signature_and_lost_source_are_both_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def racing(self: object, listeners: object) -> None:  # a crewai that moved on
        return None

    monkeypatch.setattr(Flow, "_execute_racing_listeners", racing)
    with pytest.raises(SeamsMoved) as moved:
        patches.check_patch_points()
    (line,) = [ln for ln in str(moved.value).splitlines() if "_execute_racing_listeners" in ln]
    assert "takes ['self', 'listeners'], expected ['self', 'racing_listeners'," in line


def test_patching_an_undeclared_crewai_attribute_is_refused_with_the_fix() -> None:
    with pytest.raises(KeyError) as undeclared:
        seams.SEAMS["crewai.flow.runtime:Flow.kickoff"]
    assert "is not a declared crewai seam: add a Seam for it in pytest_flows.crewai._seams" in str(
        undeclared.value
    )


def test_no_module_of_the_adapter_patches_crewai_by_hand() -> None:
    """Patches go through the registry (SEAMS[...].replace/shadow or seams.replaced)."""
    from pathlib import Path

    import pytest_flows.crewai as package

    # compat.py's one process-wide patch (crewai < 1.15 only) is declared, never undone.
    allowed = {"compat.py"}
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(Path(package.__file__).parent.glob("*.py"))
        if path.name not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "setattr(" in line and "state_access" not in path.name
    ]
    assert offenders == []


def test_the_adapter_hands_its_declared_seams_to_the_contract() -> None:
    from pytest_flows.crewai._adapter import ADAPTER

    assert list(ADAPTER.seams()) == [*seams.SEAMS, *seams.RECORDER_SEAMS]
