"""LangGraph's side of golden replay: a thread's checkpoints, replayed on today's graph.

A recorded run keeps every checkpoint tuple its thread gained in that run (subgraph
namespaces too) and their pending writes, *as the bytes the graph's serializer made*
(``serde.dumps_typed``: the checkpoint, its metadata, each write), beside a readable
copy of the values (what a reviewer reads, and what the secret check reads), and the
graph's drawing as sorted lines. Against today's graph - the one the test ran in the
same place:

* ``codec``: each stored checkpoint and write is decoded by today's serializer;
  LangGraph does not raise on a class it cannot rebuild (it logs and returns the
  stored fields as a dict, or blocks it under ``LANGGRAPH_STRICT_MSGPACK``), so the
  decode is watched for those warnings;
* ``schema``: a state key the stored checkpoints hold that today's graph has no
  channel for (its values would be dropped on resume), or stored values today's
  pydantic state schema refuses;
* ``topology``: a node the stored checkpoints name (in their versions seen, their
  ``branch:to:`` channels or pending writes) that today's graph lacks: a stored thread
  could not go on there;
* ``behaviour``: each stored root checkpoint is put into a fresh saver with those
  before it, as the thread stood when it was saved (its latest; the next superstep's
  writes not yet made, an interrupt it waits on pending), and today's graph resumes the
  thread from it (``flows.run(graph, None, config={"configurable": {"thread_id":
  ...}})``, as production resumes a stored thread: the following nodes run on today's
  code, the interrupt is asked again) with the replies and answers the test's fakes
  gave; the core compares each resumed run's trace and its values, next nodes and
  status with the recording.

Before each replay the virtual wall clock moves past the newest stored ``ts`` (and
the adapter starts new checkpoint ids after the newest stored one), so nothing the
replay writes sorts older than what it resumes.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_flows.adapters import (
    FlowsUsageError,
    GoldenBreak,
    ScriptedHuman,
    UnscriptedRequest,
    render_value,
    replaced,
)

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowRun, FlowsSession

__all__ = ["ADAPTER", "FRAMEWORK_FIELDS", "LangGraphGolden", "graph_lines"]

#: Fields LangGraph owns whose names look secret but are not credentials (none known).
FRAMEWORK_FIELDS: dict[str, str] = {}

#: LangGraph's serializer logs, rather than raises, when it cannot rebuild a stored value.
_SERDE_LOGGER = "langgraph.checkpoint.serde.jsonplus"
_CODEC_WORDS = ("could not reconstruct", "blocked", "not allowed", "unregistered")
_INTERRUPT = "__interrupt__"
_RESERVED = ("__start__", "__end__", "__input__", "__interrupt__", "__pregel_tasks")


def _compiled(flow: Any) -> Any:
    from langgraph.graph import StateGraph

    return flow.compile() if isinstance(flow, StateGraph) else flow


def graph_lines(graph: Any) -> list[str]:
    """A graph's drawing (``get_graph(xray=True)``) as sorted, diffable lines."""
    drawn = _compiled(graph).get_graph(xray=True)
    lines = [f"node {node}" for node in drawn.nodes]
    for edge in drawn.edges:
        label = f" [{edge.data}]" if edge.data is not None else ""
        kind = " (conditional)" if edge.conditional else ""
        lines.append(f"edge {edge.source} -> {edge.target}{label}{kind}")
    return sorted(lines)


def _typed(pair: tuple[str, bytes]) -> list[str]:
    return [pair[0], base64.b64encode(pair[1]).decode("ascii")]


def _untyped(stored: list[str]) -> tuple[str, bytes]:
    return stored[0], base64.b64decode(stored[1])


def _readable(value: Any) -> Any:
    """``value`` as JSON if it is JSON, else its stable text (the golden's readable copy)."""
    import json

    try:
        if json.loads(json.dumps(value)) == value:
            return value
    except (TypeError, ValueError):
        pass
    return render_value(value, limit=100_000)


def _saver_of(graph: Any) -> Any:
    saver = getattr(graph, "checkpointer", None)
    if saver is None or saver is False or not hasattr(saver, "serde"):
        return None
    return saver


