"""Recording a golden test's runs, and checking a recording against today's code."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.fakes.llm_script import LLMScript
from pytest_flows._internal.golden.adapters import adapter_for_run, adapter_named
from pytest_flows._internal.golden.breaks import BREAK_KINDS, GoldenBreak
from pytest_flows._internal.golden.versions import FORMAT, same_lines, same_text, trace_form
from pytest_flows._internal.trace import render_value

if TYPE_CHECKING:
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.session import FlowsSession

__all__ = [
    "RunRecorder",
    "Scripted",
    "check_document",
    "owned_class",
    "record_document",
    "text_diff",
]

#: The classes the golden test owns while its file is recorded or checked:
#: ``module:qualname`` -> class, of the flows it ran and its module's globals.
_OWNED: contextvars.ContextVar[dict[str, type] | None] = contextvars.ContextVar(
    "pytest_flows_golden_owned", default=None
)


def owned_class(ref: object) -> type | None:
    """The class a golden file names (``module:Class``), if the test that owns the file
    ran it or its module defines/imports it; never imported on the file's say-so."""
    owned = _OWNED.get() or {}
    return owned.get(ref) if isinstance(ref, str) else None


def _key(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@contextlib.contextmanager
def _owning(recorder: RunRecorder, module: ModuleType | None) -> Iterator[None]:
    owned: dict[str, type] = {}
    for value in vars(module).values() if module is not None else ():
        if isinstance(value, type):
            owned.setdefault(_key(value), value)
    for flow in recorder.flows:
        cls = flow if isinstance(flow, type) else type(flow)
        owned[_key(cls)] = cls
    token = _OWNED.set(owned)
    try:
        yield
    finally:
        _OWNED.reset(token)


@dataclasses.dataclass(frozen=True)
class Scripted:
    """What the test's scripted fakes answered, in order: the resumes get the same."""

    llm: list[Any] = dataclasses.field(default_factory=list)
    crews: list[Any] = dataclasses.field(default_factory=list)
    human: list[Any] = dataclasses.field(default_factory=list)
    #: each ``human.resume(paused_run, feedback, outcome=...)`` of the test
    resumes: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    #: golden document key of each list
    KEYS = {
        "llm": "replies",
        "crews": "crew_replies",
        "human": "human_answers",
        "resumes": "human_resumes",
    }

    @classmethod
    def of(cls, document: dict[str, Any]) -> Scripted:
        return cls(**{field: list(document.get(key, [])) for field, key in cls.KEYS.items()})

    def fields(self) -> dict[str, Any]:
        """The document keys to write (the LLM replies always; the others when used)."""
        written = {key: getattr(self, field) for field, key in self.KEYS.items()}
        return {k: v for k, v in written.items() if v or k == "replies"}

    def llm_script(self) -> LLMScript:
        """A fresh LLM script of the recorded replies, in order, none of them required
        (a resume asks only for what its later steps need)."""
        script = LLMScript()
        if self.llm:
            script.reply(*self.llm, optional=True)
        script.script.check_unused = False
        return script


def text_diff(before: list[str], after: list[str], *, old: str, new: str) -> str:
    lines = difflib.unified_diff(before, after, fromfile=old, tofile=new, lineterm="", n=2)
    return "\n".join(lines)


def jsonable(value: Any) -> Any:
    """``value`` if it survives JSON as itself, else its stable text rendering."""
    try:
        if json.loads(json.dumps(value)) == value:
            return value
    except (TypeError, ValueError):
        pass
    return render_value(value)


class RunRecorder:
    """Captures every ``flows.run``/``arun`` of one golden test, as it finishes."""

    def __init__(self, session: FlowsSession) -> None:
        self.session = session
        self.runs: list[dict[str, Any]] = []
        #: the flow (crewai) or workflow (Agent Framework) of each run, in order
        self.flows: list[Any] = []
        self.unsupported: list[str] = []
        self.resumes: list[dict[str, Any]] = []
        self._seen: set[str] = set()
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        session = self.session
        run, arun = session.run, session.arun

        def recorded_run(target: Any, *args: Any, **kwargs: Any) -> FlowRun:
            result = run(target, *args, **kwargs)
            self._capture(result, kwargs)
            return result

        async def recorded_arun(target: Any, *args: Any, **kwargs: Any) -> FlowRun:
            result = await arun(target, *args, **kwargs)
            self._capture(result, kwargs)
            return result

        # Instance attributes shadow the methods for this test's session only.
        session.run = recorded_run  # type: ignore[method-assign]
        session.arun = recorded_arun  # type: ignore[method-assign]
        self._undo.append(lambda: _forget(session, "run", "arun"))
        human = session.bound("human")
        resume = getattr(human, "resume", None)
        if resume is not None:

            def recorded_resume(
                paused: Any, feedback: str = "", *, outcome: str | None = None
            ) -> FlowRun:
                self.resumes.append(
                    {
                        "state_id": _paused_id(paused),
                        "feedback": feedback,
                        "outcome": outcome,
                    }
                )
                result: FlowRun = resume(paused, feedback, outcome=outcome)
                return result

            human.resume = recorded_resume
            self._undo.append(lambda: _forget(human, "resume"))

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _capture(self, run: FlowRun, kwargs: dict[str, Any]) -> None:
        adapter = adapter_for_run(run)
        if adapter is None:
            self.unsupported.append(type(run.flow).__qualname__)
            return
        entry: dict[str, Any] = {
            "framework": adapter.framework,
            "trace": run.trace.lines(),
            # numbered as the trace numbers its ids: a paused run's repr names its flow id
            "output": run._normalizer().text(render_value(run.output)),
            "error": None if run.error is None else type(run.error).__name__,
        }
        entry.update(adapter.capture(self.session, run, kwargs, self._seen))
        self.runs.append(entry)
        self.flows.append(run.flow)


def _forget(session: Any, *names: str) -> None:
    for name in names:
        session.__dict__.pop(name, None)


def _paused_id(paused: Any) -> str | None:
    """The flow id of what ``human.resume`` was given: a paused run or a restored flow."""
    context = getattr(getattr(paused, "output", None), "context", None)
    if context is None:
        context = getattr(paused, "pending_feedback", None)
    flow_id = getattr(context, "flow_id", None)
    return None if flow_id is None else str(flow_id)


def _ok(fake: Any, attribute: str) -> list[Any]:
    exchanges = getattr(fake, attribute, None) or []
    return [e for e in exchanges if getattr(e, "error", None) is None]


def _crew_value(output: Any) -> Any:
    # A crew result as fake_crews.reply() takes it: structured output as a dict, else text.
    structured = getattr(output, "pydantic", None)
    if structured is not None and hasattr(structured, "model_dump"):
        return structured.model_dump(mode="json")
    if getattr(output, "json_dict", None):
        return jsonable(output.json_dict)
    return str(getattr(output, "raw", output))


def _human_value(exchange: Any) -> Any:
    """A human's answer as the golden keeps it: text and outcome, a pause or a timeout."""
    from pytest_flows._internal.fakes.human_script import PAUSE

    reply = exchange.reply
    if reply is PAUSE:
        return "<pause>"
    if reply is None:
        return "<timeout>"
    if not isinstance(reply, str):  # a structured response (Agent Framework request_info)
        return {"value": jsonable(reply)}
    scripted = getattr(exchange.entry, "reply", None)
    return {"text": reply, "outcome": getattr(scripted, "outcome", None)}


def scripted_of(session: FlowsSession, recorder: RunRecorder) -> Scripted:
    """What the test's fakes answered, in call order, as JSON values."""
    return Scripted(
        llm=[jsonable(call.reply) for call in _ok(session.bound("llm"), "calls")],
        crews=[_crew_value(call.reply) for call in _ok(session.bound("crews"), "calls")],
        human=[_human_value(e) for e in _ok(session.bound("human"), "requests")],
        resumes=list(recorder.resumes),
    )


def record_document(
    session: FlowsSession, recorder: RunRecorder, module: ModuleType | None = None
) -> dict[str, Any]:
    scripted = scripted_of(session, recorder)
    with _owning(recorder, module):
        for entry, flow in zip(recorder.runs, recorder.flows, strict=True):
            adapter = adapter_named(entry["framework"])
            entry["resumes"] = adapter.replay(session, entry, scripted, flow)
    return {
        "format": FORMAT,
        "test": session.test_id,
        "seed": session.seed,
        **scripted.fields(),
        "runs": recorder.runs,
    }


def check_document(
    session: FlowsSession,
    recorder: RunRecorder,
    golden: dict[str, Any],
    module: ModuleType | None = None,
) -> list[GoldenBreak]:
    with _owning(recorder, module):
        return _check_document(session, recorder, golden)


def _check_document(
    session: FlowsSession, recorder: RunRecorder, golden: dict[str, Any]
) -> list[GoldenBreak]:
    recorded_runs: list[dict[str, Any]] = golden.get("runs", [])
    today_runs = recorder.runs
    breaks: list[GoldenBreak] = []
    if len(recorded_runs) != len(today_runs):
        breaks.append(
            GoldenBreak(
                "behaviour",
                "the test",
                f"ran {len(today_runs)} flow run(s); the golden recorded {len(recorded_runs)}",
            )
        )
    scripted = Scripted.of(golden)
    fmt = int(golden.get("format", FORMAT))
    for n, recorded in enumerate(recorded_runs, start=1):
        where = f"run {n} ({recorded.get('flow', '?')})"
        adapter = adapter_named(recorded["framework"])
        today = today_runs[n - 1] if n - 1 < len(today_runs) else None
        flow = recorder.flows[n - 1] if today is not None else None
        if today is not None and today["framework"] != recorded["framework"]:
            flow = None
        found = adapter.check(session, recorded, where, flow)
        if not found:
            found = _resume_breaks(session, adapter, recorded, scripted, where, flow, fmt)
        if today is not None and not any(b.kind != "behaviour" for b in found):
            found.extend(_run_breaks(recorded, today, where, fmt))
        breaks.extend(found)
    return sorted(breaks, key=lambda b: BREAK_KINDS.index(b.kind))


def _resume_breaks(
    session: FlowsSession,
    adapter: Any,
    recorded: dict[str, Any],
    scripted: Scripted,
    where: str,
    flow: Any,
    fmt: int,
) -> list[GoldenBreak]:
    breaks: list[GoldenBreak] = []
    today = adapter.replay(session, recorded, scripted, flow)
    for before, after in zip(recorded.get("resumes", []), today, strict=False):
        label = f"{where}, resumed from {before['from']}"
        if not same_lines(before["trace"], after["trace"], fmt):
            diff = _trace_diff(before["trace"], after["trace"], fmt)
            breaks.append(GoldenBreak("behaviour", label, "the resumed run's trace differs", diff))
        elif not same_text(before["output"], after["output"], fmt):
            breaks.append(
                GoldenBreak(
                    "behaviour",
                    label,
                    "the resumed run's output differs",
                    f"- {before['output']}\n+ {after['output']}",
                )
            )
    return breaks


def _trace_diff(recorded: list[str], today: list[str], fmt: int) -> str:
    if fmt >= FORMAT:
        return text_diff(recorded, today, old="golden", new="today")
    # an older format's golden: the diff of what was compared (its note says how)
    old, new = trace_form(recorded, fmt), trace_form(today, fmt)
    return (
        f"(a format-{fmt} golden, compared as docs/golden.md#goldens-of-earlier-releases says)\n"
        + text_diff(old, new, old="golden", new="today")
    )


def _run_breaks(
    recorded: dict[str, Any], today: dict[str, Any], where: str, fmt: int
) -> list[GoldenBreak]:
    if not same_lines(recorded["trace"], today["trace"], fmt):
        diff = _trace_diff(recorded["trace"], today["trace"], fmt)
        return [GoldenBreak("behaviour", where, "the test's run has a different trace", diff)]
    if not same_text(recorded["output"], today["output"], fmt) or recorded.get(
        "error"
    ) != today.get("error"):
        return [
            GoldenBreak(
                "behaviour",
                where,
                "the test's run has a different output",
                f"- {recorded['output']}\n+ {today['output']}",
            )
        ]
    return []
