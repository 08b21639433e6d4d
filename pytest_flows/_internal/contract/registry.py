"""The one registry of framework adapters: what each framework brings, by module path.

An :class:`AdapterSpec` is an adapter's declaration, cheap to import and to hold
(strings and flags, no framework): the harness module that defines its ``ADAPTER``
(running and tracing, the fakes' seams, the store and checkpoint codec, golden
replay, the coverage graph: :class:`~pytest_flows._internal.contract.adapters.AdapterBase`),
and its :class:`RecorderPart`, the production recorder's hooks and the replay's
shadow, which must load no pytest. Every capability finds a framework here (the
built-in :data:`ADAPTERS`, then :func:`register`, then the ``pytest_flows.adapters``
entry-point group), never through a table of its own.

Import-light on purpose: the flight recorder (``pytest_flows.recorder``) reads it
in production, so it imports neither pytest nor the harness; errors are
:class:`RegistryError` (a ``ValueError``), which the harness's
``register_adapter()`` turns into a ``FlowsUsageError``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "ADAPTERS",
    "ENTRY_POINT_GROUP",
    "AdapterSpec",
    "RecorderPart",
    "RegistryError",
    "adapter_specs",
    "recorder_part",
    "recorder_parts",
    "register",
    "spec_of",
]

#: The entry-point group third-party adapters register their AdapterSpec in.
ENTRY_POINT_GROUP = "pytest_flows.adapters"


class RegistryError(ValueError):
    """A spec that cannot be registered (the message names the fix)."""


class RecorderPart:
    """A framework's part of the flight recorder (production: it imports no pytest).

    ``module`` defines ``install() -> undo`` (wrap the framework so runs are recorded
    while a recorder is on) and ``shadow(run, *, answer_tool=None) -> done`` (record
    the runs of this context into ``run``: ``flows.replay`` compares them with the
    record). ``in_use`` is the module whose presence in ``sys.modules`` says the
    framework is in use (default: the framework's top-level module). ``target`` is what
    a replay is given: ``"class"`` (the flow class the record names) or ``"factory"``
    (a function that builds the run's object; the record's header ``factory``).
    ``tools_in_llm_calls``: the framework runs tools inside one LLM call (the replay
    answers them from the record at that call, not as separate tool calls).
    """

    # A plain class rather than a dataclass: the built-in specs are built at start-up
    # (a frozen dataclass costs about 0.5 ms to create there).
    __slots__ = ("in_use", "module", "target", "tools_in_llm_calls")
    module: str
    in_use: str
    target: str
    tools_in_llm_calls: bool

    def __init__(
        self,
        module: str,
        in_use: str = "",
        target: str = "class",
        tools_in_llm_calls: bool = False,
    ) -> None:
        if target not in ("class", "factory"):
            raise RegistryError(
                f"RecorderPart(target={target!r}): a replay is given the flow "
                "'class' or a 'factory' that builds it."
            )
        set_ = object.__setattr__
        set_(self, "module", module)
        set_(self, "in_use", in_use)
        set_(self, "target", target)
        set_(self, "tools_in_llm_calls", tools_in_llm_calls)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RecorderPart is frozen: cannot set {name!r}")

    def _key(self) -> tuple[str, str, str, bool]:
        return (self.module, self.in_use, self.target, self.tools_in_llm_calls)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecorderPart) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RecorderPart(module={self.module!r}, in_use={self.in_use!r}, "
            f"target={self.target!r}, tools_in_llm_calls={self.tools_in_llm_calls!r})"
        )


@dataclass(frozen=True)
class AdapterSpec:
    framework: str  # the framework's top-level import name
    module: str  # the adapter module (it defines ADAPTER), imported only once the framework is
    extra: str  # the pip extra (or package) that installs the framework
    describe: str  # what the adapter runs, for error messages
    environment: Mapping[str, str] = field(default_factory=dict)  # set before the import
    supported: str = ""  # the distribution's versions the adapter is tested against
    recorder: RecorderPart | None = None  # the flight recorder's part, if the adapter has one
    isolated: Mapping[str, str] = field(default_factory=dict)  # set while a test is isolated


#: The adapters that ship with pytest-flows (the one place the core names them).
ADAPTERS: tuple[AdapterSpec, ...] = (
    AdapterSpec(
        framework="crewai",
        module="pytest_flows.crewai._adapter",
        extra="crewai",
        describe="a CrewAI Flow class or instance",
        environment={
            "OTEL_SDK_DISABLED": "true",
            "CREWAI_DISABLE_TELEMETRY": "true",
            "CREWAI_TRACING_ENABLED": "false",
            "CREWAI_TESTING": "true",
            # Not CREWAI_DISABLE_VERSION_CHECK: the check is console output (a quiet
            # test skips it through crewai's own switch, crewai/_adapter.py), and its
            # PyPI call is the network guard's to refuse, as an offline machine would.
        },
        supported="crewai>=1.14.7,<1.16",
        # Where crewai keeps its files, relative to the isolated XDG data directory.
        isolated={"CREWAI_STORAGE_DIR": "pytest-flows"},
        recorder=RecorderPart(
            module="pytest_flows.recorder._crewai",
            in_use="crewai.flow.runtime",
            tools_in_llm_calls=True,
        ),
    ),
    AdapterSpec(
        framework="agent_framework",
        module="pytest_flows.agent_framework._adapter",
        extra="agent-framework",
        describe="an Agent Framework Workflow",
        environment={"AGENT_FRAMEWORK_DISABLE_TELEMETRY": "true"},
        supported="agent-framework-core>=1.20,<1.24",
        recorder=RecorderPart(module="pytest_flows.recorder._agent_framework", target="factory"),
    ),
    AdapterSpec(
        framework="langgraph",
        module="pytest_flows.langgraph._adapter",
        extra="langgraph",
        describe=(
            "a LangGraph graph (a compiled StateGraph, a StateGraph builder or an @entrypoint)"
        ),
        # LangSmith tracing would send every run over the network.
        environment={"LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"},
        supported="langgraph>=1.2.11,<1.3",
        # a replay is given the graph: the module-level one the record names (factory)
        recorder=RecorderPart(module="pytest_flows.recorder._langgraph", target="factory"),
    ),
)

_lock = threading.Lock()
_registered: dict[str, AdapterSpec] = {}
_entry_points_read = False


def register(spec: AdapterSpec) -> None:
    """Add ``spec`` (the same spec again does nothing; another for its framework is an error)."""
    if not isinstance(spec, AdapterSpec):
        raise RegistryError(
            f"register_adapter() takes an AdapterSpec, got {type(spec).__qualname__}: "
            "register_adapter(AdapterSpec(framework='myframework', "
            "module='myplugin.adapter', extra='myframework', describe='a MyFramework flow'))."
        )
    with _lock:
        _register(spec)


def _register(spec: AdapterSpec) -> None:
    known = {s.framework: s for s in ADAPTERS} | _registered
    existing = known.get(spec.framework)
    if existing is not None and existing != spec:
        raise RegistryError(
            f"register_adapter(): an adapter for {spec.framework!r} is already registered "
            f"({existing.module}), and {spec.module} claims it too; a framework has one "
            "adapter: register only one of them."
        )
    if existing is None:
        _registered[spec.framework] = spec


def _read_entry_points() -> None:
    global _entry_points_read
    if _entry_points_read:
        return
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        spec = point.load()
        if not isinstance(spec, AdapterSpec):
            raise RegistryError(
                f"entry point {point.name!r} in group {ENTRY_POINT_GROUP!r} ({point.value}) is "
                f"a {type(spec).__qualname__}, not an AdapterSpec; point it at a module-level "
                "AdapterSpec(framework=..., module=..., extra=..., describe=...)."
            )
        _register(spec)
    _entry_points_read = True


def adapter_specs() -> tuple[AdapterSpec, ...]:
    """Every known adapter: the built-in ones, then registered ones and entry points."""
    with _lock:
        _read_entry_points()
        return (*ADAPTERS, *_registered.values())


def spec_of(framework: str) -> AdapterSpec | None:
    """The spec of ``framework``, or None if no adapter for it is known."""
    return next((s for s in adapter_specs() if s.framework == framework), None)


def recorder_parts() -> dict[str, RecorderPart]:
    """framework -> its recorder part, for every known adapter that has one."""
    return {s.framework: s.recorder for s in adapter_specs() if s.recorder is not None}


def recorder_part(framework: str) -> RecorderPart | None:
    """The recorder part of ``framework``, or None (unknown, or no recorder part)."""
    spec = spec_of(framework)
    return None if spec is None else spec.recorder
