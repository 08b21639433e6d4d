"""Checks on what a test passes to ``flows.run(MyFlow, ...)`` before crewai sees it.

crewai accepts some mistakes silently (an input that is not a state field is
dropped, so the test checks nothing) and reports others far from their cause
(a non-``str`` input key fails inside ``FlowStartedEvent``, a string
``from_checkpoint`` as an ``AttributeError``). Each becomes a
:class:`~pytest_flows._internal.errors.FlowsUsageError` naming the argument and the fix.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Any

from crewai.flow.flow import Flow
from crewai.state.checkpoint_config import CheckpointConfig
from pydantic import BaseModel

from pytest_flows.adapters import FlowsUsageError

__all__ = ["KICKOFF_PARAMS", "check_kickoff_args", "check_state_inputs", "declared_model"]

KICKOFF_PARAMS = tuple(inspect.signature(Flow.kickoff_async).parameters)[1:]

#: ``flows.run`` keywords of the harness itself (not passed to kickoff).
EXTRA_INPUTS = "extra_inputs"


def _name(target: Any) -> str:
    return target.__name__ if isinstance(target, type) else type(target).__name__


def check_kickoff_args(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Refuse arguments ``Flow.kickoff`` would misread; return ``extra_inputs``."""
    name = _name(target)
    if args:
        raise FlowsUsageError(
            f"flows.run({name}, ...) takes kickoff's keyword arguments "
            f"({', '.join(KICKOFF_PARAMS)}), not positional ones; "
            f"write flows.run({name}, inputs={{...}})."
        )
    unknown = sorted(set(kwargs) - {*KICKOFF_PARAMS, EXTRA_INPUTS})
    if unknown:
        raise FlowsUsageError(
            f"flows.run({name}, ...) got unknown keyword argument(s) "
            f"{', '.join(unknown)}; Flow.kickoff accepts {', '.join(KICKOFF_PARAMS)} "
            "(plus raise_on_error=False to get a failed run back instead of the error, and "
            "extra_inputs=True to pass inputs that are not state fields)."
        )
    extra = kwargs.pop(EXTRA_INPUTS, False)
    if not isinstance(extra, bool):
        raise FlowsUsageError(
            f"flows.run({name}, extra_inputs={extra!r}): extra_inputs is True (pass inputs "
            "that are not fields of the state model) or False (the default: refuse them)."
        )
    inputs = kwargs.get("inputs")
    if inputs is not None:
        if not isinstance(inputs, dict):
            raise FlowsUsageError(
                f"flows.run({name}, inputs=...) needs a dict of state fields, "
                f"got {type(inputs).__name__}: {inputs!r}."
            )
        _check_keys(name, "inputs", inputs, 'inputs={"topic": "..."}')
    files = kwargs.get("input_files")
    if files is not None:
        if not isinstance(files, Mapping):
            raise FlowsUsageError(
                f"flows.run({name}, input_files={files!r}): input_files is a dict of named "
                'file inputs, e.g. input_files={"report": File("report.pdf")}, or None.'
            )
        _check_keys(name, "input_files", files, 'input_files={"report": File("report.pdf")}')
    checkpoint = kwargs.get("from_checkpoint")
    if checkpoint is not None and not isinstance(checkpoint, CheckpointConfig):
        hint = (
            f"from_checkpoint=CheckpointConfig(restore_from={checkpoint!r})"
            if isinstance(checkpoint, str)
            else "from_checkpoint=CheckpointConfig(restore_from=flow_store.checkpoints()[0]"
            ".location)"
        )
        raise FlowsUsageError(
            f"flows.run({name}, from_checkpoint={checkpoint!r}): from_checkpoint takes a "
            f"crewai CheckpointConfig, got {type(checkpoint).__name__}; write {hint}."
        )
    state_id = kwargs.get("restore_from_state_id")
    if state_id is not None and not isinstance(state_id, str):
        raise FlowsUsageError(
            f"flows.run({name}, restore_from_state_id={state_id!r}): it is the id (str) of a "
            "persisted state to fork from, e.g. restore_from_state_id=run.state.id."
        )
    return extra


def _check_keys(name: str, argument: str, values: Mapping[Any, Any], example: str) -> None:
    bad = [key for key in values if not isinstance(key, str)]
    if bad:
        shown = ", ".join(f"{key!r} ({type(key).__name__})" for key in bad)
        raise FlowsUsageError(
            f"flows.run({name}, {argument}=...): every key must be a str naming "
            f"{'a state field' if argument == 'inputs' else 'a file input'}; got {shown}. "
            f"Write {example}."
        )


def _unwrapped(state: Any) -> Any:
    unwrap = getattr(state, "_unwrap", None)
    return unwrap() if callable(unwrap) else state


def declared_model(model: type[Any]) -> type[Any]:
    """The user's state model (crewai may wrap it in a subclass that adds the id)."""
    return next(
        (c for c in model.__mro__ if not c.__module__.startswith(("crewai.", "pydantic."))),
        model,
    )


def _accepted_names(model: type[BaseModel]) -> set[str]:
    names = {"id"}  # crewai reads inputs["id"] itself (resume under that id)
    for field, info in model.model_fields.items():
        names.add(field)
        for alias in (info.alias, info.validation_alias):
            if isinstance(alias, str):
                names.add(alias)
    return names


def check_state_inputs(target: Any, flow: Any, inputs: Mapping[str, Any] | None) -> None:
    """Refuse inputs a pydantic state would drop: a misspelt field tests nothing."""
    if not inputs:
        return
    state = _unwrapped(getattr(flow, "_state", None))
    if not isinstance(state, BaseModel):
        return  # a dict state keeps every input
    model = type(state)
    if model.model_config.get("extra") in ("allow", "forbid"):
        return  # kept, or refused by pydantic itself (crewai's "Invalid inputs")
    accepted = _accepted_names(model)
    unknown = [key for key in inputs if key not in accepted]
    if not unknown:
        return
    fields = sorted(accepted - {"id"})
    guesses = [
        f"{key!r} -> {close[0]!r}"
        for key in unknown
        if (close := difflib.get_close_matches(key, fields, n=1))
    ]
    noun = "is not a field" if len(unknown) == 1 else "are not fields"
    raise FlowsUsageError(
        f"flows.run({_name(target)}, inputs=...): {', '.join(map(repr, unknown))} {noun} of "
        f"the state model {declared_model(model).__name__} (fields: {', '.join(fields)}); "
        "crewai would drop it silently and the test would check nothing. "
        + (f"Did you mean {', '.join(guesses)}?" if guesses else "Fix the name.")
        + " If the flow reads inputs that are not state fields on purpose, pass "
        "flows.run(..., extra_inputs=True)."
    )
