"""Routing: while a fake LLM is bound, every crewai LLM answers from it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from crewai.llms.base_llm import BaseLLM

from pytest_flows.crewai._seams import SEAMS

__all__ = ["route_constructor", "route_existing"]

_ROUTED_METHODS = ("call", "acall")


def _llm_classes(fake_class: type) -> list[type]:
    seen: list[type] = []
    stack: list[type] = [BaseLLM]
    while stack:
        cls = stack.pop()
        sub: type
        for sub in cls.__subclasses__():
            if sub not in seen and not issubclass(sub, fake_class):
                seen.append(sub)
                stack.append(sub)
    return seen


def _handle_of(fake: Any, llm: Any) -> Any:
    """The fake's handle for an LLM object built before the test: its model, and its
    ``response_format`` (as JSON text when it is crewai's LiteLLM class)."""
    response_format = getattr(llm, "response_format", None)
    if not isinstance(response_format, type):
        response_format = None
    as_text = bool(getattr(llm, "is_litellm", False))
    stream = getattr(llm, "stream", False) is True
    return fake.handle(str(llm.model), response_format, as_text=as_text, stream=stream)


def _routed(fake: Any, name: str) -> Callable[..., Any]:
    if name == "acall":

        async def acall(self: Any, *args: Any, **kwargs: Any) -> Any:
            return await _handle_of(fake, self).acall(*args, **kwargs)

        return acall

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _handle_of(fake, self).call(*args, **kwargs)

    return call


def _through_litellm(cls: Any, model: str, is_litellm: bool, kwargs: dict[str, Any]) -> bool:
    """Whether crewai would build ``model`` on its LiteLLM fallback (which returns a
    ``response_format`` reply as JSON text) rather than a native provider (which
    returns the parsed model)."""
    if is_litellm:
        return True
    resolve = getattr(cls, "_resolve_route", None)
    if resolve is None:
        return False
    try:
        return resolve(model, dict(kwargs)).native_class is None
    except Exception:  # an unknown provider: crewai would fail its own way on a real call
        return False


_BASE = "crewai.llms.base_llm:BaseLLM"
#: What a routed LLM class answers with, by the seam it replaces.
_CAPABILITIES: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("crewai.llm:LLM.supports_function_calling", lambda self: True),
    (f"{_BASE}.supports_stop_words", lambda self: False),
)


@contextlib.contextmanager
def route_existing(fake: Any) -> Iterator[None]:
    """LLM objects built before the test (at import) answer from the fake too."""
    with contextlib.ExitStack() as stack:
        for cls in _llm_classes(type(fake)):
            for name in _ROUTED_METHODS:
                if name in cls.__dict__:
                    seam = SEAMS[f"{_BASE}.{name}"]
                    stack.enter_context(seam.shadow(cls, _routed(fake, name)))
            for target, value in _CAPABILITIES:
                seam = SEAMS[target]
                if seam.name in cls.__dict__:
                    stack.enter_context(seam.shadow(cls, value))
        yield


@contextlib.contextmanager
def route_constructor(fake: Any) -> Iterator[None]:
    """``LLM("model")`` returns the fake's handle for "model" (``__init__`` is skipped
    because the object returned is not an ``LLM``)."""

    def routed_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
        model = kwargs.get("model", args[0] if args else None)
        if not model or not isinstance(model, str):
            raise ValueError("Model must be a non-empty string")
        response_format = kwargs.get("response_format")
        stream = kwargs.get("stream") is True  # LLM(..., stream=True): the calls stream
        if not isinstance(response_format, type):  # a JSON-mode dict: the reply is text
            return fake.handle(model, stream=stream)
        is_litellm = bool(kwargs.get("is_litellm", args[1] if len(args) > 1 else False))
        options = {k: v for k, v in kwargs.items() if k not in ("model", "is_litellm")}
        return fake.handle(
            model,
            response_format,
            as_text=_through_litellm(cls, model, is_litellm, options),
            stream=stream,
        )

    with SEAMS["crewai.llm:LLM.__new__"].replace(routed_new):
        yield
