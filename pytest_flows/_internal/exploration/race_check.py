"""``@pytest.mark.flows(races="fail")``: a state race any run of the test showed fails it.

Every ``flows.run`` of such a test records which state fields each method read and
wrote (it follows the default schedule, so it behaves as with seed 0). After the
test body, :func:`check` turns the conflicts into an ``AssertionError`` that names
the field, both methods and their source lines, and says how to see the outcomes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime.conflicts import conflicts_in
from pytest_flows._internal.runtime.schedule import Chooser

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["MODES", "check", "check_mode"]

MODES = ("off", "warn", "fail")


def check_mode(value: object, where: str) -> str:
    """``value`` if it is a races mode, else a usage error naming ``where``."""
    if value not in MODES:
        raise FlowsUsageError(
            f"{where}: races is one of {', '.join(map(repr, MODES))}, got {value!r}; "
            "e.g. @pytest.mark.flows(races='fail')."
        )
    return str(value)


#: Schedules races="fail" explores to show how outcomes differ.
EXPLORE_LIMIT = 200


def _outcomes(session: FlowsSession, recorded: list[Chooser]) -> list[str]:
    """Two schedules of the racing flow whose outcomes differ, or that they all agreed."""
    from pytest_flows._internal.exploration.explore import explore_schedules

    rerun = next((c.rerun for c in recorded if conflicts_in([c]) and c.rerun), None)
    if rerun is None:
        return [
            "The flow was given as an instance whose class needs arguments, so it was not "
            "run again: explore(flows, lambda: MyFlow(...)) runs every schedule and lists "
            "the outcomes they lead to, each with a schedule that replays it "
            "(flows.run(MyFlow, schedule=...))."
        ]
    name, again = rerun
    found = explore_schedules(session, again, max_schedules=EXPLORE_LIMIT)
    if len(found.outcomes) < 2:
        scope = "every schedule" if found.complete else f"{found.schedules_run} schedules"
        return [f"{name}: all explored schedules agreed ({scope}: {found.outcomes[0].text})."]
    first, second = found.outcomes[:2]
    return [
        f"{name}: schedules lead to {len(found.outcomes)} outcomes, for instance:",
        f"  {first.text}  <- flows.run({name}, schedule={first.schedule!r})",
        f"  {second.text}  <- flows.run({name}, schedule={second.schedule!r})",
    ]


def check(session: FlowsSession, *, marked: bool = False) -> None:
    """Fail (or warn) if the runs of this test showed a state race."""
    mode = getattr(session, "races", "off") or "off"
    recorded = getattr(session, "recorded_schedules", [])
    if mode == "off":
        return
    if not recorded:
        if marked:
            raise FlowsUsageError(
                f"@pytest.mark.flows(races={mode!r}) checks the flows this test runs, but it "
                "ran none: run the flow with flows.run(MyFlow) or explore(flows, MyFlow) in "
                "the test, or drop races= from the marker."
            )
        return  # the ini option covers every flows test, also those that run no flow
    found = conflicts_in(recorded)
    if not found:
        return
    lines = [f"pytest-flows found {len(found)} state race(s) in this test's runs:"]
    lines.extend(f"  {conflict.render()}" for conflict in found)
    lines.extend(_outcomes(session, recorded))
    lines.append(
        "Guard the field with a lock, give each method its own field, or order the "
        "methods with @listen."
    )
    message = "\n".join(lines)
    if mode == "fail":
        raise AssertionError(message)
    import warnings

    warnings.warn(message, stacklevel=1)
