"""What a replay that cannot answer a request says: the prompt diff, the call count, the fix.

Everything here is built from requests after the scrubber has seen them, and
the finished message goes through it once more: a drift report never prints a
secret, even one the flow put in its prompt.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from pytest_flows._internal.recording.matching import Interaction, describe, render_prompt

if TYPE_CHECKING:
    from pytest_flows._internal.recording.cassette import Recording

__all__ = [
    "CassetteMismatchError",
    "PromptDriftError",
    "RecordingBlockedError",
    "drift_message",
    "summary",
]


class PromptDriftError(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """A request the cassette cannot answer: the prompt (or the call count) changed.

    It fails the test directly (like ``pytest.fail``): HTTP clients and the
    frameworks catch ``Exception`` and would retry it, wrap it in a generic
    connection error, or swallow it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)


class CassetteMismatchError(PromptDriftError):
    """The cassette has recorded requests the test did not make."""


class RecordingBlockedError(PromptDriftError):
    """A request would be recorded from a host the network guard does not allow."""


def summary(interaction: Interaction, limit: int = 100) -> str:
    lines = [line.strip() for line in render_prompt(interaction.canonical)]
    text = " / ".join(line for line in lines if line)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{interaction.where}: {text}"


def drift_message(recording: Recording, request: Any) -> str:
    """Why ``request`` cannot be replayed from the recording, without any secret in it."""
    return recording.scrubber.text(_explain(recording, request))


def _explain(recording: Recording, request: Any) -> str:
    cassette = recording.cassette
    new = describe(cassette.filter_request(request))
    data = cassette.data
    same_place = [
        (index, describe(stored))
        for index, (stored, _) in enumerate(data)
        if str(stored.method) == new.method
        and urlsplit(str(stored.uri)).path == urlsplit(new.uri).path
    ]
    head = (
        f"pytest-flows: this {new.where} request is not on the cassette, so it cannot be "
        f"replayed (record mode {recording.record_mode!r}).\n"
        f"  cassette: {recording.path}\n"
    )
    fix = (
        "If the change is intended, record the changed calls again:\n"
        "  pytest --flows-record-mode=new_episodes <this test>   (re-records only what "
        "changed, drops what is no longer used)\n"
        "  pytest --flows-record-mode=all <this test>            (re-records everything)\n"
        "and commit the cassette. In CI (CI is set) cassettes are only replayed."
    )
    if not data:
        return (
            head
            + "There is no recorded interaction to replay"
            + ("" if recording.path.exists() else " (the cassette file does not exist)")
            + ": record it first, on a machine with access to the provider:\n"
            "  pytest --flows-record-mode=once <this test>\n"
            "and commit the cassette. In CI (CI is set) cassettes are only replayed."
        )
    exhausted = [
        index
        for index, recorded in same_place
        if recorded.canonical == new.canonical and cassette.play_counts[index]
    ]
    if exhausted:
        return (
            head + "The same request was recorded, but every recording of it was already "
            f"replayed: the flow now makes this call more often ({len(exhausted) + 1} times) "
            "than when the cassette was recorded.\n"
            + "\n".join(render_prompt(new.canonical))
            + "\n"
            + fix
        )
    if not same_place:
        return (
            head + f"The cassette has no {new.where} request at all: the flow makes a call "
            "it did not make when the cassette was recorded. The new request:\n"
            + "\n".join(f"  {line}" for line in render_prompt(new.canonical))
            + "\n"
            + fix
        )
    unplayed = [(i, r) for i, r in same_place if not cassette.play_counts[i]] or same_place
    now = render_prompt(new.canonical)

    def likeness(item: tuple[int, Interaction]) -> float:
        return difflib.SequenceMatcher(None, render_prompt(item[1].canonical), now).ratio()

    index, closest = max(unplayed, key=likeness)  # max keeps the first of equals
    diff = "".join(
        line + "\n"
        for line in difflib.unified_diff(
            render_prompt(closest.canonical),
            now,
            fromfile=f"recorded (interaction {index + 1} of {len(data)})",
            tofile="now",
            lineterm="",
        )
    )
    return (
        head + "The prompt changed since it was recorded. Closest recorded request:\n" + diff + fix
    )
