"""The property helpers recognise pytest-timeout's timeout by its message."""

from __future__ import annotations

import pytest
import pytest_timeout

from pytest_flows._internal.state.property_timeouts import is_pytest_timeout


def test_the_message_pytest_timeout_fails_with_is_recognised():
    # Fails loudly if a pytest-timeout release words its timeout another way: the
    # helpers would then let hypothesis run a hanging example again, unstopped.
    with pytest.raises(pytest.fail.Exception) as timeout:
        pytest.fail(pytest_timeout.PYTEST_FAILURE_MESSAGE % 90.0)

    assert is_pytest_timeout(timeout.value)


@pytest.mark.parametrize(
    "error",
    [
        pytest.fail.Exception("Timeout in the flow's own words"),
        AssertionError("Timeout (>90.0s) from pytest-timeout."),
        KeyboardInterrupt(),
    ],
)
def test_nothing_else_is_taken_for_it(error):
    assert not is_pytest_timeout(error)
