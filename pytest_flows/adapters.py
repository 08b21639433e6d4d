"""The adapter registry: which framework adapter runs a given target.

An adapter module is imported only when its framework already is (a target of
that framework exists, so the framework is in ``sys.modules``); importing
pytest_flows never imports a framework.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_flows.run import FlowRun
    from pytest_flows.session import FlowsSession

__all__ = ["ADAPTERS", "Adapter", "AdapterSpec", "load_adapter"]


class Adapter(Protocol):
    """What a framework adapter provides to the framework-neutral harness."""

    name: str

    def configure(self) -> None:
        """Process-wide set-up, run once right after the framework is imported."""

    def accepts(self, target: object) -> bool:
        """Whether ``target`` (a class or an instance) is this framework's flow."""

    def activate(self, session: FlowsSession) -> contextlib.AbstractContextManager[None]:
        """Per-test patches and trace capture, undone when the context exits."""

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        """Run ``target`` on the current (deterministic) loop; never raise the flow's error."""

    def bind(
        self, session: FlowsSession, kind: str, fake: Any
    ) -> contextlib.AbstractContextManager[None] | None:
        """Install a fake of ``kind`` for this framework (None if it has no use for it)."""


@dataclass(frozen=True)
class AdapterSpec:
    framework: str  # the framework's top-level import name
    module: str  # the adapter module, imported only once the framework is
    extra: str  # the pip extra that installs the framework
    describe: str  # what the adapter runs, for error messages
    environment: Mapping[str, str] = field(default_factory=dict)  # set before the import
    supported: str = ""  # the distribution's versions the adapter is tested against


ADAPTERS: tuple[AdapterSpec, ...] = (
    AdapterSpec(
        framework="crewai",
        module="pytest_flows.crewai.adapter",
        extra="crewai",
        describe="a CrewAI Flow class or instance",
        environment={
            "OTEL_SDK_DISABLED": "true",
            "CREWAI_DISABLE_TELEMETRY": "true",
            "CREWAI_TRACING_ENABLED": "false",
            "CREWAI_TESTING": "true",
            "CREWAI_DISABLE_VERSION_CHECK": "true",
        },
        supported="crewai>=1.15.23,<1.16",
    ),
    AdapterSpec(
        framework="agent_framework",
        module="pytest_flows.agent_framework.adapter",
        extra="agent-framework",
        describe="an Agent Framework Workflow",
        environment={"AGENT_FRAMEWORK_DISABLE_TELEMETRY": "true"},
        supported="agent-framework-core>=1.20,<1.24",
    ),
)

_loaded: dict[str, Adapter] = {}


def load_adapter(spec: AdapterSpec) -> Adapter | None:
    """The adapter for ``spec`` if its framework is imported (configuring it once)."""
    if spec.framework not in sys.modules:
        return None
    adapter = _loaded.get(spec.framework)
    if adapter is None:
        try:
            module = importlib.import_module(spec.module)
        except ModuleNotFoundError as exc:
            if exc.name != spec.module:
                raise unsupported(spec, exc) from exc
            return None  # adapter not written yet for this framework
        except ImportError as exc:
            raise unsupported(spec, exc) from exc
        adapter = module.ADAPTER
        adapter.configure()
        _loaded[spec.framework] = adapter
    return adapter


def unsupported(spec: AdapterSpec, exc: ImportError) -> ImportError:
    """``exc`` (a framework module or name the adapter needs is missing), naming the range."""
    if not (exc.name or "").startswith(spec.framework) or not spec.supported:
        return exc
    from importlib.metadata import PackageNotFoundError, version

    distribution = spec.supported.split(">")[0].split("<")[0].split("=")[0]
    try:
        installed = version(distribution)
    except PackageNotFoundError:
        installed = "unknown"
    return ImportError(
        f"pytest-flows' {spec.framework} adapter cannot load: {exc}. It supports "
        f"{spec.supported}; {distribution} {installed} is installed. Install a supported "
        f"version (pip install 'pytest-flows[{spec.extra}]').",
        name=exc.name,
    )


def imported_adapters() -> list[Adapter]:
    return [a for a in (load_adapter(s) for s in ADAPTERS) if a is not None]
