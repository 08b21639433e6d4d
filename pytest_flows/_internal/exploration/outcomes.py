"""What an exploration found: its outcomes (what tells one from another) and the result.

An outcome is a run's output, final state (without crewAI's per-run ``id``), the result
of each ``or_`` race and the error, normalized as the run's trace is
(:func:`outcome_key`); :class:`Exploration` holds the distinct ones with the schedules
that reach them, the conflicts, and whether the search was complete.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pytest_flows._internal.exploration.races import RaceResult, races
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime.conflicts import Conflict
from pytest_flows._internal.runtime.schedule import Chooser
from pytest_flows._internal.trace import without_addresses

__all__ = ["DistinctOutcome", "Exploration", "outcome_key"]


@dataclasses.dataclass
class DistinctOutcome:
    """One distinct outcome: output, final state and error (the race results, if any).

    ``schedule`` replays the first schedule that produced it; ``schedules`` counts them.
    """

    text: str
    schedule: str
    run: FlowRun
    schedules: int = 1

    @property
    def output(self) -> Any:
        """The flow's output in this outcome (``outcome.run.output``)."""
        return self.run.output

    @property
    def state(self) -> Any:
        """The flow's final state in this outcome (``outcome.run.state``)."""
        return self.run.state

    @property
    def error(self) -> BaseException | None:
        """The error the run ended with, or None (``outcome.run.error``)."""
        return self.run.error

    @property
    def races(self) -> list[RaceResult]:
        """How each ``or_`` race of the run ended (``races(outcome.run)``)."""
        return races(self.run)

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass
class Exploration:
    """What :func:`~pytest_flows.explore` found. ``assert exploration == snapshot``
    stores the outcome texts and conflicts (not schedule strings or counts, which
    depend on the reduction), so the snapshot says what the flow *can* do."""

    complete: bool
    outcomes: list[DistinctOutcome]
    schedules_run: int
    conflicts: list[Conflict]
    strategy: str = "dfs"
    #: Each schedule's record (what it chose and accessed), for the race check.
    choosers: list[Chooser] = dataclasses.field(default_factory=list, repr=False, compare=False)
    #: Why a search that ran out of schedules to try is still not complete ("" if it is):
    #: a run did something the reduction does not model (the adapter said so).
    caveat: str = ""

    def __len__(self) -> int:
        return len(self.outcomes)

    def __iter__(self) -> Any:
        return iter(self.outcomes)

    @property
    def texts(self) -> list[str]:
        return [o.text for o in self.outcomes]

    def snapshot_lines(self) -> tuple[str, list[str]]:
        """The snapshot's header and lines (the syrupy extension indents them)."""
        status = "complete" if self.complete else "incomplete"
        lines = [f"outcome: {o.text}" for o in self.outcomes]
        lines.extend(f"conflict: {c.render()}" for c in self.conflicts)
        return f"Exploration ({status})", lines

    def render(self) -> str:
        """The snapshot text: whether it is complete, each outcome, each conflict."""
        header, lines = self.snapshot_lines()
        return "\n".join([header, *(f"  {line}" for line in lines)])

    def __str__(self) -> str:
        status = "complete" if self.complete else "stopped before it was complete"
        if self.caveat:
            status = f"not complete: {self.caveat}"
        lines = [
            f"{len(self.outcomes)} outcome(s) over {self.schedules_run} schedule(s), {status}:"
        ]
        lines.extend(f"  {o.text}  <- schedule {o.schedule!r}" for o in self.outcomes)
        lines.extend(f"  conflict {c.render()}" for c in self.conflicts)
        return "\n".join(lines)


def _as_outcome_data(value: Any) -> Any:
    """``value`` as JSON data for an outcome's text: models dumped, crewAI's per-run state
    ``id`` left out, anything else by its repr without memory addresses."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, dict):
        # crewai's state id is a fresh uuid per run: not part of what the run did.
        return {str(k): _as_outcome_data(v) for k, v in value.items() if k != "id"}
    if isinstance(value, (list, tuple)):
        return [_as_outcome_data(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return without_addresses(repr(value))


def _json(value: Any) -> str:
    return json.dumps(_as_outcome_data(value), sort_keys=True, default=str)


def outcome_key(run: FlowRun) -> str:
    """What distinguishes one outcome from another: output, final state, error, races."""
    parts = [f"output={_json(run.output)}"]
    if run.state is not None:
        parts.append(f"state={_json(run.state)}")
    parts.extend(race.render() for race in races(run))
    if run.error is not None:
        message = without_addresses(f"{type(run.error).__name__}: {run.error}")
        parts.append("error " + message.replace("\n", "\\n"))
    # normalized as the run's trace is: a uuid or timestamp the run drew is no new outcome
    return run._normalizer().text(" | ".join(parts))
