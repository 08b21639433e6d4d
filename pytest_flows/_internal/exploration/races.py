"""``or_`` races: who won, who was cancelled, and every outcome a race can have.

A CrewAI ``or_`` race shows in the trace as ``race started or(a, b)``, then one
``race won`` / ``race lost`` / ``race cancelled`` / ``race failed`` line per
racer. :func:`races` reads those lines back into :class:`RaceResult` s;
:func:`explore` runs a flow under several scheduler seeds and collects the
distinct outcomes into :class:`RaceOutcomes`, which compare with ``snapshot``
("this race has exactly these possible winners").

Words as crewai uses them: the racer that **won** is the first whose task
(the racer and the chain it triggers) completed; crewai then **cancels** the
racers still running. A racer that finished after the winner but before its
cancellation **lost**. The ``or_`` listener itself runs on the first racer
*method* to finish - ``crown via alpha`` - which need not be the winner: the
trace shows both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.trace import Trace, without_addresses

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["RaceOutcomes", "RaceResult", "race_of", "races"]

_ENDINGS = {
    "race.won": "won",
    "race.lost": "lost",
    "race.cancelled": "cancelled",
    "race.failed": "failed",
}


@dataclasses.dataclass(frozen=True)
class RaceResult:
    """How one ``or_`` race ended.

    ``racers`` are sorted (the start order, which the seed picks, is in
    ``started``); ``fired`` lists the ``or_`` listeners that started during the
    race and the racer whose completion started them.
    """

    racers: tuple[str, ...]
    started: tuple[str, ...]
    won: str | None
    lost: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    unfinished: tuple[str, ...] = ()  # no ending recorded (the run stopped mid-race)
    fired: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        """``or(a, b)`` with the racers sorted: the same under every seed."""
        return f"or({', '.join(self.racers)})"

    @property
    def winner(self) -> str | None:
        return self.won

    def render(self) -> str:
        """``or(a, b, c): won b; cancelled a, c; crown via a`` (one line, seed-independent)."""
        parts = [f"won {self.won}" if self.won is not None else "no winner"]
        for label, names in (
            ("lost", self.lost),
            ("cancelled", self.cancelled),
            ("failed", self.failed),
            ("unfinished", self.unfinished),
        ):
            if names:
                parts.append(f"{label} {', '.join(names)}")
        parts.extend(f"{listener} via {racer}" for listener, racer in self.fired)
        return f"{self.name}: {'; '.join(parts)}"

    def __str__(self) -> str:
        return self.render()


@dataclasses.dataclass
class _Open:
    started: list[str]
    endings: dict[str, str] = dataclasses.field(default_factory=dict)
    fired: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    def result(self) -> RaceResult:
        def having(ending: str) -> tuple[str, ...]:
            return tuple(sorted(n for n, e in self.endings.items() if e == ending))

        won = next((n for n, e in self.endings.items() if e == "won"), None)
        missing = sorted(set(self.started) - set(self.endings))
        # crewai cancels every racer still pending once one wins; a racer
        # cancelled before it ever ran leaves no line of its own.
        cancelled = tuple(sorted({*having("cancelled"), *(missing if won else ())}))
        return RaceResult(
            racers=tuple(sorted(self.started)),
            started=tuple(self.started),
            won=won,
            lost=having("lost"),
            cancelled=cancelled,
            failed=having("failed"),
            unfinished=() if won else tuple(missing),
            fired=tuple(self.fired),
        )


def _racers(text: str | None) -> list[str]:
    inner = (text or "").strip().removeprefix("[").removesuffix("]")
    return [name.strip() for name in inner.split(",") if name.strip()]


def _trace_of(source: Any, what: str) -> Trace:
    if isinstance(source, FlowRun):
        return source.trace
    if isinstance(source, Trace):
        return source
    raise FlowsUsageError(
        f"{what} reads the races of a FlowRun or a Trace, got {type(source).__qualname__}: "
        f"pass the result of flows.run(...), e.g. {what.split('(')[0]}(run)."
    )


def races(source: FlowRun | Trace) -> list[RaceResult]:
    """Every ``or_`` race of a run (or trace), in the order they started."""
    trace = _trace_of(source, "races(run)")
    found: list[_Open] = []
    for event in trace:
        if event.kind == "race.started":
            found.append(_Open(started=_racers(event.get("racers"))))
        elif event.kind in _ENDINGS:
            for race in reversed(found):
                if event.name in race.started and event.name not in race.endings:
                    race.endings[event.name] = _ENDINGS[event.kind]
                    break
        elif event.kind == "method.started":
            trigger = event.get("trigger") or ""
            if " via " not in trigger:
                continue
            via = trigger.rsplit(" via ", 1)[1]
            for race in reversed(found):
                if via in race.started and len(race.endings) < len(race.started):
                    race.fired.append((event.name, via))
                    break
    return [race.result() for race in found]


def race_of(source: FlowRun | Trace, name: str | None = None) -> RaceResult:
    """The one race of a run (or the one named ``or(a, b)``), with a clear error otherwise."""
    every = races(_trace_of(source, "race_of(run)"))
    found = every if name is None else [race for race in every if race.name == name]
    if len(found) == 1:
        return found[0]
    names = sorted({race.name for race in every})
    if not found:
        what = f"no race {name}" if name is not None else "no or_ race"
        listed = f"; its races: {', '.join(names)}" if names else ""
        raise AssertionError(f"the run had {what}{listed}.")
    raise AssertionError(
        f"the run had {len(found)} races ({', '.join(race.name for race in found)}); "
        "pick one with race_of(run, 'or(a, b)') or read them all with races(run)."
    )


# -- exploring seeds --------------------------------------------------------------------------
@dataclasses.dataclass
class RaceOutcomes:
    """The distinct race outcomes of one flow across scheduler seeds.

    ``outcomes`` maps each outcome's text (its races, one ``RaceResult.render``
    each, joined with `` | ``) to the seeds that produced it; ``runs`` keeps
    every run. ``assert outcomes == snapshot`` stores the outcome texts only
    (sorted, without seeds), so the snapshot says which outcomes are possible.
    """

    seeds: tuple[int, ...]
    runs: dict[int, FlowRun]
    outcomes: dict[str, tuple[int, ...]]
    results: dict[int, list[RaceResult]]

    def __len__(self) -> int:
        return len(self.outcomes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.outcomes)

    @property
    def race_names(self) -> list[str]:
        """Every race seen, sorted: ``['or(fast, slow)']``."""
        return sorted({race.name for found in self.results.values() for race in found})

    @property
    def winners(self) -> frozenset[str]:
        """Every racer that won under some seed (for a flow with one race)."""
        names = self.race_names
        if len(names) != 1:
            raise FlowsUsageError(
                f"outcomes.winners needs a flow with exactly one race, this one has "
                f"{len(names)}"
                + (f" ({', '.join(names)})" if names else "")
                + "; use outcomes.winners_of('or(a, b)')."
            )
        return self.winners_of(names[0])

    def winners_of(self, race: str) -> frozenset[str]:
        """Every racer that won ``race`` (``'or(a, b)'``, racers sorted) under some seed."""
        if race not in self.race_names:
            raise FlowsUsageError(
                f"no race {race!r} in these runs; races seen: {', '.join(self.race_names)}. "
                "Name a race by its racers, sorted: 'or(a, b)'."
            )
        return frozenset(
            result.won
            for found in self.results.values()
            for result in found
            if result.name == race and result.won is not None
        )

    def seeds_where(self, won: str) -> list[int]:
        """The seeds under which ``won`` won a race (rerun one: ``@pytest.mark.flows(seed=N)``)."""
        return [
            seed
            for seed in self.seeds
            if any(result.won == won for result in self.results.get(seed, []))
        ]

    def header(self) -> str:
        return f"RaceOutcomes ({len(self.seeds)} seeds)"

    def render(self) -> str:
        """The snapshot text: one outcome a line, sorted."""
        return "\n".join([self.header(), *(f"  {text}" for text in sorted(self.outcomes))])

    def __str__(self) -> str:
        lines = [f"{len(self.outcomes)} outcome(s) over {len(self.seeds)} seeds:"]
        for text, seeds in sorted(self.outcomes.items()):
            lines.append(f"  {text}  <- seeds {', '.join(map(str, seeds))}")
        return "\n".join(lines)


def _outcome_text(run: FlowRun, found: list[RaceResult]) -> str:
    parts = [race.render() for race in found] or ["no race"]
    if run.error is not None:
        message = without_addresses(f"{type(run.error).__name__}: {run.error}")
        message = message.replace("\n", "\\n")
        parts.append(f"error {message}")
    return " | ".join(parts)


def _check_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    try:
        chosen = tuple(seeds)
    except TypeError:
        raise FlowsUsageError(
            f"explore(..., seeds={seeds!r}) needs an iterable of seeds, e.g. seeds=range(8)."
        ) from None
    bad = [s for s in chosen if not isinstance(s, int) or isinstance(s, bool) or s < 0]
    if bad:
        raise FlowsUsageError(
            f"explore(..., seeds=...): seeds are whole numbers >= 0, got {bad[0]!r}; "
            "pass e.g. seeds=range(8)."
        )
    if not chosen:
        raise FlowsUsageError("explore(..., seeds=...) got no seeds; pass e.g. seeds=range(8).")
    if len(set(chosen)) != len(chosen):
        raise FlowsUsageError(f"explore(..., seeds={list(chosen)!r}) lists a seed twice.")
    return chosen


def _by_seed(
    flows: FlowsSession,
    fresh: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    chosen: tuple[int, ...],
) -> RaceOutcomes:
    from pytest_flows._internal.exploration.seeding import runs_by_seed

    runs, grouped = runs_by_seed(
        flows, fresh, chosen, lambda run: _outcome_text(run, races(run)), args, kwargs
    )
    results = {seed: races(run) for seed, run in runs.items()}
    outcomes = {text: tuple(grouped[text]) for text in sorted(grouped)}
    return RaceOutcomes(seeds=chosen, runs=runs, outcomes=outcomes, results=results)