def _capture_tuple(serde: Any, item: Any) -> dict[str, Any]:
    configurable = item.config["configurable"]
    parent = (item.parent_config or {}).get("configurable", {}) if item.parent_config else {}
    checkpoint = item.checkpoint
    writes = [
        {"task": str(task_id), "channel": str(channel), "value": _typed(serde.dumps_typed(value))}
        for task_id, channel, value in item.pending_writes or ()
    ]
    return {
        "id": str(configurable["checkpoint_id"]),
        "ns": str(configurable.get("checkpoint_ns", "")),
        "parent": parent.get("checkpoint_id"),
        "checkpoint": _typed(serde.dumps_typed(checkpoint)),
        "metadata": _typed(serde.dumps_typed(item.metadata)),
        "writes": writes,
        # the readable copy: reviewers diff it, the golden writer's secret check reads it
        "raw": {
            "values": _readable(checkpoint.get("channel_values", {})),
            "metadata": _readable(dict(item.metadata or {})),
            "writes": [
                [str(channel), _readable(value)] for _, channel, value in item.pending_writes or ()
            ],
        },
    }


def _decoded(serde: Any, stored: dict[str, Any]) -> tuple[Any, Any, list[tuple[str, str, Any]]]:
    checkpoint = serde.loads_typed(_untyped(stored["checkpoint"]))
    metadata = serde.loads_typed(_untyped(stored["metadata"]))
    writes = [
        (w["task"], w["channel"], serde.loads_typed(_untyped(w["value"]))) for w in stored["writes"]
    ]
    return checkpoint, metadata, writes


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if any(word in text.lower() for word in _CODEC_WORDS):
            self.messages.append(text)


@contextlib.contextmanager
def _serde_warnings() -> Iterator[_Warnings]:
    logger = logging.getLogger(_SERDE_LOGGER)
    handler = _Warnings()
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def _nodes_named(checkpoint: Mapping[str, Any], writes: list[tuple[str, str, Any]]) -> set[str]:
    """The nodes a stored checkpoint names: those that saw versions, and those its
    ``branch:to:`` / join channels (stored or pending) would run next."""
    named = {str(node) for node in checkpoint.get("versions_seen", {})}
    channels = [*checkpoint.get("channel_versions", {}), *(channel for _, channel, _ in writes)]
    for channel in channels:
        if channel.startswith("branch:to:"):
            named.add(channel[len("branch:to:") :])
        elif channel.startswith("join:"):
            named.add(channel.rpartition(":")[2])
    return {node for node in named if node not in _RESERVED}


def _state_keys(checkpoint: Mapping[str, Any]) -> set[str]:
    keys = set(checkpoint.get("channel_versions", {})) | set(checkpoint.get("channel_values", {}))
    return {k for k in keys if not k.startswith(("branch:", "join:", "__")) and ":" not in k}


def _epoch_after(session: FlowsSession, stored: list[dict[str, Any]], serde: Any) -> None:
    """Move the virtual wall clock past the newest stored ``ts`` (a replay's checkpoints
    must not look older than what it resumes)."""
    newest: _dt.datetime | None = None
    for entry in stored:
        try:
            ts = serde.loads_typed(_untyped(entry["checkpoint"])).get("ts")
            when = _dt.datetime.fromisoformat(str(ts))
        except Exception:  # no ts, or one that does not parse: nothing to follow
            continue
        newest = when if newest is None or when > newest else newest
    epoch = getattr(session, "epoch", None)
    if newest is None or not isinstance(epoch, _dt.datetime):
        return
    if newest.tzinfo is None:
        newest = newest.replace(tzinfo=_dt.UTC)
    start = epoch if epoch.tzinfo is not None else epoch.replace(tzinfo=_dt.UTC)
    session.clock.advance_to((newest - start).total_seconds() + 1e-6)


def _script_answers(human: ScriptedHuman, recorded: list[Any]) -> None:
    """Script ``human`` with the test's recorded answers, in order, none required."""
    from pytest_flows.langgraph._human import interrupts

    for answer in recorded:
        if answer == "<pause>":
            interrupts(human).pause(optional=True)
        elif isinstance(answer, dict) and "text" in answer:
            human.answer(str(answer["text"]), optional=True)
        elif isinstance(answer, dict) and "value" in answer:
            interrupts(human).respond(answer["value"], optional=True)
        else:
            return


