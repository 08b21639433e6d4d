"""State migrations: does today's flow resume states an older state model saved?

Give the old model class (hypothesis generates states of its shape, encoded
as the production codec stored them) or stored states (a golden file's saves,
your own fixtures); each is put in ``flow_store`` under a fresh id and resumed
with ``inputs={"id": ...}``. A state that does not restore (a new required
field, a changed type), or a resumed run that fails, fails the check with the
state and the reason; ``check(old_state, run)`` adds your own assertions
(say, that a renamed field's value was carried over).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.golden import files

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.state.store import FlowStore

__all__ = ["assert_resumes_old_states", "old_states", "stored_states"]

Check = Callable[[dict[str, Any], Any], None]


def old_states(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """States of ``model``'s shape, as ``SQLiteFlowPersistence`` stored them (JSON)."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise FlowsUsageError(
            f"old_states({model!r}): pass the old state model, a pydantic BaseModel class."
        )
    fields = {
        name: st.from_type(info.annotation)
        for name, info in model.model_fields.items()
        if name != "id" and info.annotation is not None
    }

    def valid(values: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return model.model_validate(values).model_dump(mode="json")
        except (ValidationError, ValueError, TypeError):
            return None

    return st.fixed_dictionaries(fields).map(valid).filter(lambda v: v is not None)  # type: ignore[return-value]


def stored_states(golden: str | Path) -> list[dict[str, Any]]:
    """The states a golden file holds (every save of every recorded run), decoded."""
    document = files.load(Path(golden))
    states = []
    for run in document.get("runs", []):
        for save in run.get("saves", []):
            states.append(json.loads(save["raw"]))
    if not states:
        raise FlowsUsageError(f"golden file {golden} holds no saved states (no @persist saves).")
    return states


def assert_resumes_old_states(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    old: type[BaseModel] | Iterable[dict[str, Any]] | str | Path,
    *,
    check: Check | None = None,
    max_examples: int = 20,
) -> None:
    """Every old state (see module doc) restores into ``flow`` and resumes without error."""
    if isinstance(old, bool | int | float | bytes | dict) or not (
        isinstance(old, type | str | Path) or hasattr(old, "__iter__")
    ):
        raise FlowsUsageError(
            f"assert_resumes_old_states(..., old): old is the old state model (a pydantic "
            f"class), a golden file's path, or a list of stored state dicts; got {old!r}."
        )
    backend = flow_store.backend_for(flow)
    ops = backend.operations(flows)
    counter = iter(range(1, 1_000_000))

    def resume(state: dict[str, Any]) -> None:
        state_id = f"old-state-{next(counter)}"
        stored = {**state, "id": state_id}
        flow_store.append_save(
            state_id, "<old model>", json.dumps(stored), framework=backend.framework
        )
        outcome = ops.resume(flow, None, state_id)
        restored = any(e.kind == "state.restored" for e in outcome.trace)
        if outcome.error is not None or not restored:
            why = (
                f"{type(outcome.error).__name__}: {outcome.error}"
                if outcome.error is not None
                else "it was not restored (the flow ran fresh)"
            )
            raise AssertionError(
                f"today's flow does not resume a state the old model saved:\n"
                f"  stored: {json.dumps(stored, sort_keys=True)}\n  {why}\n"
                "Give new fields defaults, or migrate old shapes in the state model "
                "(model_validator(mode='before')); see docs/golden.md#state-migrations."
            )
        if check is not None:
            check(stored, outcome)

    if isinstance(old, type):
        from pytest_flows._internal.state.property_timeouts import timeouts_escape
        from pytest_flows._internal.state.strategies import default_settings, private_storage

        @given(state=old_states(old))
        @default_settings(max_examples)
        @timeouts_escape
        def resumes(state: dict[str, Any]) -> None:
            resume(state)

        with private_storage():
            resumes()
        return
    states = stored_states(old) if isinstance(old, str | Path) else list(old)
    for state in states:
        resume(dict(state))
