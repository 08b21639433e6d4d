"""The private reaches of the LangGraph fakes (``fake_llm``, ``fake_tools``), declared.

``LLM_SEAMS`` joins the adapter's registry (``_seams.py``); :data:`LLM_REGISTRY` is
the same declarations looked up by target, so the fakes patch only what is declared
here even before the rest of the adapter exists. After a langchain-core or LangGraph
upgrade, the seam check (the adapter's ``check_patch_points``, and
``tests/langgraph/test_fake_llm_seams.py``) fails once, naming each seam that moved.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pytest_flows.adapters import Registry, Seam

__all__ = ["LLM_REGISTRY", "LLM_SEAMS", "routed_chat_models"]

_CHAT = "langchain_core.language_models.chat_models:BaseChatModel"
_TOOL = "langchain_core.tools:BaseTool"
_ROUTE = "a provider's model (ChatOpenAI(...) built at import) answers from fake_llm"


def _not_overridden(name: str) -> Any:
    """A probe: no chat model class of the installed providers overrides ``name``
    (the class patch would then miss that provider)."""

    def probe(_found: Any) -> str | None:
        from langchain_core.language_models.chat_models import BaseChatModel

        seen: list[type] = []
        todo = list(BaseChatModel.__subclasses__())
        while todo:
            cls = todo.pop()
            seen.append(cls)
            todo.extend(cls.__subclasses__())
        overriding = sorted(c.__qualname__ for c in seen if name in vars(c))
        return f"is overridden by {overriding}" if overriding else None

    return probe


LLM_SEAMS = [
    Seam(
        f"{_CHAT}._generate_with_cache",
        "patch",
        f"invoke/batch (sync): {_ROUTE}",
        params=("self", "messages", "stop", "run_manager"),
        source=("self._generate(", "self._stream(", "self._should_stream("),
        probe=_not_overridden("_generate_with_cache"),
    ),
    Seam(
        f"{_CHAT}._agenerate_with_cache",
        "patch",
        f"ainvoke/abatch: {_ROUTE}",
        params=("self", "messages", "stop", "run_manager"),
        source=("self._agenerate(", "self._astream("),
        probe=_not_overridden("_agenerate_with_cache"),
    ),
    Seam(
        f"{_CHAT}.stream",
        "patch",
        f"model.stream(...): {_ROUTE}",
        params=("self", "input", "config"),
        source=("self._stream(",),
        probe=_not_overridden("stream"),
    ),
    Seam(
        f"{_CHAT}.astream",
        "patch",
        f"model.astream(...): {_ROUTE}",
        params=("self", "input", "config"),
        source=("self._astream(",),
        probe=_not_overridden("astream"),
    ),
    Seam(
        f"{_CHAT}._iter_v2_events",
        "patch",
        f"stream_events(version='v3') (sync): {_ROUTE}",
        params=("self", "messages"),
        source=("self._stream(",),
    ),
    Seam(
        f"{_CHAT}._aiter_v2_events",
        "patch",
        f"astream_events(version='v3'): {_ROUTE}",
        params=("self", "messages"),
        source=("self._astream(",),
    ),
    Seam(
        f"{_CHAT}.generate",
        "read",
        "invoke reaches the provider through _generate_with_cache",
        source=("self._generate_with_cache(",),
    ),
    Seam(
        f"{_CHAT}.agenerate",
        "read",
        "ainvoke reaches the provider through _agenerate_with_cache",
        source=("self._agenerate_with_cache(",),
    ),
    Seam(
        "langgraph._internal._constants:CONFIG_KEY_SCRATCHPAD",
        "read",
        "a node task's attempt (a new scratchpad each time the task runs, as on resume): "
        "a call repeated on resume is told from a new one",
    ),
    Seam(
        f"{_TOOL}.run",
        "patch",
        "fake_tools: a tool's class gets its body wrapped the first time it runs",
        params=("self", "tool_input"),
        source=("self._run,", "_format_output("),
    ),
    Seam(
        f"{_TOOL}.arun",
        "patch",
        "fake_tools: as run, for async tools",
        params=("self", "tool_input"),
        source=("self._arun(", "_format_output("),
    ),
    Seam(
        f"{_TOOL}._run",
        "patch",
        "fake_tools answers a tool's body (shadowed on each tool class that runs)",
    ),
    Seam(
        f"{_TOOL}._arun",
        "patch",
        "fake_tools answers an async tool's body (shadowed where a class has its own)",
    ),
]

#: The declarations above, looked up by target (``LLM_REGISTRY[target].replace(...)``).
LLM_REGISTRY = Registry("langgraph", __name__, *LLM_SEAMS)


# -- the routing through the seams above ------------------------------------------------

_ROUTED = (
    "_generate_with_cache",
    "_agenerate_with_cache",
    "stream",
    "astream",
    "_iter_v2_events",
    "_aiter_v2_events",
)


def _model_name(model: Any) -> str:
    for name in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


@contextlib.contextmanager
def routed_chat_models(fake_class: Any) -> Iterator[None]:
    """Until exit, a chat model that is not a ``fake_class`` runs the shared steps on a
    ``fake_class`` twin: its model name and streaming settings, no cache (a global LLM
    cache must not answer for the script), so the provider's own ``_generate`` /
    ``_stream`` (the network) are never reached."""
    from langchain_core.language_models.chat_models import BaseChatModel

    def twin(model: Any) -> Any:
        if isinstance(model, fake_class):
            return model
        made = fake_class(
            model=_model_name(model),
            disable_streaming=model.disable_streaming,
            output_version=model.output_version,
            cache=False,
        )
        if "streaming" in model.model_fields_set and getattr(model, "streaming", False):
            made.streaming = True
        return made

    def routed(name: str, original: Any) -> Any:
        if name in ("stream", "_iter_v2_events"):

            def sync_gen(self: Any, *args: Any, **kwargs: Any) -> Any:
                yield from original(twin(self), *args, **kwargs)

            return sync_gen
        if name in ("astream", "_aiter_v2_events"):

            async def async_gen(self: Any, *args: Any, **kwargs: Any) -> Any:
                async for item in original(twin(self), *args, **kwargs):
                    yield item

            return async_gen

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            return original(twin(self), *args, **kwargs)

        return call

    with contextlib.ExitStack() as stack:
        for name in _ROUTED:
            original = getattr(BaseChatModel, name)
            stack.enter_context(LLM_REGISTRY[f"{_CHAT}.{name}"].replace(routed(name, original)))
        yield