class LangGraphGolden:
    framework = "langgraph"
    run_keys: ClassVar[Mapping[str, type]] = {"checkpoints": list, "graph": list}
    framework_fields: Mapping[str, str] = FRAMEWORK_FIELDS

    def accepts(self, run: FlowRun) -> bool:
        from langgraph.graph import StateGraph
        from langgraph.pregel import Pregel

        return isinstance(run.flow, Pregel | StateGraph)

    # -- recording ------------------------------------------------------------------
    def capture(
        self, session: FlowsSession, run: FlowRun, kwargs: dict[str, Any], seen: set[str]
    ) -> dict[str, Any]:
        graph = getattr(run, "graph", None)
        saver = _saver_of(graph)
        thread = (getattr(run, "config", None) or {}).get("configurable", {}).get("thread_id")
        name = getattr(graph, "name", None) or getattr(run.flow, "name", "graph")
        if saver is None or thread is None:
            raise FlowsUsageError(
                f"golden replay of graph {name!r} needs its checkpoints: run it with a "
                "checkpointer (flows.run gives one unless the graph was compiled with "
                "checkpointer=False)."
            )
        tuples = list(saver.list({"configurable": {"thread_id": thread}}))
        checkpoints = []
        for item in sorted(tuples, key=lambda t: str(t.config["configurable"]["checkpoint_id"])):
            configurable = item.config["configurable"]
            key = (
                f"{thread}|{configurable.get('checkpoint_ns', '')}|{configurable['checkpoint_id']}"
            )
            if key in seen:
                continue
            seen.add(key)
            checkpoints.append(_capture_tuple(saver.serde, item))
        return {
            "flow": f"graph {name}",
            "thread": str(thread),
            "graph": graph_lines(graph),
            "checkpoints": checkpoints,
        }

    # -- replaying --------------------------------------------------------------------
    def replay(
        self, session: FlowsSession, recorded: dict[str, Any], scripted: Any, today: Any
    ) -> list[dict[str, Any]]:
        if today is None:
            return []
        from langgraph.checkpoint.memory import InMemorySaver

        core = _core(session)
        serde = _serde_for(session, today)
        stored = list(recorded.get("checkpoints", []))
        results: list[dict[str, Any]] = []
        for n, entry in enumerate(stored):
            if entry["ns"]:
                continue  # a subgraph's checkpoint: resumed through its parent's
            saver = InMemorySaver(serde=serde)
            for earlier in stored[: n + 1]:
                _put(saver, serde, recorded["thread"], earlier)
            _epoch_after(session, stored[: n + 1], serde)
            mark = session.event_count()
            # Only this checkpoint and what came before it are stored: it is the thread's
            # latest, and the run resumes from it as production resumes a stored thread.
            config = {"configurable": {"thread_id": recorded["thread"]}}
            try:
                with (
                    _replaying(session, scripted),
                    replaced(core.fakes(session), "checkpointer", saver),
                ):
                    run = session.run(today, None, config=config, raise_on_error=False)
                trace = run.trace.lines()
                output = _outcome(run)
            except (Exception, UnscriptedRequest) as exc:  # a scripted fake ran out
                trace, output = [], f"error: {type(exc).__name__}"
            with session._events_lock:  # the replays are not part of the test's trace
                del session._events[mark:]
            results.append(
                {"from": f"checkpoint {len(results) + 1}", "trace": trace, "output": output}
            )
        return results

    # -- checking ---------------------------------------------------------------------
    def check(
        self, session: FlowsSession, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        if today is None:
            return [GoldenBreak("topology", where, "today's test ran no graph in its place")]
        graph = _compiled(today)
        serde = _serde_for(session, today)
        breaks: list[GoldenBreak] = []
        decoded = []
        for n, entry in enumerate(recorded.get("checkpoints", []), start=1):
            label = f"{where}, checkpoint {n}" + (
                f" (subgraph {entry['ns']})" if entry["ns"] else ""
            )
            with _serde_warnings() as warned:
                try:
                    checkpoint, _, writes = _decoded(serde, entry)
                except Exception as exc:
                    breaks.append(
                        GoldenBreak(
                            "codec",
                            label,
                            "today's codec cannot decode it",
                            f"{type(exc).__name__}: {exc}",
                        )
                    )
                    continue
            if warned.messages:
                breaks.append(
                    GoldenBreak(
                        "codec",
                        label,
                        "today's codec cannot rebuild what it stored (LangGraph would resume "
                        "with the stored fields as a plain dict, or refuse it)",
                        "\n".join(dict.fromkeys(warned.messages)),
                    )
                )
            decoded.append((label, entry, checkpoint, writes))
        if breaks:
            return breaks
        breaks += _schema_breaks(graph, decoded)
        breaks += _topology_breaks(graph, recorded, decoded, where)
        return breaks


def _schema_breaks(graph: Any, decoded: list[Any]) -> list[GoldenBreak]:
    breaks = []
    channels = set(getattr(graph, "channels", {}) or {})
    schema = getattr(getattr(graph, "builder", None), "state_schema", None)
    validate = getattr(schema, "model_validate", None)
    for label, entry, checkpoint, _ in decoded:
        if entry["ns"]:
            continue  # a subgraph's state is its own graph's
        gone = sorted(_state_keys(checkpoint) - channels)
        if gone:
            breaks.append(
                GoldenBreak(
                    "schema",
                    label,
                    f"it holds state key(s) today's graph has no channel for: {', '.join(gone)} "
                    "(a resumed thread would drop them)",
                )
            )
        if callable(validate):
            values = {
                k: v for k, v in checkpoint.get("channel_values", {}).items() if k in channels
            }
            try:
                validate(values)
            except Exception as exc:
                breaks.append(
                    GoldenBreak(
                        "schema", label, "today's state schema refuses its values", str(exc)
                    )
                )
    return breaks


def _topology_breaks(
    graph: Any, recorded: dict[str, Any], decoded: list[Any], where: str
) -> list[GoldenBreak]:
    nodes = set(getattr(graph, "nodes", {}) or {})
    missing: set[str] = set()
    for _, entry, checkpoint, writes in decoded:
        if not entry["ns"]:
            missing |= _nodes_named(checkpoint, writes) - nodes
    if not missing:
        return []
    before, after = recorded.get("graph", []), graph_lines(graph)
    diff = [f"- {line}" for line in before if line not in after]
    diff += [f"+ {line}" for line in after if line not in before]
    return [
        GoldenBreak(
            "topology",
            where,
            f"its stored checkpoints name node(s) today's graph lacks: {', '.join(sorted(missing))}"
            " (a stored thread could not go on there)",
            "\n".join(diff),
        )
    ]


def _core(session: FlowsSession) -> Any:
    """The LangGraph adapter (through the session: this module is imported by it)."""
    adapter = session.ensure("langgraph")
    if adapter is None:  # pragma: no cover - a golden LangGraph run means it is loaded
        raise FlowsUsageError("golden replay of a LangGraph graph needs langgraph imported.")
    return adapter


def _serde_for(session: FlowsSession, today: Any) -> Any:
    """The serializer today's graph stores with: its own checkpointer's, else the test's."""
    own = _saver_of(today)
    if own is not None:
        return own.serde
    return _core(session).checkpointer(session).serde


def _put(saver: Any, serde: Any, thread: str, entry: dict[str, Any]) -> None:
    checkpoint, metadata, writes = _decoded(serde, entry)
    configurable = {"thread_id": thread, "checkpoint_ns": entry["ns"]}
    saver.put(
        {"configurable": {**configurable, "checkpoint_id": entry["parent"]}},
        checkpoint,
        metadata,
        dict(checkpoint.get("channel_versions", {})),
    )
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for task, channel, value in writes:
        # The thread as it stood when this checkpoint was its latest: the tasks of the
        # next superstep had written nothing (they run again, on today's code), and an
        # interrupt waited (asked again, answered by the test's recorded answers).
        if channel == _INTERRUPT:
            by_task.setdefault(task, []).append((channel, value))
    for task, task_writes in by_task.items():
        saver.put_writes(
            {"configurable": {**configurable, "checkpoint_id": entry["id"]}}, task_writes, task
        )


def _outcome(run: Any) -> str:
    """What a replay ended with: its state, next nodes and status (or its error)."""
    if run.error is not None:
        return f"error: {type(run.error).__name__}"
    shown = {
        "values": getattr(run, "values", None),
        "next": list(getattr(run, "next", ()) or ()),
        "status": getattr(run, "status", ""),
    }
    text: str = run._normalizer().text(render_value(shown, limit=100_000))
    return text


@contextlib.contextmanager
def _replaying(session: FlowsSession, scripted: Any) -> Iterator[None]:
    """The test's recorded LLM replies and human answers bound for one replay, fresh
    (the test's own fakes are spent by then); unbound on exit."""
    core = _core(session)
    with contextlib.ExitStack() as stack:
        if scripted.llm:
            with contextlib.suppress(ModuleNotFoundError):  # the LLM fakes not installed
                bound = core.bind_llm(session, scripted.llm_script())
                if bound is not None:
                    stack.enter_context(bound)
        if scripted.human:
            human = ScriptedHuman(session)
            human.allow_unused()
            _script_answers(human, scripted.human)
            bound = core.bind_human(session, human)
            if bound is not None:
                stack.enter_context(bound)
        yield


ADAPTER = LangGraphGolden()
