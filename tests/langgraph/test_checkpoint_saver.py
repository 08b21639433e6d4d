"""The flows checkpointer on real graphs: what it stores in ``flow_store``, how it reads
it back (through the graph's serializer; inert when a record was tampered), crashes."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from pathlib import Path
from typing import Any, TypedDict

import ormsgpack
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from test_store_graphs import GRAPHS, approval_graph, loop_graph, run_to_end, subgraph_graph

from pytest_flows.adapters import CrashPoint, FlowStore, SimulatedCrash, StoreCorruptedError
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver, state_key

LOOP_INPUTS = GRAPHS["loop"][1]


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture
def store() -> FlowStore:
    return FlowStore()


@pytest.fixture
def saver(store: FlowStore) -> FlowsCheckpointSaver:
    return FlowsCheckpointSaver(store=store)


def test_every_put_and_put_writes_is_a_save_and_every_put_a_checkpoint(store, saver):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)

    graph.invoke(LOOP_INPUTS, cfg("t1"), durability="sync")

    methods = [save.method for save in store.history("t1")]
    assert methods[:3] == [
        "put step -1 (input)",
        "put_writes __start__: branch:to:a, notes, rounds",
        "put step 0 (loop)",
    ]
    assert sorted(methods[5:7]) == [
        "put_writes b: join:b+c:join, notes",
        "put_writes c: join:b+c:join, notes",
    ]
    puts = [m for m in methods if m.startswith("put ")]
    records = store.checkpoints()
    assert len(records) == len(puts) == len(list(graph.get_state_history(cfg("t1"))))
    assert [r.parent_id for r in records[1:]] == [r.id for r in records[:-1]]  # one lineage
    assert {r.branch for r in records} == {"t1"}
    assert records[-1].state == graph.get_state(cfg("t1")).values
    assert records[-1].trigger == "step 3 (loop)"


def test_exit_durability_writes_only_the_last_checkpoint(store, saver):
    graph = loop_graph(rounds=2).compile(checkpointer=saver)

    graph.invoke(LOOP_INPUTS, cfg("t1"), durability="exit")

    assert [save.method for save in store.history("t1")] == ["put step 6 (loop)"]


def test_a_fork_and_a_subgraph_get_branches_of_their_own(store, saver):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)
    graph.invoke(LOOP_INPUTS, cfg("t1"))
    first = list(graph.get_state_history(cfg("t1")))[-2]  # step 0

    graph.update_state(first.config, {"notes": ["edited"]}, as_node="a")

    forked = store.checkpoints()[-1]
    assert forked.branch == "t1~2"
    assert forked.parent_id == first.config["configurable"]["checkpoint_id"]
    assert store.lineage(forked)[-2].id == forked.parent_id

    sub = subgraph_graph().compile(checkpointer=saver)
    sub.invoke(GRAPHS["subgraph"][1], cfg("t2"))
    assert {r.branch for r in store.checkpoints() if r.base == "t2"} == {"t2", "t2/sub"}


def test_a_thread_id_with_path_characters_is_stored_under_a_quoted_id(store, saver):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)

    graph.invoke(LOOP_INPUTS, cfg("user/42"))

    assert state_key("user/42") == "thread-user%2F42"
    assert store.history("thread-user%2F42")
    assert graph.get_state(cfg("user/42")).values["rounds"] == 1


def test_an_async_graph_stores_the_same_as_a_sync_one(store, saver):
    build, inputs, _ = GRAPHS["approval"]
    graph = build().compile(checkpointer=saver)
    reference = build().compile(checkpointer=InMemorySaver())

    async def drive() -> tuple[Any, Any]:
        await graph.ainvoke(inputs, cfg("a"))
        result = await graph.ainvoke(Command(resume="no"), cfg("a"))
        return result, (await graph.aget_state(cfg("a"))).values

    mine, values = asyncio.run(drive())
    reference.invoke(inputs, cfg("a"))
    theirs = reference.invoke(Command(resume="no"), cfg("a"))

    assert mine == theirs
    assert values == reference.get_state(cfg("a")).values
    assert any(save.method.startswith("put_writes review") for save in store.history("a"))


def test_pending_writes_of_a_finished_sibling_are_read_back_on_resume(store, saver):
    # a parallel superstep: b finishes, c fails; the resume re-runs only c
    runs: list[str] = []
    failing = {"c": True}

    class S(TypedDict):
        log: list[str]

    def node(name: str) -> Any:
        def run(state: S) -> dict[str, Any]:
            runs.append(name)
            if failing.get(name):
                raise RuntimeError(f"{name} failed")
            return {}

        return run

    builder = StateGraph(S)
    for name in "abc":
        builder.add_node(name, node(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], END)
    graph = builder.compile(checkpointer=saver)
    with pytest.raises(RuntimeError, match="c failed"):
        graph.invoke({"log": []}, cfg("t"), durability="sync")
    failing.clear()
    runs.clear()

    graph.invoke(None, cfg("t"), durability="sync")

    assert runs == ["c"]  # b's writes came back from the store, as from InMemorySaver


# -- the graph's own serializer ----------------------------------------------------------------
@dataclasses.dataclass
class Draft:
    text: str


class Holding(TypedDict):
    draft: Any


def _holding_graph() -> StateGraph[Any]:
    builder = StateGraph(Holding)
    builder.add_node("keep", lambda state: {"draft": state["draft"]})
    builder.add_edge(START, "keep")
    builder.add_edge("keep", END)
    return builder


def test_a_strict_serializer_loses_an_unlisted_type_as_in_production(store):
    # Compared with the bare runtime: InMemorySaver with the same strict serializer.
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)
    theirs = _holding_graph().compile(checkpointer=InMemorySaver(serde=strict))
    ours = _holding_graph().compile(checkpointer=FlowsCheckpointSaver(store=store, serde=strict))

    theirs.invoke({"draft": Draft("x")}, cfg("t"))
    ours.invoke({"draft": Draft("x")}, cfg("t"))

    expected = theirs.get_state(cfg("t")).values["draft"]
    assert not isinstance(expected, Draft)
    assert ours.get_state(cfg("t")).values["draft"] == expected


def test_serving_uses_the_serializer_of_the_graphs_own_checkpointer(store, saver):
    allowing = JsonPlusSerializer(allowed_msgpack_modules=[(Draft.__module__, "Draft")])
    graph = _holding_graph().compile(checkpointer=InMemorySaver(serde=allowing))
    swapped = graph.copy(update={"checkpointer": saver.serving(graph.checkpointer)})

    swapped.invoke({"draft": Draft("x")}, cfg("t"))

    assert swapped.get_state(cfg("t")).values["draft"] == Draft("x")
    assert store.history("t")  # the same storage as the saver it came from
    assert saver.serving(None) is saver


# -- tampered records --------------------------------------------------------------------------
def _blob(record: Any, channel: str) -> Any:
    return json.loads(record.raw)["blobs"][channel]["value"]


def _with_blob(raw: str, channel: str, typed: tuple[str, bytes]) -> str:
    document = json.loads(raw)
    document["blobs"][channel]["value"] = [typed[0], base64.b64encode(typed[1]).decode()]
    return json.dumps(document)


def test_a_tampered_checkpoint_is_what_a_load_returns(store, saver):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)
    graph.invoke(LOOP_INPUTS, cfg("t1"))
    last = store.checkpoints()[-1]
    typed = saver.serde.dumps_typed(["forged"])

    store.tamper(last, lambda raw: _with_blob(raw, "notes", typed))

    assert graph.get_state(cfg("t1")).values["notes"] == ["forged"]


def test_a_discarded_checkpoint_is_gone_and_the_previous_one_is_latest(store, saver):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)
    graph.invoke(LOOP_INPUTS, cfg("t1"))
    *_, before, last = store.checkpoints()

    store.discard(last)

    assert graph.get_state(cfg("t1")).config["configurable"]["checkpoint_id"] == before.id


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda raw: raw[:-5], id="truncated"),
        pytest.param(lambda raw: json.dumps({"checkpoint": 1}), id="other-document"),
        pytest.param(lambda raw: raw.replace('"msgpack"', '"pickle"'), id="pickle-form"),
    ],
)
def test_a_damaged_checkpoint_is_a_store_error_naming_the_record(store, saver, edit):
    graph = loop_graph(rounds=1).compile(checkpointer=saver)
    graph.invoke(LOOP_INPUTS, cfg("t1"))

    store.tamper(store.checkpoints()[-1], edit)

    with pytest.raises(StoreCorruptedError, match=r"checkpoint \d+|stored LangGraph value"):
        graph.get_state(cfg("t1"))


TOUCHED: list[str] = []


def touch(path: str) -> str:
    """What a hostile payload names: a function with a side effect."""
    Path(path).touch()
    TOUCHED.append(path)
    return path


def _hostile(marker: Path) -> tuple[str, bytes]:
    # ext 0 = "call module.name(arg)" in LangGraph's msgpack format
    inner = ormsgpack.packb([__name__, "touch", str(marker)])
    return "msgpack", ormsgpack.packb(ormsgpack.Ext(0, inner))


def test_a_hostile_stored_payload_never_runs(store, saver, tmp_path):
    marker = tmp_path / "pwned"
    hostile = _hostile(marker)
    # The payload is live: LangGraph's default (permissive) serializer runs it.
    JsonPlusSerializer().loads_typed(hostile)
    assert marker.exists()
    marker.unlink()
    graph = loop_graph(rounds=1).compile(checkpointer=saver)
    graph.invoke(LOOP_INPUTS, cfg("t1"))

    store.tamper(store.checkpoints()[-1], lambda raw: _with_blob(raw, "notes", hostile))
    for save in store.history("t1"):
        if save.method.startswith("put_writes"):
            document = json.loads(save.raw)
            document["writes"][0][2] = [hostile[0], base64.b64encode(hostile[1]).decode()]
            store.tamper(save, json.dumps(document))
    state = graph.get_state(cfg("t1"))
    graph.invoke(None, cfg("t1"))  # a resume reads every record of the thread
    list(graph.get_state_history(cfg("t1")))

    assert not marker.exists()
    assert state.values["notes"] == str(marker)  # the blocked constructor's argument


def test_a_tampered_record_keeps_the_types_its_original_held(store, tmp_path):
    allowing = JsonPlusSerializer(allowed_msgpack_modules=[(Draft.__module__, "Draft")])
    saver = FlowsCheckpointSaver(store=store, serde=allowing)
    graph = _holding_graph().compile(checkpointer=saver)
    graph.invoke({"draft": Draft("x")}, cfg("t"))

    store.tamper(
        store.checkpoints()[-1],
        lambda raw: _with_blob(raw, "draft", allowing.dumps_typed(Draft("y"))),
    )

    assert graph.get_state(cfg("t")).values["draft"] == Draft("y")


# -- crashes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_crash_stops_every_later_write_of_the_run(store, saver, durability):
    graph = loop_graph(rounds=2).compile(checkpointer=saver)

    with store.crash_at(CrashPoint(3)), pytest.raises(SimulatedCrash):
        graph.invoke(LOOP_INPUTS, cfg("t1"), durability=durability)

    assert len(store.history("t1")) == 3  # nothing landed after the crash
    assert saver.crashed is not None
    graph.get_state(cfg("t1"))  # a new process reads the thread
    assert saver.crashed is None


def test_a_crash_before_a_put_leaves_no_checkpoint(store, saver):
    graph = approval_graph().compile(checkpointer=saver)

    with store.crash_at(CrashPoint(1, "before")), pytest.raises(SimulatedCrash):
        graph.invoke(GRAPHS["approval"][1], cfg("t1"))

    assert store.history("t1") == []
    assert store.checkpoints() == []
    assert saver.get_tuple(cfg("t1")) is None


def test_the_saver_ends_as_in_memory_saver_for_an_interrupted_thread(store, saver):
    build, inputs, _ = GRAPHS["approval"]
    graph = build().compile(checkpointer=saver)
    reference = build().compile(checkpointer=InMemorySaver())

    run_to_end(graph, inputs, cfg("t"), [])
    run_to_end(reference, inputs, cfg("t"), [])

    mine, theirs = graph.get_state(cfg("t")), reference.get_state(cfg("t"))
    assert [i.value for i in mine.interrupts] == [i.value for i in theirs.interrupts]
    assert mine.next == theirs.next == ("review",)
