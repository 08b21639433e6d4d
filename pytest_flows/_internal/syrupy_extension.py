"""pytest-flows' syrupy extension: amber, plus readable text for pytest-flows values.

syrupy imports the default extension when a session starts, so this module is
kept light: the renderers (:mod:`pytest_flows._internal.snapshot`, which needs pydantic)
load only when a pytest-flows value is actually snapshotted.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.amber import (
    AmberDataSerializer,
    AmberDataSerializerPlugin,
    AmberSnapshotExtension,
)

# The plugin's start-up side (the ini option, syrupy's default) is syrupy_wiring.
from pytest_flows._internal.syrupy_wiring import EXTENSION_PATH

__all__ = [
    "EXTENSION_PATH",
    "FlowsAmberSerializer",
    "FlowsSerializerPlugin",
    "FlowsSnapshotExtension",
]


def _is_flows_value(data: Any) -> bool:
    item = data[0] if isinstance(data, list) and data else data
    return type(item).__module__.startswith("pytest_flows.")


class FlowsSerializerPlugin(AmberDataSerializerPlugin):
    """Serializes pytest-flows values for the amber serializer."""

    @classmethod
    def is_data_serializable(cls, data: Any) -> bool:
        if not _is_flows_value(data):
            return False
        from pytest_flows._internal.snapshot import _block_of

        return _block_of(data) is not None

    @classmethod
    def serialize(cls, data: Any, **kwargs: Any) -> str:
        from pytest_flows._internal.snapshot import _block_of

        block = _block_of(data)
        assert block is not None  # checked by is_data_serializable
        text = "\n".join(block.lines(int(kwargs.get("depth", 0))))
        _refuse_secrets(text)
        return text


def _refuse_secrets(text: str) -> None:
    """A snapshot is a committed file: the same secret check as a golden file's."""
    from pytest_flows._internal.errors import FlowsUsageError
    from pytest_flows._internal.secret_check import secret_fields, secret_values_in

    fields = [found.split(" (", 1)[-1].rstrip(")") for found in secret_fields(text.splitlines())]
    leaked = secret_values_in(text)
    if fields or leaked:
        held = [f"secret-named fields ({', '.join(dict.fromkeys(fields))})"] if fields else []
        held += [f"the value of ${', $'.join(leaked)}"] if leaked else []
        raise FlowsUsageError(
            f"refusing to snapshot a pytest-flows value that holds {' and '.join(held)}. Keep "
            "credentials out of flow inputs, state and outputs."
        )


class FlowsAmberSerializer(AmberDataSerializer):
    """Amber, plus readable text for pytest-flows values (same file format, same version)."""

    serializer_plugins = (FlowsSerializerPlugin,)


class FlowsSnapshotExtension(AmberSnapshotExtension):
    """syrupy's amber extension with :class:`FlowsAmberSerializer`."""

    serializer_class = FlowsAmberSerializer
