"""What ``flows.replay`` returns: the replayed run and its divergences from the record."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_flows._internal.errors import FlowsError
from pytest_flows._internal.flight.format import Record
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.trace import Trace

__all__ = ["Divergence", "ReplayDivergenceError", "ReplayResult"]


class ReplayDivergenceError(FlowsError):
    """Today's code did not do what the recorded run did."""


@dataclass
class Divergence:
    """One way the replay differs from the record; ``seq`` is where in the record."""

    kind: str  # prompt, request, unused, tool, crew, state, stream, method, output, order, outcome
    where: str
    message: str
    diff: str = ""
    seq: int = 0

    def __str__(self) -> str:
        text = f"[{self.kind}] {self.where}: {self.message}"
        return text + ("\n" + self.diff if self.diff else "")


@dataclass
class ReplayResult:
    """What ``flows.replay`` returns: the run, and how it differs from the record."""

    record: Record
    run: FlowRun
    divergences: list[Divergence] = field(default_factory=list)
    #: How the recorded interleaving was rebuilt (or why it could not be).
    interleaving: str = ""
    seed: int = 0
    #: The schedule that rebuilt the recorded order (``flows.run(..., schedule=...)``).
    schedule: str | None = None
    recorded_trace: Trace = field(default_factory=Trace)
    replayed_trace: Trace = field(default_factory=Trace)
    #: What the replay could not compare (a crew answered whole from the record).
    notes: list[str] = field(default_factory=list)

    @property
    def diverged(self) -> bool:
        return bool(self.divergences)

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    def report(self) -> str:
        head = f"replay of {self.record.path.name} ({self.record.target}, run {self.record.run_id})"
        notes = "".join(f"\nnot compared: {note}" for note in self.notes)
        if not self.divergences:
            return f"{head}: no divergence. {self.interleaving}{notes}"
        lines = [f"{head}: {len(self.divergences)} divergence(s), first:", str(self.divergences[0])]
        lines += [f"  also: [{d.kind}] {d.where}: {d.message}" for d in self.divergences[1:6]]
        if self.interleaving:
            lines.append(self.interleaving)
        return "\n".join(lines) + notes

    def check(self) -> FlowRun:
        """The run, or :class:`ReplayDivergenceError` with the report if it diverged."""
        if self.divergences:
            raise ReplayDivergenceError(self.report())
        return self.run
