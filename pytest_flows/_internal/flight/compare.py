"""Comparing a record with the replay's record: methods and their order, outputs and
routes, ``@persist`` saves, the outcome; and a record's flow-level events as a trace."""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pytest_flows._internal.flight.answers import render_messages
from pytest_flows._internal.flight.capture import RunRecording
from pytest_flows._internal.flight.format import Record, jsonable
from pytest_flows._internal.flight.result import Divergence
from pytest_flows._internal.identity import Normalizer
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.trace import Trace, TraceEvent, render_value

__all__ = ["compare", "guide_of", "order_of", "trace_of"]

T = TypeVar("T")

ORDER_KINDS = ("method.started", "method.finished", "method.failed")


def order_of(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(str(e["kind"]), str(e.get("method"))) for e in entries if e.get("kind") in ORDER_KINDS]


#: What the interleaving search steers by besides the methods: when each LLM call
#: returned, each tool finished, each state was saved (in a race, which listener's
#: call came back first decides who writes first).
_GUIDE_KINDS = (*ORDER_KINDS, "llm.response", "llm.failed", "tool.finished", "state.saved")


def guide_of(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The order of the events the interleaving search steers by (a crew's agents'
    LLM calls included: a replay runs the crew, its agents answered from the record)."""
    return [
        (str(e["kind"]), str(e.get("method"))) for e in entries if e.get("kind") in _GUIDE_KINDS
    ]


def streams_of(entries: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each streamed LLM reply's chunks, in order, by call id."""
    chunks: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        if entry.get("kind") == "llm.chunk":
            chunks[str(entry.get("call_id"))].append(str(entry.get("chunk", "")))
    return chunks


def trace_of(entries: list[dict[str, Any]], outcome: dict[str, Any]) -> Trace:
    """A record's flow-level events as a normalized trace (ids and clocks normalized);
    a streamed LLM reply's chunks are one event (the stream its consumer got)."""
    normalizer = Normalizer()
    events = []
    chunks = streams_of(entries)
    for entry in entries:
        kind = str(entry.get("kind"))
        if kind == "llm.response" and chunks.get(str(entry.get("call_id"))):
            streamed = chunks[str(entry.get("call_id"))]
            events.append(
                TraceEvent(
                    kind="llm.stream",
                    name=str(entry.get("method") or "-"),
                    fields=(("chunks", normalizer.text(json.dumps(streamed))),),
                )
            )
        if kind == "flow.started":
            events.append(TraceEvent(kind=kind, name=str(entry.get("flow"))))
        elif kind in ORDER_KINDS:
            fields: tuple[tuple[str, str], ...] = ()
            if kind == "method.finished":
                fields = (("output", normalizer.text(str(entry.get("rendered")))),)
            elif kind == "method.failed":
                fields = (("error", _error_text(entry.get("error"))),)
            events.append(TraceEvent(kind=kind, name=str(entry.get("method")), fields=fields))
        elif kind == "llm.request":
            prompt = normalizer.text(render_messages(entry.get("messages")))
            events.append(
                TraceEvent(
                    kind="llm.request",
                    name=str(entry.get("method") or "-"),
                    fields=(("prompt", prompt),),
                )
            )
    end = outcome.get("outcome", "unknown")
    if end == "failed":
        events.append(
            TraceEvent(
                kind="run.failed", name="", fields=(("error", _error_text(outcome.get("error"))),)
            )
        )
    else:
        rendered = normalizer.text(str(outcome.get("rendered", "")))
        events.append(TraceEvent(kind=f"run.{end}", name="", fields=(("output", rendered),)))
    return Trace.of(events)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('type')}: {error.get('message')}"
    return str(error)


