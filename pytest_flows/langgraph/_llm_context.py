"""Where in a graph a fake model call is made: the node's metadata, and errors that say it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import ensure_config

from pytest_flows.adapters import Request, ScriptError

__all__ = ["metadata_of", "with_graph_context"]


def metadata_of(run_manager: Any) -> Mapping[str, Any]:
    """The running node's metadata (``langgraph_node``, ``langgraph_checkpoint_ns``,
    ``thread_id``...): the run manager's, else the context's config (``model.stream()``
    calls the provider step without a run manager; the node's config is still current)."""
    found = getattr(run_manager, "metadata", None) or ensure_config().get("metadata")
    return found or {}


def with_graph_context(exc: ScriptError, request: Request) -> ScriptError:
    """The script's error, led by where in the graph the call was made."""
    node = request.caller.get("method")
    if node is None or not hasattr(exc, "request"):
        return exc
    path = request.caller.get("checkpoint_ns")
    where = f"LangGraph node {node!r}" + (f" (in {path})" if path else "")
    head = f"{where} called model {request.caller.get('model')!r}; fake_llm has no reply for it."
    remade: Any = type(exc)  # UnscriptedRequest(message, request)
    return remade(f"{head}\n{exc}", request)  # type: ignore[no-any-return]
