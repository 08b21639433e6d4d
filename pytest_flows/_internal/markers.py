"""Reading pytest-flows' markers: the closest marker wins, bad arguments are usage errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest


def marker_settings(
    item: pytest.Item,
    name: str,
    accepted: Sequence[str],
    *,
    positional: str | None = None,
    booleans: Sequence[str] = (),
) -> dict[str, Any]:
    """Merge the keyword arguments of every ``@pytest.mark.<name>`` on ``item``.

    ``positional`` names the one positional argument the marker takes, if any
    (stored under that key); anything else raises ``pytest.UsageError``. The
    arguments named in ``booleans`` take ``True`` or ``False`` only: a string such
    as ``"no"`` is truthy and would silently mean yes.
    """
    settings: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers(name))):  # closest marker wins
        if len(marker.args) > (1 if positional else 0):
            takes = (
                f"at most one positional argument (the {positional})"
                if positional
                else f"keyword arguments only ({', '.join(accepted)})"
            )
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{name} takes {takes}, got positional {marker.args!r}"
            )
        unknown = sorted(set(marker.kwargs) - set(accepted))
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{name} got unknown argument(s) "
                f"{', '.join(unknown)}; it accepts {', '.join(accepted)}"
            )
        if marker.args and positional:
            settings[positional] = marker.args[0]
        for key in booleans:
            if key in marker.kwargs and not isinstance(marker.kwargs[key], bool):
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.{name}({key}=...) takes True or False, got "
                    f"{marker.kwargs[key]!r}"
                )
        settings.update(marker.kwargs)
    return settings
