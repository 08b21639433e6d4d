"""What the state properties compare: one run's :class:`Outcome`, the framework
:class:`Operations` that produce them, and the comparison itself.

A framework's store backend provides the operations
(``flow_store.backend_for(flow).operations(flows)``); everything else here is
framework-neutral.
"""

from __future__ import annotations

import contextvars
import dataclasses
import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.normal_form import Normalizer
from pytest_flows._internal.state.codec import diff_snapshots, differences
from pytest_flows._internal.state.store_records import CheckpointRecord, CrashPoint
from pytest_flows._internal.trace import Trace, render_value

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.state.store import FlowStore

__all__ = ["Compare", "Operations", "Outcome", "compare_outcomes", "operations_for", "runtime_view"]

Compare = Sequence[Literal["state", "output", "trace"]]


# -- what a framework backend provides ---------------------------------------------------
@dataclasses.dataclass
class Outcome:
    """What one run did, in comparable form."""

    state: dict[str, Any] | None  # the final state, JSON-encoded
    output: Any
    trace: Trace
    state_id: str | None
    error: BaseException | None = None
    checkpoints: list[CheckpointRecord] = dataclasses.field(default_factory=list)
    start_state: Any = None  # the state as the run started (after any restore)
    start_id: str | None = None
    #: The final state as the flow held it (a copy): compared with its types, since
    #: the JSON form cannot tell an int key from a str key or a tuple from a list.
    typed_state: Any = None
    #: How many persisted saves the run made, for frameworks whose saves are not a
    #: state id's history in the store (Agent Framework: its checkpoints); None
    #: counts ``flow_store.history(state_id)``.
    saves: int | None = None

    def save_count(self, store: Any) -> int:
        """The run's persisted saves: the crash points it has."""
        if self.saves is not None:
            return self.saves
        return len(store.history(self.state_id)) if self.state_id else 0


class Operations(Protocol):
    """Framework work the property helpers need (``backend.operations(flows)``)."""

    def describe(self, flow: Any) -> str: ...
    def run(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome: ...
    def crash(self, flow: Any, inputs: dict[str, Any] | None, point: CrashPoint) -> str | None: ...
    def resume(self, flow: Any, inputs: dict[str, Any] | None, state_id: str) -> Outcome: ...
    def fork(
        self, flow: Any, inputs: dict[str, Any] | None, source: str, pin: str | None
    ) -> Outcome: ...
    def run_with_checkpoints(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome: ...
    def restore(self, flow: Any, checkpoint: CheckpointRecord) -> Outcome: ...
    def new_id(self) -> str: ...


def operations_for(flows: FlowsSession, store: FlowStore, flow: Any) -> Operations:
    """The operations of ``flow``'s framework, from ``store``'s backend for it."""
    if not callable(getattr(store, "backend_for", None)):
        raise FlowsUsageError(
            f"expected the flow_store fixture, got {type(store).__qualname__}: request "
            "flow_store in your test and pass it on."
        )
    # A factory (lambda: MyFlow(checkpoint=...)) says its framework once called.
    # (Built in a throwaway context: a framework may attach it to context state.)
    is_factory = callable(flow) and not isinstance(flow, type)
    sample = contextvars.copy_context().run(flow) if is_factory else flow
    backend = store.backend_for(sample)
    ops: Operations = backend.operations(flows)
    return ops


# -- comparing runs -------------------------------------------------------------------
RUNTIME_PREFIXES = ("method.", "router.", "race.", "flow.")


def runtime_view(trace: Trace) -> list[str]:
    """The lines of ``trace`` that say what the flow did, for run-to-run comparison.

    Store and checkpoint events (the harness's bookkeeping), ``flow.started``
    (its inputs differ between a run and its resume) and the ``trigger`` of a
    started method (crewai re-triggers restored listeners without an event)
    are left out.
    """
    lines = []
    for event in trace:
        if not event.kind.startswith(RUNTIME_PREFIXES) or event.kind == "flow.started":
            continue
        if event.kind == "method.started":
            event = event.model_copy(
                update={"fields": tuple(f for f in event.fields if f[0] != "trigger")}
            )
        lines.append(event.render())
    return lines


def _typed_changes(before: Any, after: Any, *, root: str = "", ignore: str = "") -> str:
    """Each path where ``after`` differs from ``before`` in value or type, one a line."""
    changes = [c for c in differences(before, after, root=root) if c.path != ignore]
    return clip("\n".join(c.describe() for c in changes))


def compare_outcomes(
    expected: Outcome, actual: Outcome, compare: Compare, *, suffix_of: int = 0
) -> str:
    """'' if ``actual`` matches ``expected`` on ``compare``; else what differs."""
    problems = []
    if actual.error is not None:
        problems.append(f"the continued run failed: {type(actual.error).__name__}: {actual.error}")
    if "state" in compare:
        # ids and times a run draws (a uuid in the state, a timestamp) are not behaviour
        changed = clip(
            diff_snapshots(
                _normal(expected.state or {}), _normal(actual.state or {}), ignore=("id",)
            )
        )
        if changed:
            problems.append("final state differs (uninterrupted -> continued):\n" + indent(changed))
        elif expected.typed_state is not None and actual.typed_state is not None:
            typed = _typed_changes(
                _normal(expected.typed_state), _normal(actual.typed_state), ignore="id"
            )
            if typed:
                problems.append(
                    "final state differs in its types (uninterrupted -> continued):\n"
                    + indent(typed)
                )
    if "output" in compare:
        typed = _typed_changes(_normal(expected.output), _normal(actual.output), root="output")
        if typed:
            problems.append(
                f"final output differs: uninterrupted {render_value(expected.output)}, "
                f"continued {render_value(actual.output)}:\n" + indent(typed)
            )
    if "trace" in compare:
        want = runtime_view(expected.trace)[suffix_of:]
        got = runtime_view(actual.trace)
        if want != got:
            diff = "".join(
                difflib.unified_diff(
                    [line + "\n" for line in want],
                    [line + "\n" for line in got],
                    fromfile="uninterrupted",
                    tofile="continued",
                    n=2,
                )
            )
            problems.append("trace differs:\n" + indent(diff))
    return "\n".join(problems)


def _normal(value: Any) -> Any:
    """``value`` in the normal form every comparison of two runs uses (its own numbering)."""
    return Normalizer().value(value)


def clip(text: str, limit: int = 20) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) <= limit:
        return text
    return "".join(lines[:limit]) + f"... and {len(lines) - limit} more changed field(s)\n"


def indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def reproducer(name: str, flow_text: str, **kwargs: Any) -> str:
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items() if v is not None)
    return f"    {name}(flows, flow_store, {flow_text}{', ' if args else ''}{args})"
