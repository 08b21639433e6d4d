"""Recording a golden test's runs, and checking a recording against today's code."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_flows.golden.adapters import adapter_for_run, adapter_named
from pytest_flows.golden.breaks import BREAK_KINDS, GoldenBreak
from pytest_flows.golden.files import FORMAT
from pytest_flows.trace import render_value

if TYPE_CHECKING:
    from pytest_flows.run import FlowRun
    from pytest_flows.session import FlowsSession

__all__ = ["RunRecorder", "check_document", "record_document", "text_diff"]


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
            "output": render_value(run.output),
            "error": None if run.error is None else type(run.error).__name__,
        }
        entry.update(adapter.capture(self.session, run, kwargs, self._seen))
        self.runs.append(entry)
        self.flows.append(run.flow)


def _forget(session: Any, *names: str) -> None:
    for name in names:
        session.__dict__.pop(name, None)


def replies_of(session: FlowsSession) -> list[Any]:
    """The scripted LLM replies the test's runs used, in call order."""
    fake = session.bound("llm")
    calls = getattr(fake, "calls", None) or []
    return [jsonable(call.reply) for call in calls if getattr(call, "error", None) is None]


def record_document(session: FlowsSession, recorder: RunRecorder) -> dict[str, Any]:
    replies = replies_of(session)
    for entry, flow in zip(recorder.runs, recorder.flows, strict=True):
        entry["resumes"] = adapter_named(entry["framework"]).replay(session, entry, replies, flow)
    return {
        "format": FORMAT,
        "test": session.test_id,
        "seed": session.seed,
        "replies": replies,
        "runs": recorder.runs,
    }


def check_document(
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
    replies = list(golden.get("replies", []))
    for n, recorded in enumerate(recorded_runs, start=1):
        where = f"run {n} ({recorded.get('flow', '?')})"
        adapter = adapter_named(recorded["framework"])
        today = today_runs[n - 1] if n - 1 < len(today_runs) else None
        flow = recorder.flows[n - 1] if today is not None else None
        if today is not None and today["framework"] != recorded["framework"]:
            flow = None
        found = adapter.check(session, recorded, where, flow)
        if not found:
            found = _resume_breaks(session, adapter, recorded, replies, where, flow)
        if today is not None and not any(b.kind != "behaviour" for b in found):
            found.extend(_run_breaks(recorded, today, where))
        breaks.extend(found)
    return sorted(breaks, key=lambda b: BREAK_KINDS.index(b.kind))


def _resume_breaks(
    session: FlowsSession,
    adapter: Any,
    recorded: dict[str, Any],
    replies: list[Any],
    where: str,
    flow: Any,
) -> list[GoldenBreak]:
    breaks: list[GoldenBreak] = []
    today = adapter.replay(session, recorded, replies, flow)
    for before, after in zip(recorded.get("resumes", []), today, strict=False):
        label = f"{where}, resumed from {before['from']}"
        if before["trace"] != after["trace"]:
            diff = text_diff(before["trace"], after["trace"], old="golden", new="today")
            breaks.append(GoldenBreak("behaviour", label, "the resumed run's trace differs", diff))
        elif before["output"] != after["output"]:
            breaks.append(
                GoldenBreak(
                    "behaviour",
                    label,
                    "the resumed run's output differs",
                    f"- {before['output']}\n+ {after['output']}",
                )
            )
    return breaks


def _run_breaks(recorded: dict[str, Any], today: dict[str, Any], where: str) -> list[GoldenBreak]:
    if recorded["trace"] != today["trace"]:
        diff = text_diff(recorded["trace"], today["trace"], old="golden", new="today")
        return [GoldenBreak("behaviour", where, "the test's run has a different trace", diff)]
    if recorded["output"] != today["output"] or recorded.get("error") != today.get("error"):
        return [
            GoldenBreak(
                "behaviour",
                where,
                "the test's run has a different output",
                f"- {recorded['output']}\n+ {today['output']}",
            )
        ]
    return []
