"""One check for every virtual duration a test passes (latencies, waits, clock moves).

Virtual time is a float that only moves forward: ``inf`` would leave the clock
at infinity (every later ``datetime.now()`` overflows) or spin a loop that can
never reach the timer, ``nan`` compares false with everything and poisons the
clock, and a negative wait would move time backwards. All three are mistakes in
the test, so they fail at the call that passed them, naming the argument.
"""

from __future__ import annotations

import math

from pytest_flows._internal.errors import FlowsUsageError

__all__ = ["check_duration"]


def check_duration(what: str, value: object) -> float:
    """``value`` as virtual seconds (a finite number >= 0), or a usage error.

    ``what`` names the argument as the test wrote it, e.g. ``"reply(latency=...)"``;
    the message repeats it with the value given and how to fix it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FlowsUsageError(
            f"{what} got {value!r} ({type(value).__name__}): a duration is a number of "
            "virtual seconds (int or float), e.g. 2.5."
        )
    try:
        seconds = float(value)
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if math.isnan(seconds):
        raise FlowsUsageError(
            f"{what} got nan: a duration must be a finite number of virtual seconds, e.g. 2.5."
        )
    if math.isinf(seconds):
        raise FlowsUsageError(
            f"{what} got {value!r}: virtual time cannot wait forever; pass a finite number of "
            "seconds (a long wait such as 3600 costs nothing)."
        )
    if seconds < 0:
        raise FlowsUsageError(
            f"{what} got {value!r}: virtual time cannot go backwards; pass seconds >= 0."
        )
    return seconds
