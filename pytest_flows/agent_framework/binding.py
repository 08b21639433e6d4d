"""How the harness's fakes (``flow_store``, ``human``, ``fake_llm``) plug into Agent Framework."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pytest_flows.agent_framework.checkpoints import FlowsCheckpointStorage

if TYPE_CHECKING:
    from pytest_flows.agent_framework.adapter import AgentFrameworkAdapter, PendingRequest
    from pytest_flows.session import FlowsSession

__all__ = ["bind", "human_answers"]


def bind(
    adapter: AgentFrameworkAdapter, session: FlowsSession, kind: str, fake: Any
) -> contextlib.AbstractContextManager[None] | None:
    fakes = adapter.fakes(session)
    if kind == "store":
        storage = fake if isinstance(fake, FlowsCheckpointStorage) else None
        if storage is None:
            return None
        return _setting(fakes, "storage", storage)
    if kind == "llm":
        from pytest_flows.agent_framework.chat import intercept_chat_clients

        stack = contextlib.ExitStack()
        stack.enter_context(_setting(fakes, "llm", fake))
        stack.enter_context(intercept_chat_clients(fake))
        return _closing(stack)
    return None


@contextlib.contextmanager
def _closing(stack: contextlib.ExitStack) -> Iterator[None]:
    with stack:
        yield


@contextlib.contextmanager
def _setting(fakes: Any, name: str, value: Any) -> Iterator[None]:
    previous = getattr(fakes, name)
    setattr(fakes, name, value)
    try:
        yield
    finally:
        setattr(fakes, name, previous)


def human_answers(human: Any, pending: Sequence[PendingRequest]) -> dict[str, Any]:
    return {}
