"""What a framework adapter gives golden replay, and how the core finds one."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_flows._internal.golden.breaks import GoldenBreak
    from pytest_flows._internal.golden.replay import Scripted
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.session import FlowsSession

__all__ = ["GoldenAdapter", "adapter_for_run", "adapter_named"]

#: framework name -> module with a module-level ``ADAPTER``
_MODULES = {
    "crewai": "pytest_flows.crewai._golden",
    "agent_framework": "pytest_flows.agent_framework._golden",
}


class GoldenAdapter(Protocol):
    framework: str
    #: fields the framework owns whose names look secret but hold no credential
    #: (name -> why); the golden writer does not refuse them by name
    framework_fields: Mapping[str, str]

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
    adapter: GoldenAdapter = importlib.import_module(_MODULES[framework]).ADAPTER
    return adapter


def adapter_for_run(run: FlowRun) -> GoldenAdapter | None:
    for framework, module in _MODULES.items():
        if framework in sys.modules:  # never import a framework the test did not use
            adapter: GoldenAdapter = importlib.import_module(module).ADAPTER
            if adapter.accepts(run):
                return adapter
    return None