def compare(
    record: Record, replayed: RunRecording, run: FlowRun
) -> tuple[list[Divergence], Trace, Trace]:
    divergences: list[Divergence] = []
    recorded_order, replayed_order = order_of(record.entries), order_of(replayed.entries)
    if recorded_order != replayed_order:
        divergences.append(_order_divergence(record, recorded_order, replayed_order))
    # The same method's n-th finish with another output (a router choosing another route).
    mine = [e for e in record.entries if e.get("kind") == "method.finished"]
    theirs = [e for e in replayed.entries if e.get("kind") == "method.finished"]
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in theirs:
        by_method[str(entry.get("method"))].append(entry)
    seen: dict[str, int] = defaultdict(int)
    normalizer = Normalizer()
    for entry in mine:
        method = str(entry.get("method"))
        index = seen[method]
        seen[method] += 1
        if index < len(by_method[method]):
            was = normalizer.text(str(entry.get("rendered")))
            now = normalizer.text(str(by_method[method][index].get("rendered")))
            if was != now:
                divergences.append(
                    Divergence(
                        "output",
                        f"method {method}",
                        f"returned {now} (recorded: {was}); a router's return is its route",
                        seq=int(entry.get("seq", 0)),
                    )
                )
    divergences += _crew_input_divergences(record.entries, replayed.entries)
    divergences += _stream_divergences(record.entries, replayed.entries)
    divergences += _stream_flag_divergences(record.entries, replayed.entries)
    divergences += _state_divergences(record.entries, replayed.entries)
    divergences += _checkpoint_divergences(record.entries, replayed.entries)
    end = _replayed_end(run)
    if record.outcome != end["outcome"] or (
        record.outcome == "failed"
        and _error_text(record.end.get("error")) != _error_text(end.get("error"))
    ):
        was = record.outcome + (
            f" ({_error_text(record.end.get('error'))})" if record.outcome == "failed" else ""
        )
        now = end["outcome"] + (
            f" ({_error_text(end.get('error'))})" if end["outcome"] == "failed" else ""
        )
        divergences.append(
            Divergence("outcome", "the run", f"ended {now}; recorded: {was}", seq=10**9 + 1)
        )
    elif end["outcome"] == "finished":
        normalizer = Normalizer()
        was = normalizer.text(str(record.end.get("rendered")))
        now = normalizer.text(str(end.get("rendered")))
        if was != now:
            divergences.append(
                Divergence("outcome", "the run", f"returned {now}; recorded: {was}", seq=10**9 + 1)
            )
    return divergences, trace_of(record.entries, record.end), trace_of(replayed.entries, end)


def _paired(
    recorded: list[T], now: list[T], key: Callable[[T], str]
) -> Iterator[tuple[str, int, T | None, T | None]]:
    """The n-th item of each key on both sides, as (key, n, recorded, now), in the
    record's order (now None: today's code has fewer); then today's items beyond the
    record's (recorded None)."""
    todays: dict[str, list[T]] = defaultdict(list)
    for item in now:
        todays[key(item)].append(item)
    seen: dict[str, int] = defaultdict(int)
    for item in recorded:
        name = key(item)
        index = seen[name]
        seen[name] += 1
        items = todays[name]
        yield name, index, item, items[index] if index < len(items) else None
    for name, items in todays.items():
        for index, item in enumerate(items[seen[name] :], seen[name]):
            yield name, index, None, item


