"""The module to name for ``pytest -p``: ``pytest -p pytest_flows.plugin``.

pytest loads pytest-flows by itself through its ``pytest11`` entry point
(``flows``). Where entry points are not loaded (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``,
as crewAI's and Agent Framework's own suites run), ``-p pytest_flows.plugin``
(or ``pytest_plugins = ["pytest_flows.plugin"]`` in a conftest) loads it.

The hooks live in the entry point's module; this one registers that module
under the entry point's name, ``flows``, so the two ways never register the
plugin twice: with autoload on as well, pytest finds ``flows`` registered and
skips the entry point, and a plugin already loaded from the entry point is left
alone. ``-p no:flows`` still disables it.
"""

from __future__ import annotations

import sys
from typing import Any

from pytest_flows._internal import plugin as _plugin

__all__: list[str] = []

#: The pytest11 entry point's name (pyproject.toml): what -p no:flows blocks.
ENTRY_POINT_NAME = "flows"


def pytest_plugin_registered(plugin: object, plugin_name: str, manager: Any) -> None:
    if plugin is not sys.modules[__name__] or manager.is_registered(_plugin):
        return
    if manager.is_blocked(ENTRY_POINT_NAME):
        return
    taken = manager.get_plugin(ENTRY_POINT_NAME) is not None
    manager.register(_plugin, _plugin.__name__ if taken else ENTRY_POINT_NAME)
