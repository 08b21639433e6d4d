"""pytest-timeout's timeout gets through hypothesis in the property helpers.

pytest-timeout's signal method (its default where SIGALRM exists) ends a test with
``pytest.fail("Timeout (>Ns) from pytest-timeout.")``, once: the timer is spent.
hypothesis takes every ``Failed`` for a failing example and runs examples again to
shrink it, so an example that hangs would then hang for ever, with no timer left to
stop it. Inside the property helpers that timeout becomes :class:`PropertyTimedOut`,
which hypothesis passes on, so the test fails once, below pytest-timeout's stacks.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["PropertyTimedOut", "is_pytest_timeout", "timeouts_escape"]

P = ParamSpec("P")
R = TypeVar("R")

#: How pytest-timeout's failure message ends (``PYTEST_FAILURE_MESSAGE`` since 1.x).
_PYTEST_TIMEOUT_MARK = "from pytest-timeout."


class PropertyTimedOut(BaseException):
    """pytest-timeout stopped an example of a property helper.

    A ``BaseException`` that is no ``Failed``: hypothesis re-raises it at once
    instead of running the example again with the timer spent.
    """


def is_pytest_timeout(error: BaseException) -> bool:
    """Whether ``error`` is pytest-timeout stopping the test (its signal method)."""
    outcomes = sys.modules.get("_pytest.outcomes")
    failed = getattr(outcomes, "Failed", None)
    return (
        isinstance(failed, type)
        and isinstance(error, failed)
        and str(error).endswith(_PYTEST_TIMEOUT_MARK)
    )


def timeouts_escape(body: Callable[P, R]) -> Callable[P, R]:
    """``body`` (a hypothesis test body) with pytest-timeout's timeout passed on."""

    @functools.wraps(body)
    def escaping(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return body(*args, **kwargs)
        except BaseException as error:
            if is_pytest_timeout(error):
                raise PropertyTimedOut(
                    f"{error} It stopped an example of a property helper, which ends the "
                    "test here: hypothesis would take the timeout for a failing example "
                    "and run it again with the timer spent. The stacks pytest-timeout "
                    "printed show where the example was; raise --timeout if it is only "
                    "slow, or lower max_examples."
                ) from error
            raise

    return escaping
