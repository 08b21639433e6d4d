"""Framework-neutral reply values for the scripted LLM.

A script reply is usually plain data - text, a dict, a pydantic model. These
types cover what plain data cannot say: "call these tools", "stream these
chunks", "the provider failed". Each framework's fake LLM turns them into its
own wire shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_flows._internal.durations import check_duration

__all__ = [
    "ProviderError",
    "RateLimitError",
    "Stream",
    "ToolCall",
    "call_tool",
    "stream",
]


@dataclass(frozen=True)
class ToolCall:
    """The model asks to call tool ``name`` with ``arguments``.

    Reply with one ``ToolCall`` or a list of them (parallel calls in one
    response); the framework runs the tools and calls the model again with
    their results.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


def call_tool(name: str, /, _id: str | None = None, **arguments: Any) -> ToolCall:
    """``call_tool("search", query="crewai")``: a scripted tool call."""
    if not isinstance(name, str) or not name:
        raise TypeError(
            f"call_tool() needs the tool's name as its first argument, got {name!r}; "
            'write call_tool("search", query="...").'
        )
    return ToolCall(name=name, arguments=dict(arguments), id=_id)


@dataclass(frozen=True)
class Stream:
    """A streamed reply: ``chunks`` arrive one by one, ``interval`` virtual seconds apart.

    The caller receives the joined text (or, with a response model, the model
    parsed from it); streaming listeners see every chunk.
    """

    chunks: tuple[str, ...]
    interval: float = 0.0

    @property
    def text(self) -> str:
        return "".join(self.chunks)


def stream(chunks: Iterable[str] | str, *, interval: float = 0.0) -> Stream:
    """``stream(["Hel", "lo"])``; a plain string streams word by word."""
    if isinstance(chunks, str):
        words = chunks.split(" ")
        parts = tuple(word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words))
    else:
        parts = tuple(chunks)
    if not all(isinstance(part, str) for part in parts):
        raise TypeError(f"stream() takes text chunks (str), got {parts!r}")
    return Stream(chunks=parts, interval=check_duration("stream(interval=...)", interval))


class ProviderError(Exception):
    """A scripted provider failure (an HTTP error from the model's API)."""

    def __init__(self, message: str = "provider error", *, status_code: int = 500) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = str(status_code)


class RateLimitError(ProviderError):
    """A scripted 429. Frameworks retry these; under pytest-flows the waits are virtual.

    ``retry_after`` becomes the ``Retry-After`` header frameworks honour.
    """

    def __init__(
        self, message: str = "Rate limit exceeded (429)", *, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status_code=429)
        if retry_after is not None:
            check_duration("RateLimitError(retry_after=...)", retry_after)
        self.retry_after = retry_after
        self.headers = {} if retry_after is None else {"retry-after": str(retry_after)}
