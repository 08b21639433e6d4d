"""``FlowRun``: what one run of a flow produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_flows._internal.fakes.usage import Usage
from pytest_flows._internal.normal_form import Normalizer
from pytest_flows._internal.trace import Trace

__all__ = ["FlowRun"]


@dataclass
class FlowRun:
    """The result of ``flows.run(...)``.

    ``output`` is what the flow returned, ``state`` its final state,
    ``method_outputs`` the outputs of its methods in completion order
    (:meth:`output_of` looks one up by method name) and
    ``trace`` the normalized trace of this run, ``usage`` what it used (LLM
    calls, tokens, tool calls, virtual seconds; ``usage.by_method[name]``). A
    run that raised has ``failed`` set and the original exception in ``error``.
    """

    flow: Any
    output: Any = None
    state: Any = None
    trace: Trace = field(default_factory=Trace)
    error: BaseException | None = None
    method_outputs: list[Any] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def schedule(self) -> str | None:
        """The schedule this run followed (``flows.run(F, schedule=...)`` replays it), if
        it ran under one (``explore``, ``schedule=``, ``races=``)."""
        value = self.extras.get("schedule")
        return value if isinstance(value, str) else None

    @property
    def conflicts(self) -> list[Any]:
        """State races this run showed (see :mod:`pytest_flows._internal.runtime.conflicts`):
        recorded when it ran under a schedule; ``explore(...).conflicts`` sees those of every
        schedule."""
        from pytest_flows._internal.runtime.conflicts import conflicts_in

        chooser = self.extras.get("chooser")
        if chooser is None:
            from pytest_flows._internal.errors import FlowsUsageError

            raise FlowsUsageError(
                "this run recorded no state accesses: run it with flows.run(F, schedule='s'), "
                "under @pytest.mark.flows(races='fail'), or use explore(flows, F).conflicts."
            )
        return list(conflicts_in([chooser]))

    def _normalizer(self) -> Normalizer:
        """A normalizer that goes on numbering where this run's trace stopped, so the
        values it normalizes name the trace's own ``<uuid:N>`` (a fresh copy each call:
        normalizing one comparison's values does not renumber another's)."""
        own = self.extras.get("normalizer")
        return own.copy() if isinstance(own, Normalizer) else Normalizer()

    def output_of(self, method: str) -> Any:
        """What ``method`` returned in this run (its latest output, if it ran several times).

        ``method_outputs`` is in completion order; the trace's ``method finished``
        lines of this run (not of flows it started) say which method each is.
        """
        from pytest_flows._internal.errors import FlowsUsageError

        names = self._finished_methods()
        if len(names) != len(self.method_outputs):
            raise FlowsUsageError(
                f"run.output_of({method!r}): this run's trace has {len(names)} finished "
                f"methods for {len(self.method_outputs)} outputs, so they cannot be paired; "
                "use run.method_outputs (in completion order)."
            )
        for name, output in reversed(list(zip(names, self.method_outputs, strict=True))):
            if name == method:
                return output
        ran = ", ".join(dict.fromkeys(names)) or "none"
        raise FlowsUsageError(
            f"run.output_of({method!r}): {method!r} did not finish in this run "
            f"(methods that did: {ran})."
        )

    def _finished_methods(self) -> list[str]:
        names: list[str] = []
        depth = 0
        for event in self.trace:
            if event.kind in ("flow.started", "workflow.started"):
                depth += 1
            elif event.kind in ("flow.finished", "flow.failed", "flow.paused"):
                depth -= 1
            elif event.kind == "method.finished" and depth <= 1:
                names.append(event.name)
        return names

    def raise_error(self) -> None:
        """Re-raise the flow's own exception, if it failed."""
        if self.error is not None:
            raise self.error

    def __repr__(self) -> str:
        status = f"failed={type(self.error).__name__}" if self.error else f"output={self.output!r}"
        return f"<FlowRun {type(self.flow).__name__} {status} events={len(self.trace)}>"
