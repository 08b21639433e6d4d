"""The adapter contract and registry: which framework adapter runs a given target.

An adapter module is imported only when its framework already is (a target of
that framework exists, so the framework is in ``sys.modules``); importing
pytest_flows never imports a framework.

A framework adapter subclasses :class:`AdapterBase` and overrides the hooks
its framework needs (the others do nothing). It becomes known to the harness
without a core edit, in either of two ways:

* ``pytest_flows.register_adapter(AdapterSpec(...))`` (from a ``conftest.py``
  or a plugin), or
* an entry point in the group ``pytest_flows.adapters`` whose object is an
  :class:`AdapterSpec`, read the first time a flows test needs the list.

``docs/architecture.md`` walks through writing one.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.contract import registry as _registry
from pytest_flows._internal.contract.registry import (
    ADAPTERS,
    ENTRY_POINT_GROUP,
    AdapterSpec,
    RecorderPart,
)
from pytest_flows._internal.errors import FlowsUsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_flows._internal.coverage.model import FlowGraph
    from pytest_flows._internal.fakes.crew_script import FakeCrews
    from pytest_flows._internal.fakes.human_script import ScriptedHuman
    from pytest_flows._internal.fakes.llm_script import LLMScript
    from pytest_flows._internal.fakes.tool_script import FakeTools
    from pytest_flows._internal.golden.adapters import GoldenAdapter
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.state.store import FlowStore
    from pytest_flows._internal.trace import TraceEvent

__all__ = [
    "ADAPTERS",
    "BIND_KINDS",
    "ENTRY_POINT_GROUP",
    "Adapter",
    "AdapterBase",
    "AdapterSpec",
    "Binding",
    "RecorderPart",
    "adapter_specs",
    "bind_fake",
    "declared_seams",
    "framework_versions",
    "imported_adapters",
    "load_adapter",
    "loaded_adapter",
    "register_adapter",
    "spec_of",
]

#: What a bind hook returns: a context manager that undoes the binding, or None.
Binding = contextlib.AbstractContextManager[None] | None

#: The kinds of fake the fixtures bind (``session.bind(kind, fake)``), each with its hook.
BIND_KINDS = ("llm", "human", "store", "crews", "tools")


class AdapterBase:
    """What a framework adapter provides to the framework-neutral harness.

    Subclass it and override what your framework needs: ``name``,
    :meth:`accepts` and :meth:`run` have no default; every bind hook returns
    None (the fake has no use in this framework), the rest do nothing.
    """

    name: str = ""

    def configure(self) -> None:
        """Process-wide set-up, run once right after the framework is imported."""
        return None

    def accepts(self, target: object) -> bool:
        """Whether ``target`` (a class or an instance) is this framework's flow."""
        raise NotImplementedError(f"{type(self).__qualname__}.accepts(target)")

    def activate(self, session: FlowsSession) -> contextlib.AbstractContextManager[None]:
        """Per-test patches and trace capture, undone when the context exits."""
        return contextlib.nullcontext()

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        """Run ``target`` on the current (deterministic) loop; never raise the flow's error."""
        raise NotImplementedError(f"{type(self).__qualname__}.run(session, target, args, kwargs)")

    def trace_sink(self, session: FlowsSession) -> Callable[[TraceEvent], None]:
        """Where the adapter's trace events go (the session's trace)."""
        return session.record

    def bind_llm(self, session: FlowsSession, fake: LLMScript) -> Binding:
        """Answer every LLM call of the framework from ``fake`` (the ``fake_llm`` fixture)."""
        return None

    def bind_human(self, session: FlowsSession, fake: ScriptedHuman) -> Binding:
        """Answer every question the framework asks a human from ``fake`` (``human``)."""
        return None

    def bind_store(self, session: FlowsSession, store: FlowStore) -> Binding:
        """Route the framework's persistence and checkpoints into ``store`` (``flow_store``)."""
        return None

    def bind_crews(self, session: FlowsSession, fake: FakeCrews) -> Binding:
        """Answer crew (multi-agent team) kickoffs from ``fake`` (``fake_crews``)."""
        return None

    def bind_tools(self, session: FlowsSession, fake: FakeTools) -> Binding:
        """Run the framework's tools through ``fake`` first (``fake_tools``)."""
        return None

    def resume_human(
        self,
        session: FlowsSession | None,
        human: ScriptedHuman,
        paused: Any,
        feedback: str,
        outcome: str | None,
    ) -> FlowRun:
        """Resume ``paused`` (a run or flow waiting for a human) with ``feedback``."""
        raise FlowsUsageError(
            f"human.resume() does not apply to {self.name} flows: a paused {self.name} run "
            "continues through flows.run(...) with the answers (see the adapter's docs)."
        )

    def seams(self) -> Sequence[object]:
        """The private places of the framework this adapter reaches into, declared."""
        return ()

    def golden(self) -> GoldenAdapter | None:
        """Golden recording and replay of this framework's runs (``@pytest.mark.golden``):
        a :class:`~pytest_flows._internal.golden.adapters.GoldenAdapter`, or None (a golden
        test of this framework's flows fails, saying so)."""
        return None

    def graph(self, flow: Any) -> FlowGraph:
        """The coverage graph of ``flow`` (a class or instance: what ``--flows-cov``
        counts). Called only while coverage collects, from the kit's
        ``note_started(adapter, name, flow)``, which the adapter calls right before it
        traces the run's start."""
        raise NotImplementedError(f"{type(self).__qualname__}.graph(flow)")


