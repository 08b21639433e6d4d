"""A conversation as data: :class:`Turn` s in a :class:`Transcript` that renders to text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_flows.adapters import Exchange

__all__ = ["Frame", "Transcript", "Turn", "route_catalogue"]


@dataclass(frozen=True)
class Frame:
    """One frame of a streamed turn."""

    channel: str
    type: str
    content: Any


@dataclass
class Turn:
    """One user message and everything the flow did with it."""

    number: int
    user: str
    route: str | None = None
    routed_by: str = "default"
    why: str = ""
    handlers: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    state: Any = None
    result: Any = None
    error: BaseException | None = None
    llm_calls: list[Exchange] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)

    @property
    def reply(self) -> str | None:
        """The assistant's (last) reply this turn."""
        return self.replies[-1] if self.replies else None

    @property
    def handler(self) -> str | None:
        return self.handlers[0] if self.handlers else None

    @property
    def router_call(self) -> Exchange | None:
        calls = [c for c in self.llm_calls if c.purpose == "router"]
        return calls[-1] if calls else None

    @property
    def catalogue(self) -> dict[str, str]:
        """The routes the LLM router was offered, ``{label: description}``."""
        call = self.router_call
        return {} if call is None else route_catalogue(call.messages)

    def render(self) -> str:
        lines = [f"user: {self.user}"]
        how = f"{self.route} ({self.routed_by}{': ' + self.why if self.why else ''})"
        lines.append(f"  -> {how} · {', '.join(self.handlers) or '(no handler)'}")
        for question, answer in self.asked:
            lines.append(f"  ask: {question} => {answer if answer is not None else '<timeout>'}")
        if self.error is not None:
            lines.append(f"  error: {type(self.error).__name__}: {self.error}")
        lines.extend(f"assistant: {reply}" for reply in self.replies)
        return "\n".join(lines)


class Transcript:
    """A session as text: turns, resumes, the end. ``str(transcript)`` renders it."""

    def __init__(self) -> None:
        self.entries: list[Turn | str] = []

    @property
    def turns(self) -> list[Turn]:
        return [entry for entry in self.entries if isinstance(entry, Turn)]

    def note(self, text: str) -> None:
        self.entries.append(f"-- {text} --")

    def render(self) -> str:
        return "".join(
            (entry.render() if isinstance(entry, Turn) else entry) + "\n" for entry in self.entries
        )

    def __str__(self) -> str:
        return self.render()

    def __len__(self) -> int:
        return len(self.turns)


_ROUTE_LINE = re.compile(r"^- ([^:\n]+?)(?:: (.*))?$")


def route_catalogue(messages: Iterable[Any]) -> dict[str, str]:
    """``{label: description}`` from the routes section of crewai's router prompt."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or "Routes:\n" not in content:
            continue
        catalogue: dict[str, str] = {}
        for line in content.split("Routes:\n", 1)[1].splitlines():
            found = _ROUTE_LINE.match(line)
            if found is None:
                break
            catalogue[found.group(1)] = found.group(2) or ""
        return catalogue
    return {}