def _crew_input_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th kickoff of each crew in each method: the same inputs (a changed input
    also changes its agents' prompts, reported at their calls)."""

    def kickoffs(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in entries if e.get("kind") == "crew.started"]

    divergences = []
    pairs = _paired(
        kickoffs(recorded),
        kickoffs(replayed),
        lambda e: f"crew {e.get('crew')!r} in method {e.get('method')}",
    )
    for name, index, was, now in pairs:
        if was is None or now is None:
            continue  # a crew run or not is the method's (and its LLM calls') divergence
        before = json.dumps(jsonable(was.get("inputs")), sort_keys=True, default=str)
        after = json.dumps(jsonable(now.get("inputs")), sort_keys=True, default=str)
        if before != after:
            divergences.append(
                Divergence(
                    "crew",
                    f"kickoff {index + 1} of {name}",
                    f"inputs were {before}, now {after}",
                    seq=int(was.get("seq", 0)),
                )
            )
    return divergences


def _streamed_calls(entries: list[dict[str, Any]]) -> list[tuple[str, list[str], int]]:
    """(method, chunks, seq) of each streamed reply, in the order the replies ended."""
    chunks = streams_of(entries)
    return [
        (str(e.get("method") or "(none)"), chunks[str(e.get("call_id"))], int(e.get("seq", 0)))
        for e in entries
        if e.get("kind") == "llm.response" and chunks.get(str(e.get("call_id")))
    ]


def _stream_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th streamed reply of each method: the same chunks, in the same order."""
    divergences = []
    pairs = _paired(_streamed_calls(recorded), _streamed_calls(replayed), lambda c: c[0])
    for method, index, was, now in pairs:
        where = f"streamed reply {index + 1} of method {method}"
        got = now[1] if now is not None else []
        if was is None:
            divergences.append(
                Divergence(
                    "stream",
                    where,
                    f"streamed {len(got)} chunk(s) {json.dumps(got)[:200]}; recorded 0: "
                    "the record has this reply unstreamed",
                    seq=10**9,
                )
            )
        elif got != was[1]:
            divergences.append(
                Divergence(
                    "stream",
                    where,
                    f"streamed {len(got)} chunk(s) {json.dumps(got)[:200]}; recorded "
                    f"{len(was[1])}: {json.dumps(was[1])[:200]}",
                    seq=was[2],
                )
            )
    return divergences


def _stream_flag_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th LLM request of each method asks for its reply streamed on both sides or
    on neither (``LLM(stream=True)``). A replay answers a streamed reply with the
    recorded chunks whatever today's code asks for, so only the request says it.
    Requests without the flag (a framework that does not record it) are not compared."""

    def requests(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in entries if e.get("kind") == "llm.request" and "stream" in e]

    divergences = []
    pairs = _paired(requests(recorded), requests(replayed), lambda e: str(e.get("method")))
    for method, index, was, now in pairs:
        if was is None or now is None:
            continue  # a request only one side made: the answers report it
        if bool(was.get("stream")) != bool(now.get("stream")):
            asked = "streamed" if now.get("stream") else "whole"
            divergences.append(
                Divergence(
                    "stream",
                    f"LLM request {index + 1} of method {method}",
                    f"today's code asks for the reply {asked}; recorded: "
                    f"{'streamed' if was.get('stream') else 'whole'} (LLM(stream=...))",
                    seq=int(was.get("seq", 0)),
                )
            )
    return divergences


def _state_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th ``@persist`` save of each method, recorded vs now (ids normalized)."""
    divergences = []
    normalizer = Normalizer()
    saved, saved_now = (
        [e for e in side if e.get("kind") == "state.saved"] for side in (recorded, replayed)
    )
    for method, index, entry, save in _paired(saved, saved_now, lambda e: str(e.get("method"))):
        if entry is None:
            divergences.append(
                Divergence(
                    "state",
                    f"state saved after method {method}",
                    "today's code persisted a state the record does not have",
                    seq=10**9,
                )
            )
            continue
        where = f"state saved after method {method}" + (f" (save {index + 1})" if index else "")
        if save is None:
            divergences.append(
                Divergence(
                    "state",
                    where,
                    "the record has this save; today's code did not persist it",
                    seq=int(entry.get("seq", 0)),
                )
            )
            continue
        recorded_state = _without_id(entry.get("state"))
        state = _masked_as(recorded_state, _without_id(save.get("state")))
        was = normalizer.text(render_value(recorded_state))
        now = normalizer.text(render_value(state))
        if was != now:
            diff = "\n".join(
                difflib.unified_diff(
                    _lines(recorded_state),
                    _lines(state),
                    "recorded",
                    "now",
                    lineterm="",
                )
            )
            divergences.append(
                Divergence(
                    "state",
                    where,
                    "the persisted state differs from the record",
                    diff,
                    seq=int(entry.get("seq", 0)),
                )
            )
    return divergences


def _checkpoint_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th Agent Framework checkpoint, recorded vs now: its committed state, its
    in-flight messages and pending requests. Each side is normalized on its own (an
    agent session's uuid is new in every run: the same uuid in the same places is the
    same checkpoint)."""
    divergences = []
    was, today = (
        [e for e in side if e.get("kind") == "checkpoint.saved"] for side in (recorded, replayed)
    )
    for _, index, entry, now in _paired(was, today, lambda e: ""):
        if entry is None:
            assert now is not None
            divergences.append(
                Divergence(
                    "state",
                    f"checkpoint {index + 1} (superstep {now.get('iteration')})",
                    "today's code saved a checkpoint the record does not have",
                    seq=10**9,
                )
            )
            continue
        where = f"checkpoint {index + 1} (superstep {entry.get('iteration')})"
        seq = int(entry.get("seq", 0))
        if now is None:
            divergences.append(
                Divergence(
                    "state",
                    where,
                    "the record has this checkpoint; today's code did not save it",
                    seq=seq,
                )
            )
            continue
        recorded_view = _checkpoint_view(entry)
        view = _masked_as(recorded_view, _checkpoint_view(now))
        if Normalizer().text(_text(recorded_view)) != Normalizer().text(_text(view)):
            diff = "\n".join(
                difflib.unified_diff(
                    Normalizer().text(_text(recorded_view, indent=1)).splitlines(),
                    Normalizer().text(_text(view, indent=1)).splitlines(),
                    "recorded",
                    "now",
                    lineterm="",
                )
            )
            divergences.append(
                Divergence("state", where, "the checkpoint differs from the record", diff, seq=seq)
            )
    return divergences


#: A model response's envelope, which the provider gave and a replay's model cannot
#: (it answers from the record): ids, finish reason, usage, timestamps. Not behaviour.
_ENVELOPE = frozenset(
    {
        "message_id",
        "response_id",
        "finish_reason",
        "usage_details",
        "created_at",
        "model_id",
        "conversation_id",
        "raw_representation",
    }
)


def _checkpoint_view(entry: dict[str, Any]) -> Any:
    return _without_envelope(
        {key: entry.get(key) for key in ("iteration", "state", "messages", "pending")}
    )


def _without_envelope(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_envelope(v) for k, v in value.items() if k not in _ENVELOPE}
    if isinstance(value, list):
        return [_without_envelope(v) for v in value]
    return value


def _text(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, indent=indent, sort_keys=True, default=str)


def _without_id(state: Any) -> Any:
    # The state's id is new in every run (crewAI's uuid4): not behaviour.
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if k != "id"}
    return state


