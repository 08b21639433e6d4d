"""What a framework adapter gives golden replay, and how the core finds one.

An adapter's golden part is whatever its :meth:`AdapterBase.golden()
<pytest_flows._internal.contract.adapters.AdapterBase.golden>` returns; the core finds it
through the adapter registry, never a table of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pytest_flows._internal.contract.adapters import imported_adapters, loaded_adapter
from pytest_flows._internal.errors import FlowsUsageError

if TYPE_CHECKING:
    from pytest_flows._internal.golden.breaks import GoldenBreak
    from pytest_flows._internal.golden.replay import Scripted
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.session import FlowsSession

__all__ = ["GoldenAdapter", "adapter_for_run", "adapter_named", "run_keys"]


class GoldenAdapter(Protocol):
    framework: str

    @property
    def framework_fields(self) -> Mapping[str, str]:
        """Fields the framework owns whose names look secret but hold no credential
        (name -> why); the golden writer does not refuse them by name."""

    @property
    def run_keys(self) -> Mapping[str, type]:
        """What golden replay reads of each run of this framework besides ``flow``,
        ``trace`` and ``output`` (key -> type), checked before replay reads a file."""

    def accepts(self, run: FlowRun) -> bool:
        """Whether ``run`` ran one of this framework's flows/workflows."""

    def capture(
        self, session: FlowsSession, run: FlowRun, kwargs: dict[str, Any], seen: set[str]
    ) -> dict[str, Any]:
        """The framework part of a recorded run: what it persisted, its topology."""

    def replay(
        self, session: FlowsSession, recorded: dict[str, Any], scripted: Scripted, today: Any
    ) -> list[dict[str, Any]]:
        """Restore each persisted record of ``recorded`` on ``today``'s code and resume it
        with the replies, answers and crew results ``scripted`` (what the test's run got)."""

    def check(
        self, session: FlowsSession, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        """codec, schema and topology breaks of ``recorded`` against today's code.

        ``today`` is the flow (or workflow) the test ran today in the same
        position, or None.
        """


def adapter_named(framework: str) -> GoldenAdapter:
    adapter = loaded_adapter(framework)
    part = None if adapter is None else adapter.golden()
    if part is None:
        raise FlowsUsageError(
            f"the golden file has a run of {framework!r}, whose adapter is not loaded or has "
            "no golden part (AdapterBase.golden()); register the adapter "
            "(pytest_flows.register_adapter) and import the framework in the test module."
        )
    return part


def adapter_for_run(run: FlowRun) -> GoldenAdapter | None:
    # Only the adapters of imported frameworks: never import one the test did not use.
    for adapter in imported_adapters():
        part = adapter.golden()
        if part is not None and part.accepts(run):
            return part
    return None


def run_keys(framework: object) -> Mapping[str, type] | None:
    """The keys golden replay reads of a run of ``framework``, or None if its golden part
    cannot be found (the framework is unknown, not imported, or has no golden part)."""
    if not isinstance(framework, str):
        return None
    adapter = loaded_adapter(framework)
    part = None if adapter is None else adapter.golden()
    if part is None:
        return None
    return {"flow": str, "trace": list, "output": str, **part.run_keys}