#: The contract's type, as the session sees it: an adapter subclasses AdapterBase.
Adapter = AdapterBase


def declared_seams(package: str | None) -> Sequence[object]:
    """The seams an adapter package declares in its ``seams`` (or private ``_seams``)
    module (``SEAMS``, then its recorder part's ``RECORDER_SEAMS``), if any.

    The seam registry (:mod:`pytest_flows._internal.contract.seams`) is per adapter package; an
    adapter that has no such module declares none.
    """
    for name in (f"{package}.seams", f"{package}._seams"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        # The harness's seams, then its flight recorder part's (a registry of their own).
        return (*getattr(module, "SEAMS", ()), *getattr(module, "RECORDER_SEAMS", ()))
    return ()


def bind_fake(adapter: Adapter, session: FlowsSession, kind: str, fake: Any) -> Binding:
    """Call ``adapter``'s typed bind hook for a fake of ``kind``."""
    if kind == "llm":
        return adapter.bind_llm(session, fake)
    if kind == "human":
        return adapter.bind_human(session, fake)
    if kind == "store":
        return adapter.bind_store(session, fake)
    if kind == "crews":
        return adapter.bind_crews(session, fake)
    if kind == "tools":
        return adapter.bind_tools(session, fake)
    raise FlowsUsageError(
        f"session.bind({kind!r}, ...): no such kind of fake; the kinds are {', '.join(BIND_KINDS)}."
    )


def register_adapter(spec: AdapterSpec) -> None:
    """Make a third-party framework adapter known to the harness (no core edit needed).

    ``spec.module`` is imported (and its ``ADAPTER`` configured) the first time
    a flows test runs while ``spec.framework`` is imported; ``spec.recorder`` (a
    :class:`RecorderPart`) gives it the flight recorder and ``flows.replay``.
    Registering the same spec again does nothing; another spec for the same
    framework is an error.
    """
    try:
        _registry.register(spec)
    except _registry.RegistryError as exc:
        raise FlowsUsageError(str(exc)) from None


def adapter_specs() -> tuple[AdapterSpec, ...]:
    """Every known adapter: the built-in ones, then registered ones and entry points."""
    try:
        return _registry.adapter_specs()
    except _registry.RegistryError as exc:
        raise FlowsUsageError(str(exc)) from None


def spec_of(framework: str) -> AdapterSpec:
    spec = _registry.spec_of(framework)
    if spec is None:
        raise FlowsUsageError(f"no pytest-flows adapter for {framework!r} is registered.")
    return spec


#: framework -> (the adapter's module, its configured ADAPTER).
_loaded: dict[str, tuple[ModuleType, Adapter]] = {}


def load_adapter(spec: AdapterSpec) -> Adapter | None:
    """The adapter for ``spec`` if its framework is imported (configuring it once)."""
    if spec.framework not in sys.modules:
        return None
    module_and_adapter = _loaded.get(spec.framework)
    # pytester's in-process runs drop the modules they imported: an adapter whose module
    # is no longer the imported one holds a framework copy that nothing runs any more.
    if module_and_adapter is not None and sys.modules.get(spec.module) is module_and_adapter[0]:
        return module_and_adapter[1]
    try:
        module = importlib.import_module(spec.module)
    except ModuleNotFoundError as exc:
        if exc.name != spec.module:
            raise unsupported(spec, exc) from exc
        return None  # adapter not written yet for this framework
    except ImportError as exc:
        raise unsupported(spec, exc) from exc
    adapter: Adapter = module.ADAPTER
    adapter.configure()
    _loaded[spec.framework] = (module, adapter)
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


def loaded_adapter(framework: str) -> Adapter | None:
    """The adapter of ``framework`` if it is known and its framework imported, else None."""
    spec = _registry.spec_of(framework)
    return None if spec is None else load_adapter(spec)


def imported_adapters() -> list[Adapter]:
    return [a for a in (load_adapter(s) for s in adapter_specs()) if a is not None]


def framework_versions(framework: str) -> tuple[str, str]:
    """``(installed, supported)`` of an adapter's framework (its spec's ``supported``
    range), for the seam check (:func:`~pytest_flows._internal.contract.seams.check`)."""
    from importlib.metadata import PackageNotFoundError, version

    spec = _registry.spec_of(framework)
    supported = "" if spec is None else spec.supported
    distribution = supported.split(">")[0].split("<")[0].split("=")[0] or framework
    try:
        installed = f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        installed = f"{distribution} (version unknown)"
    return installed, supported or "any version"
