"""The cassette file: vcrpy's YAML, readable (block text), refused loudly when unreadable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_flows._internal.errors import FlowsUsageError

__all__ = ["RECORD_MODES", "SERIALIZER", "check_readable"]

#: vcrpy's record modes. Here, not beside vcrpy's use: the start-up options list them.
RECORD_MODES = ("once", "new_episodes", "none", "all")


class _Serializer:
    """vcrpy's YAML cassette, readable: multi-line text as YAML block scalars."""

    header = (
        "# pytest-flows cassette: recorded HTTP traffic, replayed offline.\n"
        "# Secrets are filtered; requests match on method, path, query and the prompt.\n"
    )

    @staticmethod
    def _dumper() -> Any:
        import yaml  # type: ignore[import-untyped]

        dumper: Any = type("CassetteDumper", (yaml.SafeDumper,), {})

        def text(dumper: Any, data: str) -> Any:
            style = "|" if "\n" in data else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

        dumper.add_representer(str, text)
        return dumper

    def serialize(self, cassette: dict[str, Any]) -> str:
        import yaml

        dumped = yaml.dump(
            cassette, Dumper=self._dumper(), sort_keys=False, allow_unicode=True, width=100
        )
        return self.header + str(dumped)

    def deserialize(self, text: str) -> Any:
        import yaml

        return yaml.safe_load(text)


SERIALIZER = _Serializer()


def check_readable(path: Path) -> None:
    """Refuse a cassette file vcrpy would silently treat as empty (and overwrite)."""
    if not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            return
        data = SERIALIZER.deserialize(text)
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ValueError("it has no 'interactions' list")
        for interaction in data["interactions"]:
            if not {"request", "response"} <= set(interaction):
                raise ValueError("an interaction lacks its request or response")
    except Exception as exc:
        raise FlowsUsageError(
            f"the cassette {path} cannot be read ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())}). Restore it "
            "from version control, or delete it and run the test once (with network access "
            "to the provider) to record it again."
        ) from None
