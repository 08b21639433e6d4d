"""What ``fake_crews`` replies become: ``CrewOutput`` s and ``LiteAgentOutput`` s."""

from __future__ import annotations

import json
from typing import Any

from crewai.crews.crew_output import CrewOutput
from crewai.lite_agent_output import LiteAgentOutput
from crewai.tasks.output_format import OutputFormat
from crewai.tasks.task_output import TaskOutput
from pydantic import BaseModel, ValidationError

from pytest_flows.adapters import (
    CrewReply,
    Request,
    ScriptReplyError,
    crew_output,
    render_value,
    short,
)

__all__ = ["CrewReply", "crew_output", "to_agent_output", "to_crew_output"]


def _validate(model: Any, value: Any, request: Request) -> BaseModel:
    name = getattr(model, "__name__", str(model))
    try:
        if isinstance(value, model):
            return value  # type: ignore[no-any-return]
        if isinstance(value, BaseModel):
            return model.model_validate(value.model_dump())  # type: ignore[no-any-return]
        if isinstance(value, str):
            return model.model_validate_json(value)  # type: ignore[no-any-return]
        return model.model_validate(value)  # type: ignore[no-any-return]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ScriptReplyError(
            f"pytest-flows: crew kickoff #{request.number} (caller: {request.describe_caller()}) "
            f"expects a {name} (its last task's output type), and the scripted result "
            f"{short(value)} does not fit it: {problems}. Reply with a {name}(...)."
        ) from None


def _task_output(task: Any, value: Any, request: Request) -> TaskOutput:
    if isinstance(value, TaskOutput):
        return value
    description = str(getattr(task, "description", "") or "")
    agent = str(getattr(getattr(task, "agent", None), "role", "") or "")
    name = getattr(task, "name", None)
    pyd_model = getattr(task, "output_pydantic", None)
    json_model = getattr(task, "output_json", None)
    pydantic: BaseModel | None = None
    json_dict: dict[str, Any] | None = None
    fmt = OutputFormat.RAW
    if pyd_model is not None:
        pydantic = _validate(pyd_model, value, request)
        fmt = OutputFormat.PYDANTIC
        raw = pydantic.model_dump_json()
    elif json_model is not None:
        json_dict = _validate(json_model, value, request).model_dump(mode="json")
        fmt = OutputFormat.JSON
        raw = json.dumps(json_dict)
    elif isinstance(value, BaseModel):
        pydantic, raw, fmt = value, value.model_dump_json(), OutputFormat.PYDANTIC
    elif isinstance(value, dict):
        json_dict, raw, fmt = value, json.dumps(value), OutputFormat.JSON
    else:
        raw = str(value)
    return TaskOutput(
        description=description,
        name=name,
        expected_output=getattr(task, "expected_output", None),
        raw=raw,
        pydantic=pydantic,
        json_dict=json_dict,
        agent=agent,
        output_format=fmt,
    )


def _unparsed(task: Any, value: CrewReply, request: Request) -> TaskOutput | None:
    """``crew_output(raw=...)`` that the last task's model cannot parse: what crewai
    returns when the model wrote garbage (the text, no ``pydantic``/``json_dict``)."""
    model = getattr(task, "output_pydantic", None) or getattr(task, "output_json", None)
    if model is None or value.raw is None or value.pydantic or value.json_dict or value.tasks:
        return None
    try:
        _validate(model, value.raw, request)
    except ScriptReplyError:
        pydantic_format = getattr(task, "output_pydantic", None) is not None
        return TaskOutput(
            description=str(getattr(task, "description", "") or ""),
            name=getattr(task, "name", None),
            expected_output=getattr(task, "expected_output", None),
            raw=value.raw,
            agent=str(getattr(getattr(task, "agent", None), "role", "") or ""),
            output_format=OutputFormat.PYDANTIC if pydantic_format else OutputFormat.JSON,
        )
    return None


class _NoTask:
    description = ""
    name = None
    expected_output = None
    agent = None
    output_pydantic = None
    output_json = None


def to_crew_output(crew: Any, value: Any, request: Request) -> CrewOutput:
    if isinstance(value, CrewOutput):
        return value
    tasks = list(getattr(crew, "tasks", None) or []) or [_NoTask()]
    if isinstance(value, CrewReply):
        unparsed = _unparsed(tasks[-1], value, request)
        if unparsed is not None:
            return CrewOutput(raw=unparsed.raw, tasks_output=[unparsed])
        outputs = [
            _task_output(tasks[i] if i < len(tasks) else _NoTask(), item, request)
            for i, item in enumerate(value.tasks)
        ]
        final_value: Any = value.pydantic or value.json_dict or value.raw
        if final_value is None:
            final_value = outputs[-1] if outputs else ""
        final = (
            _task_output(tasks[-1], final_value, request)
            if not isinstance(final_value, TaskOutput)
            else final_value
        )
        if not outputs:
            outputs = [final]
        return CrewOutput(
            raw=value.raw if value.raw is not None else final.raw,
            pydantic=final.pydantic,
            json_dict=value.json_dict if value.json_dict is not None else final.json_dict,
            tasks_output=outputs,
        )
    if value is None:
        raise ScriptReplyError(
            f"pytest-flows: crew kickoff #{request.number}: a scripted crew result is None; "
            'reply with text ("" for an empty result), a model or crew_output(...).'
        )
    final = _task_output(tasks[-1], value, request)
    return CrewOutput(
        raw=final.raw, pydantic=final.pydantic, json_dict=final.json_dict, tasks_output=[final]
    )


def to_agent_output(agent: Any, value: Any, request: Request) -> LiteAgentOutput:
    if isinstance(value, LiteAgentOutput):
        return value
    role = str(getattr(agent, "role", "agent"))
    model = request.response_model
    if model is not None and isinstance(model, type) and issubclass(model, BaseModel):
        pydantic = _validate(model, value, request)
        return LiteAgentOutput(raw=pydantic.model_dump_json(), pydantic=pydantic, agent_role=role)
    if isinstance(value, BaseModel):
        return LiteAgentOutput(raw=value.model_dump_json(), pydantic=value, agent_role=role)
    if isinstance(value, dict | list):
        return LiteAgentOutput(raw=json.dumps(value), agent_role=role)
    return LiteAgentOutput(raw=str(value), agent_role=role)


def summary(output: Any) -> tuple[tuple[str, str], ...]:
    if getattr(output, "pydantic", None) is not None:
        model = output.pydantic
        return (("output", type(model).__name__ + render_value(model.model_dump(mode="json"), 80)),)
    return (("output", render_value(getattr(output, "raw", output), 80)),)


def error_fields(exc: BaseException) -> tuple[tuple[str, str], ...]:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (
        (
            "error",
            render_value(f"{type(exc).__name__}: {first}" if first else type(exc).__name__, 100),
        ),
    )
