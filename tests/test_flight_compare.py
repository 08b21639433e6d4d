"""The replay's comparison of saves, checkpoints and streamed replies: the n-th of each
on both sides, and what only one side has (no framework needed: record entries)."""

from __future__ import annotations

from typing import Any

from pytest_flows._internal.flight import compare


def _where(divergences: list[Any]) -> list[tuple[str, str, str]]:
    return [(d.kind, d.where, d.message.split(":")[0]) for d in divergences]


def _saved(method: str, n: int, seq: int) -> dict[str, Any]:
    return {"kind": "state.saved", "method": method, "state": {"n": n}, "seq": seq}


def test_persisted_states_pair_by_method_and_count() -> None:
    recorded = [_saved("a", 1, 1), _saved("a", 2, 2), _saved("b", 1, 3), _saved("c", 1, 4)]
    replayed = [_saved("b", 1, 1), _saved("a", 1, 2), _saved("a", 3, 3), _saved("d", 1, 4)]
    found = compare._state_divergences(recorded, replayed)
    assert _where(found) == [
        (
            "state",
            "state saved after method a (save 2)",
            "the persisted state differs from the record",
        ),
        (
            "state",
            "state saved after method c",
            "the record has this save; today's code did not persist it",
        ),
        (
            "state",
            "state saved after method d",
            "today's code persisted a state the record does not have",
        ),
    ]
    assert [d.seq for d in found] == [2, 4, 10**9]
    assert '- "n": 2\n+ "n": 3' in found[0].diff


def _checkpoint(iteration: int, log: list[str], seq: int) -> dict[str, Any]:
    return {"kind": "checkpoint.saved", "iteration": iteration, "state": {"log": log}, "seq": seq}


def test_checkpoints_pair_in_order_and_say_what_only_one_side_saved() -> None:
    recorded = [_checkpoint(1, ["a"], 1), _checkpoint(2, ["a", "b"], 2)]
    assert _where(compare._checkpoint_divergences(recorded, recorded[:1])) == [
        (
            "state",
            "checkpoint 2 (superstep 2)",
            "the record has this checkpoint; today's code did not save it",
        )
    ]
    changed = [_checkpoint(1, ["a"], 1), _checkpoint(2, ["a", "c"], 2), _checkpoint(3, [], 3)]
    found = compare._checkpoint_divergences(recorded, changed)
    assert _where(found) == [
        ("state", "checkpoint 2 (superstep 2)", "the checkpoint differs from the record"),
        (
            "state",
            "checkpoint 3 (superstep 3)",
            "today's code saved a checkpoint the record does not have",
        ),
    ]
    assert '-   "b"\n+   "c"' in found[0].diff


def _streamed(method: str, call: str, chunks: list[str], seq: int) -> list[dict[str, Any]]:
    return [
        *({"kind": "llm.chunk", "call_id": call, "chunk": c} for c in chunks),
        {"kind": "llm.response", "call_id": call, "method": method, "seq": seq},
    ]


def test_streamed_replies_pair_by_method_and_count() -> None:
    recorded = [*_streamed("draft", "1", ["a", "b"], 5), *_streamed("draft", "2", ["c"], 9)]
    replayed = [*_streamed("draft", "1", ["a", "b"], 5), *_streamed("draft", "2", ["c", "d"], 9)]
    replayed += _streamed("polish", "3", ["e"], 12)
    found = compare._stream_divergences(recorded, replayed)
    assert [(d.where, d.seq) for d in found] == [
        ("streamed reply 2 of method draft", 9),
        ("streamed reply 1 of method polish", 10**9),
    ]
    assert found[0].message == 'streamed 2 chunk(s) ["c", "d"]; recorded 1: ["c"]'
    assert found[1].message.endswith("recorded 0: the record has this reply unstreamed")


def _request(method: str, stream: Any, seq: int) -> dict[str, Any]:
    entry = {"kind": "llm.request", "method": method, "messages": [], "seq": seq}
    if stream is not ...:
        entry["stream"] = stream
    return entry


def test_a_request_that_no_longer_asks_for_a_streamed_reply_is_reported() -> None:
    recorded = [_request("draft", True, 1), _request("draft", False, 2), _request("x", True, 3)]
    replayed = [_request("draft", False, 1), _request("draft", False, 2), _request("x", ..., 3)]
    found = compare._stream_flag_divergences(recorded, replayed)
    assert _where(found) == [
        (
            "stream",
            "LLM request 1 of method draft",
            "today's code asks for the reply whole; recorded",
        )
    ]
    assert found[0].seq == 1
    again = compare._stream_flag_divergences(replayed[:2], [_request("draft", None, 1)])
    assert again == []  # None and False both ask for a whole reply
    now_streams = compare._stream_flag_divergences(replayed[:1], [_request("draft", True, 1)])
    assert "asks for the reply streamed; recorded: whole" in now_streams[0].message
