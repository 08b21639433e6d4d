"""What the fake LLM's replies become on crewai's side, and what it reads from requests."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from pytest_flows.adapters import (
    Request,
    ScriptError,
    ScriptReplyError,
    ToolCall,
    placeholder,
    render_value,
)


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, dict | list):
        return json.dumps(value)
    if value is None:
        raise ScriptReplyError(
            'pytest-flows: a scripted LLM reply is None; reply with text ("" for an empty answer).'
        )
    return str(value)


def structured(value: Any, request: Request) -> Any:
    model = request.response_model
    name = getattr(model, "__name__", str(model))
    if isinstance(value, model):
        return value
    try:
        if isinstance(value, BaseModel):
            return model.model_validate(value.model_dump())
        if isinstance(value, str):
            return model.model_validate_json(value)
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ScriptReplyError(
            f"pytest-flows: LLM call #{request.number} (caller: {request.describe_caller()}) "
            f"asked for a {name}, and the scripted reply {value!r} does not fit it: {problems}. "
            f"Reply with a {name}(...) or a dict such as "
            f"{placeholder(model, request.data.get('outcomes'))}."
        ) from None


def summary(result: Any, limit: int = 80) -> str:
    if isinstance(result, BaseModel):
        return type(result).__name__ + render_value(result.model_dump(mode="json"), limit=limit)
    return render_value(result, limit=limit)


def error_text(exc: BaseException) -> str:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return render_value(
        f"{type(exc).__name__}: {first}" if first else type(exc).__name__, limit=100
    )


def tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def as_messages(messages: Any) -> list[Any]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages or [])


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def all_text(messages: Any) -> str:
    return "\n".join(
        content_text(m.get("content") if isinstance(m, dict) else m) for m in as_messages(messages)
    )


def tool_names(tools: Any) -> list[str]:
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
        else:
            name = getattr(tool, "name", None)
        if name:
            names.append(str(name))
    return names


def tool_schemas(tools: Any) -> dict[str, Any]:
    """Each offered tool's parameters JSON schema, by name (for ``fake_llm.auto()``)."""
    schemas: dict[str, Any] = {}
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        nested = tool.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else tool
        name = function.get("name")
        if name:
            schemas[str(name)] = function.get("parameters") or function.get("input_schema") or {}
    return schemas


def router_context(text: str) -> dict[str, Any]:
    """The JSON context crewai's conversational router sends ({} if it is not that)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


# crewai's text tool loop (translations/en.json "tools"): the offered tools'
# names, and one "Tool Name: ...\nTool Arguments: {json schema}" block each.
_REACT_NAMES = re.compile(r"Action: the action to take, only one name of \[(.*?)\]")
_REACT_TOOL = re.compile(r"Tool Name: (.+?)\nTool Arguments: (.*?)\nTool Description:", re.DOTALL)


def react_tools(messages: Any) -> list[str] | None:
    """The tools a crewai text (ReAct) prompt offers, or None if it is no such prompt."""
    found = _REACT_NAMES.search(all_text(messages))
    if found is None:
        return None
    return [name.strip() for name in found.group(1).split(",") if name.strip()]


def react_tool_schemas(messages: Any) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for name, arguments in _REACT_TOOL.findall(all_text(messages)):
        try:
            schema = json.loads(arguments)
        except ValueError:
            continue
        if isinstance(schema, dict):
            schemas[name.strip()] = schema
    return schemas


def react_action(calls: list[ToolCall], label: str) -> str:
    """A scripted tool call as the text crewai's ReAct parser reads."""
    if len(calls) != 1:
        raise ScriptError(
            f"pytest-flows: {label} calls {len(calls)} tools in one reply, but this agent's "
            "LLM uses crewai's text tool loop, which takes one Action a turn. Script one "
            "call_tool(...) per reply."
        )
    tool = calls[0]
    return (
        f"Thought: I should use the {tool.name} tool.\n"
        f"Action: {tool.name}\n"
        f"Action Input: {json.dumps(dict(tool.arguments))}"
    )


def react_final(text: str) -> str:
    """A scripted text reply as the ReAct loop's final answer (unless it already is one)."""
    if "Final Answer:" in text or re.search(r"^Action:", text, re.MULTILINE):
        return text
    return f"Thought: I now know the final answer\nFinal Answer: {text}"
