"""``fake_llm.auto()``: a schema-valid answer for every call no script line matches.

Like pydantic-ai's ``TestModel``: a call that offers tools gets each offered
tool called once (arguments generated from the tool's JSON schema), one per
reply, then an answer; a call with a structured output model gets a valid
instance generated from the model's JSON schema (required and optional
fields, enums, nested models, lists); anything else gets short, fixed text
(or, when the caller offers outcomes or routes, one of them). The seed picks
among enum members, outcomes and routes, so two seeds can take different
branches, and the same seed always takes the same one.

Framework-neutral: fakes put the offered tools' JSON schemas in
``request.data["tool_schemas"]`` (name -> parameters schema), the names of
tools already called in ``request.data["tools_called"]`` if their messages are
not dicts, and the conversation so far in ``request.messages`` (OpenAI-style dicts: assistant
``tool_calls``, ``role: tool`` results and, in a text (ReAct) loop, the
assistant's ``Action:`` lines tell which tools already ran).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_flows._internal.fakes.replies import ToolCall
from pytest_flows._internal.fakes.script import Request

__all__ = ["AUTO_TEXT", "AutoReply", "example_from_schema"]

#: What ``auto()`` answers a call that wants plain text.
AUTO_TEXT = "auto reply"

#: How deep nested schemas are filled before optional parts are left out
#: (a self-referencing model would otherwise never end).
_MAX_DEPTH = 8

_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "duration": "P1D",
    "ipv4": "127.0.0.1",
}


class AutoReply:
    """The reply callable ``fake_llm.auto(seed=...)`` scripts (answers any request)."""

    __name__ = "auto"

    def __init__(self, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            from pytest_flows._internal.errors import FlowsUsageError

            raise FlowsUsageError(
                f"fake_llm.auto(seed={seed!r}): the seed is a whole number, e.g. auto(seed=1)."
            )
        self.seed = seed

    def __call__(self, request: Request) -> Any:
        called = tools_called(request.messages) | set(request.data.get("tools_called") or ())
        schemas: Mapping[str, Any] = request.data.get("tool_schemas") or {}
        for name in request.tools:
            if name not in called:
                arguments = example_from_schema(schemas.get(name) or {}, self.seed)
                return ToolCall(
                    name=name, arguments=arguments if isinstance(arguments, dict) else {}
                )
        model = request.response_model
        if model is not None:
            schema = model if isinstance(model, Mapping) else _model_schema(model)
            if schema is not None:
                return example_from_schema(schema, self.seed)
        choices = request.data.get("outcomes") or request.data.get("routes")
        if choices:
            return str(list(choices)[self.seed % len(choices)])
        return AUTO_TEXT


def tools_called(messages: list[Any]) -> set[str]:
    """Names of the tools the conversation in ``messages`` already called."""
    called: set[str] = set()
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if name:
                called.add(str(name))
        if message.get("role") == "tool" and message.get("name"):
            called.add(str(message["name"]))
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, str):
            called.update(name.strip() for name in _REACT_ACTION.findall(content))
    return called


# A text (ReAct) tool loop's earlier turns: "Action: search" lines.
_REACT_ACTION = re.compile(r"^Action:\s*(.+)$", re.MULTILINE)


def _model_schema(model: Any) -> dict[str, Any] | None:
    schema = getattr(model, "model_json_schema", None)
    if callable(schema):
        value = schema()
        return value if isinstance(value, dict) else None
    return None


def example_from_schema(schema: Mapping[str, Any], seed: int = 0) -> Any:
    """A value valid under JSON schema ``schema`` (refs resolved against its ``$defs``)."""
    return _Generator(schema, seed).value(schema, "value", 0)


class _Generator:
    def __init__(self, root: Mapping[str, Any], seed: int) -> None:
        self.definitions: dict[str, Any] = {
            **dict(root.get("definitions") or {}),
            **dict(root.get("$defs") or {}),
        }
        self.seed = seed

    def value(self, schema: Any, name: str, depth: int) -> Any:
        if not isinstance(schema, Mapping):
            return f"{name}"
        if "$ref" in schema:
            target = self.definitions.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
            return self.value(target, name, depth + 1)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            members = list(schema["enum"])
            return members[self.seed % len(members)]
        if "default" in schema and depth >= _MAX_DEPTH:
            return schema["default"]
        for key in ("anyOf", "oneOf"):
            options = [o for o in schema.get(key) or [] if not _is_null(o)]
            if options:
                return self.value(options[0], name, depth + 1)
            if schema.get(key):
                return None
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                resolved = self._resolve(part)
                if isinstance(resolved, Mapping):
                    merged.update(resolved)
            return self.value(merged, name, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return self._typed(str(kind), schema, name, depth)

    def _resolve(self, schema: Any) -> Any:
        if isinstance(schema, Mapping) and "$ref" in schema:
            return self.definitions.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return schema

    def _typed(self, kind: str, schema: Mapping[str, Any], name: str, depth: int) -> Any:
        if kind == "object":
            properties: Mapping[str, Any] = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            return {
                key: self.value(sub, key, depth + 1)
                for key, sub in properties.items()
                # Optional parts stop where nesting gets deep (self-referencing models).
                if key in required or depth < _MAX_DEPTH
            }
        if kind == "array":
            count = max(1, int(schema.get("minItems") or 0))
            if "maxItems" in schema:
                count = min(count, int(schema["maxItems"]))
            items = schema.get("items") or {}
            if schema.get("prefixItems"):
                return [self.value(s, name, depth + 1) for s in schema["prefixItems"]]
            if depth >= _MAX_DEPTH:
                count = int(schema.get("minItems") or 0)
            return [self.value(items, name, depth + 1) for _ in range(count)]
        if kind == "integer":
            return int(_bounded(self.seed, schema))
        if kind == "number":
            return float(_bounded(float(self.seed), schema))
        if kind == "boolean":
            return self.seed % 2 == 1
        if kind == "null":
            return None
        return _text(name, schema)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "null"


def _bounded(value: float, schema: Mapping[str, Any]) -> float:
    if "minimum" in schema:
        value = max(value, float(schema["minimum"]))
    if "exclusiveMinimum" in schema:
        value = max(value, float(schema["exclusiveMinimum"]) + 1)
    if "maximum" in schema:
        value = min(value, float(schema["maximum"]))
    if "exclusiveMaximum" in schema:
        value = min(value, float(schema["exclusiveMaximum"]) - 1)
    return value


def _text(name: str, schema: Mapping[str, Any]) -> str:
    text = _FORMATS.get(str(schema.get("format")), name or "text")
    low = int(schema.get("minLength") or 0)
    if len(text) < low:
        text = text + "a" * (low - len(text))
    if "maxLength" in schema:
        text = text[: int(schema["maxLength"])]
    return text
