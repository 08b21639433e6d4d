"""flow_store encodes like production, so production's serialization bugs show in tests.

Each case runs the same flow against the real ``SQLiteFlowPersistence`` (in
``tmp_path``) and against ``flow_store``: both must fail, or both must change
the state the same way. A store that only deep-copies passes them all, which
is the bug class these tests guard.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import traceback
from typing import Any

import pytest
from crewai.flow.flow import Flow, start
from crewai.flow.persistence import SQLiteFlowPersistence, persist
from crewai.flow.persistence.base import FlowPersistence
from crewai.state.checkpoint_config import CheckpointConfig
from crewai_versions import crewai_114_differs, needs_json_default
from store_flows import (
    CounterFlow,
    DictFlow,
    Money,
    StepsFlow,
    WalletFlow,
    WalletPersistFlow,
    WalletState,
)

from pytest_flows._internal.state.store_records import (
    CheckpointNotFoundError,
    InvalidStateIdError,
    NotACheckpointError,
    StateCodecError,
    StoreCorruptedError,
)
from pytest_flows.crewai import _store_patches as store_patches


class DeepCopyPersistence(FlowPersistence):
    """The naive in-memory store: keeps deep copies, never serializes."""

    persistence_type: str = "DeepCopyPersistence"
    rows: dict[str, list[Any]] = {}

    def init_db(self) -> None:
        return None

    def save_state(self, flow_uuid: str, method_name: str, state_data: Any) -> None:
        self.rows.setdefault(flow_uuid, []).append(copy.deepcopy(state_data))

    def load_state(self, flow_uuid: str) -> dict[str, Any] | None:
        saved = self.rows.get(flow_uuid)
        return copy.deepcopy(saved[-1]) if saved else None


def _error_chain(error: BaseException | None) -> list[BaseException]:
    chain = []
    while error is not None:
        chain.append(error)
        error = error.__cause__
    return chain


# -- a state the real backend cannot encode fails the same way, with the field named ------
@pytest.mark.parametrize(
    ("kind", "field", "type_name"),
    [
        ("tuple_keys", "state.pairs[(1, 2)]", "tuple"),
        ("cycle", "state.loop[0]", "list"),
    ],
)
def test_unencodable_state_fails_like_sqlite_and_names_the_field(
    flows, flow_store, tmp_path, kind, field, type_name
):
    real = SQLiteFlowPersistence(str(tmp_path / "real.db"))
    # (flow_store routes SQLiteFlowPersistence into itself; call the real one directly)
    with pytest.raises((TypeError, ValueError)):
        _real_sqlite_save(real, {"id": "x", **_state_for(kind)})

    run = flows.run(DictFlow, inputs={"kind": kind}, raise_on_error=False)

    assert run.failed
    codec_error = next(e for e in _error_chain(run.error) if isinstance(e, StateCodecError))
    assert codec_error.field == field
    assert codec_error.type_name == type_name
    assert f"field {field!r}" in str(run.error)  # crewai wraps it; the message survives
    assert "SQLiteFlowPersistence" in str(codec_error)
    assert flow_store.ids == []  # nothing half-saved


@crewai_114_differs(
    "a class's @persist() saves through the persistence it got at class definition "
    "(crewai/flow/persistence/decorators.py:190), not Flow(persistence=...)"
)
def test_a_deep_copy_store_would_hide_that_bug(flows):
    naive = DeepCopyPersistence()
    run = flows.run(DictFlow(persistence=naive), inputs={"kind": "tuple_keys"})
    assert not run.failed  # ...and production would crash on this very state


def _state_for(kind: str) -> dict[str, Any]:
    if kind == "tuple_keys":
        return {"pairs": {(1, 2): "a"}}
    loop: list[Any] = []
    loop.append(loop)
    return {"loop": loop}


def _real_sqlite_save(real: SQLiteFlowPersistence, state: dict[str, Any]) -> None:
    import json

    to_state_dict, json_default = store_patches.sqlite_codec()
    json.dumps(to_state_dict(state), default=json_default)  # what save_state does first


# -- a state the real backend changes silently comes back changed, and is reported ----------
@needs_json_default
def test_lossy_dict_state_round_trips_like_sqlite_and_assert_round_trip_names_it(flows, flow_store):
    run = flows.run(DictFlow, inputs={"kind": "datetime"})
    save = flow_store.latest(run.state["id"])
    assert save is not None
    assert [c.path for c in save.lossy] == ["when"]
    assert "lossy=when" in run.trace.render()

    resumed = flows.run(DictFlow, inputs={"id": run.state["id"], "kind": "plain"})
    assert resumed.state["when"] == "2025-01-02T03:04:05"  # a str now, as with SQLite

    with pytest.raises(AssertionError) as failure:
        flow_store.assert_round_trip(run)
    assert "when: datetime.datetime came back as str" in str(failure.value)


@needs_json_default
def test_assert_round_trip_on_a_state_value(flow_store, flows):
    flow_store.assert_round_trip({"id": "a", "n": 1, "tags": ["x"]})
    with pytest.raises(AssertionError, match=r"tags: set came back as list"):
        flow_store.assert_round_trip({"id": "a", "tags": {"x"}})
    with pytest.raises(AssertionError, match=r"\(key\): int came back as str"):
        flow_store.assert_round_trip({"id": "a", "by_id": {1: "x"}})
    with pytest.raises(StateCodecError, match=r"field 'state.pairs\[\(1, 2\)\]'"):
        flow_store.assert_round_trip({"id": "a", "pairs": {(1, 2): "x"}})


@needs_json_default
def test_an_object_in_a_pydantic_state_is_stored_as_its_str_and_cannot_resume(flows, flow_store):
    run = flows.run(WalletPersistFlow)
    save = flow_store.latest(run.state.id)
    assert save is not None and save.snapshot["balance"] == "Money(500)"
    assert [c.describe() for c in save.lossy] == [
        "balance: store_flows.Money came back as str (Money(500) -> 'Money(500)')"
    ]


@needs_json_default
def test_strict_mode_refuses_a_lossy_save(flows, flow_store):
    flow_store.strict = True
    run = flows.run(DictFlow, inputs={"kind": "datetime"}, raise_on_error=False)
    assert run.failed
    assert "flow_store (strict)" in str(run.error)
    assert "when: datetime.datetime came back as str" in str(run.error)


def test_a_checkpoint_crewai_cannot_write_is_reported_with_the_field(flows, flow_store):
    run = flows.run(
        WalletFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"]))
    )

    assert run.output == 500  # crewai only logs the failure and runs on
    assert flow_store.checkpoints() == []
    with pytest.raises(AssertionError, match="1 checkpoint"):
        flow_store.verify()  # what the fixture does at teardown
    (failure,) = flow_store.checkpoint_failures()  # reading them acknowledges them
    assert "field 'state.balance' holds a value of type store_flows.Money" in failure
    assert "checkpoint failed method_execution_finished" in run.trace.render()
    flow_store.verify()


# -- bad input --------------------------------------------------------------------------
def test_truncated_state_is_a_clear_error_and_nothing_else_is_lost(flows, flow_store):
    victim = flows.run(DictFlow, inputs={"kind": "plain"})
    flows.run(DictFlow, inputs={"id": victim.state["id"], "kind": "plain"})
    bystander = flows.run(DictFlow, inputs={"kind": "plain"})
    state_id = victim.state["id"]

    flow_store.tamper(state_id, lambda raw: raw[: len(raw) // 2])

    resumed = flows.run(DictFlow, inputs={"id": state_id}, raise_on_error=False)
    assert isinstance(resumed.error, StoreCorruptedError)
    message = str(resumed.error)
    assert f"save 2 of state id {state_id!r}" in message
    assert "not valid JSON" in message
    # The earlier save and every other id are intact.
    assert flow_store.history(state_id)[0].snapshot["count"] == 1
    assert flow_store.latest(bystander.state["id"]).snapshot["count"] == 1  # type: ignore[union-attr]
    # Dropping the corrupted save resumes from the one before it.
    flow_store.discard(flow_store.history(state_id)[-1])
    again = flows.run(DictFlow, inputs={"id": state_id})
    assert again.state["count"] == 2


def test_tampered_state_without_an_id_is_refused(flows, flow_store):
    run = flows.run(DictFlow)
    flow_store.tamper(run.state["id"], '{"count": 5}')
    resumed = flows.run(DictFlow, inputs={"id": run.state["id"]}, raise_on_error=False)
    assert isinstance(resumed.error, StoreCorruptedError)
    assert "no 'id' field" in str(resumed.error)


def test_truncated_checkpoint_is_a_clear_error_and_the_others_still_restore(flows, flow_store):
    flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])))
    first, second, _ = flow_store.checkpoints()
    flow_store.tamper(second, lambda raw: raw[:100])

    broken = flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(restore_from=second.location),
        raise_on_error=False,
    )
    assert isinstance(broken.error, StoreCorruptedError)
    assert f"checkpoint 2 ({second.id}" in str(broken.error)
    assert "checkpoint restore_failed" in flows.trace.render()

    fine = flows.run(StepsFlow, from_checkpoint=CheckpointConfig(restore_from=first.location))
    assert fine.output == "total=111"


def test_unknown_checkpoint_location_is_a_clear_error(flows, flow_store):
    run = flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(restore_from="nowhere/main/x.json"),
        raise_on_error=False,
    )
    assert isinstance(run.error, CheckpointNotFoundError)
    assert "flow_store.checkpoints()" in str(run.error)
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint 7"):
        flow_store.checkpoint(7)


@pytest.mark.parametrize("bad", ["../etc/passwd", "a/b", "a\\b", "..", ""])
def test_ids_with_path_characters_are_refused(flows, flow_store, bad):
    resumed = flows.run(DictFlow, inputs={"id": bad}, raise_on_error=False)
    assert isinstance(resumed.error, InvalidStateIdError)
    assert repr(bad) in str(resumed.error)
    assert "UUID" in str(resumed.error)
    forked = flows.run(DictFlow, restore_from_state_id=bad or "/", raise_on_error=False)
    assert isinstance(forked.error, InvalidStateIdError)
    assert flow_store.ids == []


@needs_json_default
def test_values_the_codec_does_encode_are_stored_as_sqlite_stores_them(flows, flow_store):
    # sets, tuples and dates are converted by SQLite's json default, not refused
    flow_store.persistence.save_state(
        "manual",
        "m",
        {"id": "manual", "day": dt.date(2025, 1, 2), "pair": (1, 2), "tags": {"t"}},
    )
    assert flow_store.latest("manual").snapshot == {  # type: ignore[union-attr]
        "id": "manual",
        "day": "2025-01-02",
        "pair": [1, 2],
        "tags": ["t"],
    }


def test_round_trip_of_a_run_that_saved_nothing_says_why(flows, flow_store):
    run = flows.run(StepsFlow)
    with pytest.raises(AssertionError, match="nothing was saved under state id"):
        flow_store.assert_round_trip(run)


# -- tampered records and foreign files name the record and quote nothing from it -------------
SECRET = "sk-planted-SECRET-0451"


def _shown(error: BaseException) -> str:
    """Everything pytest would print for ``error`` (message, notes, chained errors)."""
    return "".join(traceback.format_exception(error))


def test_a_save_tampered_to_another_id_is_refused_not_resumed_under_it(flows, flow_store):
    first = flows.run(CounterFlow)
    state_id = first.state.id
    flow_store.tamper(state_id, lambda raw: raw.replace(state_id, "someone-else"))

    resumed = flows.run(CounterFlow, inputs={"id": state_id}, raise_on_error=False)

    assert isinstance(resumed.error, StoreCorruptedError)
    message = str(resumed.error)
    assert f"the save 1 of state id {state_id!r} (after 'step')" in message
    assert f"its 'id' field is not {state_id!r}, the id it is stored under" in message
    assert "someone-else" not in _shown(resumed.error)
    assert flow_store.ids == [state_id]  # nothing saved under the tampered id


def test_a_tampered_field_type_names_the_record_and_field_not_the_value(flows, flow_store):
    first = flows.run(CounterFlow)
    state_id = first.state.id
    flow_store.tamper(state_id, lambda raw: raw.replace('"counter": 1', f'"counter": "{SECRET}"'))

    resumed = flows.run(CounterFlow, inputs={"id": state_id}, raise_on_error=False)

    assert isinstance(resumed.error, StoreCorruptedError)
    message = str(resumed.error)
    assert f"the save 1 of state id {state_id!r} (after 'step') does not fit the state " in message
    assert "model CounterState: counter (int_parsing)" in message
    assert "flow_store.tamper?" in message
    assert SECRET not in _shown(resumed.error)


@needs_json_default
def test_a_lossy_save_that_cannot_resume_says_so(flows, flow_store):
    class Strict(WalletState):
        balance: Money | None = None

    @persist()
    class StrictWallet(Flow[Strict]):
        @start()
        def fund(self) -> int:
            self.state.balance = Money(500)
            return 500

    first = flows.run(StrictWallet)
    resumed = flows.run(StrictWallet, inputs={"id": first.state.id}, raise_on_error=False)
    assert isinstance(resumed.error, StoreCorruptedError)
    assert "balance (is_instance_of)" in str(resumed.error)
    assert "The save itself was lossy (balance did not survive the codec)" in str(resumed.error)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (f"password={SECRET}", "document (json_invalid)"),
        (json.dumps({"api_key": SECRET}), "document (list_type)"),
        (json.dumps([{"note": SECRET}]), "document[0] (union_tag_not_found)"),
    ],
)
@pytest.mark.parametrize("with_store", [False, True])
def test_restoring_from_a_file_that_is_no_checkpoint_quotes_nothing_from_it(
    flows, request, tmp_path, content, problem, with_store
):
    if with_store:
        request.getfixturevalue("flow_store")
    notes = tmp_path / "notes.json"
    notes.write_text(content)

    run = flows.run(
        StepsFlow, from_checkpoint=CheckpointConfig(restore_from=str(notes)), raise_on_error=False
    )

    assert isinstance(run.error, NotACheckpointError)
    assert isinstance(run.error, StoreCorruptedError)
    message = str(run.error)
    assert message.startswith(f"{str(notes)!r} is not a crewai checkpoint: the document fails")
    assert problem in message
    assert SECRET not in _shown(run.error)


def test_a_checkpoint_tampered_into_another_document_names_the_record(flows, flow_store):
    flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])))
    second = flow_store.checkpoints()[1]
    flow_store.tamper(second, json.dumps({"entities": [{"note": SECRET}]}))

    run = flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(restore_from=second.location),
        raise_on_error=False,
    )

    assert isinstance(run.error, NotACheckpointError)
    message = str(run.error)
    assert f"checkpoint 2 ({second.id}, at {second.location}) no longer reads as" in message
    assert SECRET not in _shown(run.error)


def test_a_checkpoint_whose_state_was_tampered_names_the_field_not_the_value(flows, flow_store):
    flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])))
    second = flow_store.checkpoints()[1]
    flow_store.tamper(second, lambda raw: raw.replace('"total": 11', f'"total": "{SECRET}"'))

    run = flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(restore_from=second.location),
        raise_on_error=False,
    )

    assert isinstance(run.error, NotACheckpointError)
    message = str(run.error)
    assert f"checkpoint 2 ({second.id}, at {second.location})" in message
    assert "the flow state it holds does not fit the state model at total (int_parsing)" in message
    assert SECRET not in _shown(run.error)