def _masked_as(recorded: Any, now: Any) -> Any:
    """``now`` with the values the record's scrubbing masked (``<secret>``) masked too:
    a secret is never compared, nor shown in a diff."""
    if isinstance(recorded, str) and "<secret>" in recorded:
        return recorded
    if isinstance(recorded, dict) and isinstance(now, dict):
        return {k: _masked_as(recorded[k], v) if k in recorded else v for k, v in now.items()}
    if isinstance(recorded, list) and isinstance(now, list) and len(recorded) == len(now):
        return [_masked_as(a, b) for a, b in zip(recorded, now, strict=True)]
    return now


def _lines(state: Any) -> list[str]:
    return json.dumps(state, indent=1, sort_keys=True, default=str).splitlines()


def _replayed_end(run: FlowRun) -> dict[str, Any]:
    if run.error is not None:
        return {
            "outcome": "failed",
            "error": {"type": type(run.error).__name__, "message": str(run.error)},
        }
    if _paused(run):
        return {"outcome": "paused"}
    outputs = getattr(run, "outputs", None)
    if isinstance(outputs, list):
        # A workflow's outcome is its outputs, recorded as JSON data.
        return {"outcome": "finished", "rendered": render_value(jsonable(outputs))}
    return {"outcome": "finished", "rendered": render_value(run.output)}


def _paused(run: FlowRun) -> bool:
    """Whether the run ended waiting for a human: its last flow end is ``flow paused``
    (the trace line every adapter writes for it; what the framework's kickoff returned
    then is its own type, which the core does not name)."""
    ends = [e.kind for e in run.trace if e.kind in _ENDS]
    return bool(ends) and ends[-1] in _PAUSED


#: A run's end lines that mean it waits for a human (a graph: on interrupts), and all.
_PAUSED = ("flow.paused", "graph.interrupted")
_ENDS = ("flow.finished", "flow.failed", "graph.finished", "graph.failed", *_PAUSED)


def _order_divergence(
    record: Record, recorded: list[tuple[str, str]], replayed: list[tuple[str, str]]
) -> Divergence:
    index = next(
        (i for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)) if a != b),
        min(len(recorded), len(replayed)),
    )
    entries = [e for e in record.entries if e.get("kind") in ORDER_KINDS]
    seq = int(entries[index].get("seq", 0)) if index < len(entries) else 10**9
    was = " ".join(f"{m}:{k.split('.')[1]}" for k, m in recorded[index : index + 4]) or "(end)"
    now = " ".join(f"{m}:{k.split('.')[1]}" for k, m in replayed[index : index + 4]) or "(end)"
    same_set = sorted(recorded) == sorted(replayed)
    kind = "order" if same_set else "method"
    what = (
        "the methods ran in another order"
        if same_set
        else "another method or listener ran (or one did not)"
    )
    return Divergence(
        kind, f"method event {index + 1}", f"{what}: recorded {was}; now {now}", seq=seq
    )
