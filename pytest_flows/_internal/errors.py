"""Errors pytest-flows raises. Each message names the problem and the fix."""

from __future__ import annotations

import pytest

__all__ = [
    "FlowsDeadlockError",
    "FlowsError",
    "FlowsUsageError",
    "FlowsWarning",
    "NetworkBlockedError",
    "NoMethodRanWarning",
    "require_bool",
]


class FlowsError(Exception):
    """Base class of every error pytest-flows raises itself."""


class FlowsUsageError(FlowsError, TypeError):
    """The harness was called with something it cannot run or understand."""


class FlowsWarning(pytest.PytestWarning):
    """Base class of the warnings pytest-flows issues: a test that passes but checks less
    than it seems to."""


class NoMethodRanWarning(FlowsWarning):
    """A flow run started and finished without executing a single method.

    The usual cause: a subclass of a flow class (crewai does not inherit
    ``@start``/``@listen``/``@router`` methods into subclasses).
    """


class NetworkBlockedError(FlowsError):
    """A flows test tried to reach a host other than this machine.

    Deliberately not an ``OSError``: HTTP clients would wrap and retry an
    ``OSError`` with real sleeps, hiding this message.
    """

    def __init__(self, host: str, port: int | None) -> None:
        self.host = host
        self.port = port
        where = f"{host}:{port}" if port is not None else host
        super().__init__(
            f"pytest-flows blocked a network connection to {where}: flows tests run offline "
            "and only reach this machine (127.0.0.0/8, ::1, localhost). Script the call with "
            "the fake LLM instead, record it once with vcrpy (see docs/recording.md), or allow "
            f"this host for one test with @pytest.mark.flows(allow_hosts=[{host!r}])."
        )


class FlowsDeadlockError(FlowsError):
    """Every thread of a run is blocked, its event loop has nothing ready and no timer is due.

    The message names each blocked thread with its stack and each pending task; a
    real thread pool would hang at this point instead.
    """


def require_bool(value: object, where: str) -> bool:
    """``value`` if it is ``True`` or ``False``; a string such as ``"false"`` is truthy and
    would silently mean yes, so anything else is a :class:`FlowsUsageError`."""
    if not isinstance(value, bool):
        raise FlowsUsageError(f"{where} takes True or False, got {value!r}.")
    return value
