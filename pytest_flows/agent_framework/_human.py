"""``human`` answers Agent Framework ``request_info``.

When a run stops with pending requests and the ``human`` fixture is bound,
``flows.run`` asks the human's script for each one (in the order they were
raised) and continues the workflow with the answers (``run(responses=...)``),
until nothing is pending or the script leaves a request pending. Requests
re-raised by a restore (``flows.run(workflow, checkpoint_id=...)``) are asked
the same way; requests already answered before the checkpoint are not pending
there, so they are never asked again.

Answers are typed (a request expects ``bool``, a dataclass, ...), so they are
scripted through :func:`requests`::

    requests(human).on(request=ReviewRequest, data={"reviewer": "legal"}).respond(True)
    requests(human).on(executor="editor").pause()        # stays pending
    requests(human).respond(True, False)                 # the next requests, in order

Text answers scripted on the human directly (``human.answer("ok")``,
``human.on(method="legal").answer("ok")``) answer requests that expect ``str``.
Every request goes through the human's one strict ledger (``human.requests``):
an unscripted request fails the test, showing the line that would answer it.

Request keys: ``caller`` has ``flow`` (workflow name), ``method`` (the
executor that asked), ``kind`` (``"request_info"``), ``occurrence`` (n-th
request of that executor), ``request`` and ``response`` (type names);
``prompt`` is the request data rendered as text; ``data`` has ``request``
(the data itself), ``request_id``, ``request_type`` and ``response_type``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from pytest_flows.adapters import PAUSE as _PAUSE
from pytest_flows.adapters import (
    FlowsUsageError,
    Match,
    Request,
    ScriptError,
    ScriptReplyError,
    Times,
    UnscriptedRequest,
    check_duration,
    is_pause,
    occurrence,
    short,
)
from pytest_flows.agent_framework._tracing import render

__all__ = ["PAUSE", "RequestRule", "Requests", "requests"]

_KIND = "request_info"


#: Leave the request pending (the run stops, waiting, as without a human): the
#: ``human`` fixture's own ``pause()`` sentinel, so both spellings mean the same.
PAUSE: Any = _PAUSE


def _script_of(human: Any) -> Any:
    script = getattr(human, "script", None)
    if script is None or not callable(getattr(script, "take", None)):
        raise FlowsUsageError(
            f"requests(human) needs the human fixture (scripted human answers), got {human!r}."
        )
    return script


def _view(data: Any) -> Any:
    """The request data as ``data=`` mapping conditions see it."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        return dataclasses.asdict(data)
    if isinstance(data, BaseModel):
        return data.model_dump()
    return data


def _type_name(tp: Any) -> str:
    return str(getattr(tp, "__qualname__", None) or tp)


@dataclasses.dataclass(frozen=True)
class _Respond:
    """A scripted response: a value, or ``f(request_data)`` returning one."""

    value: Any
    after: float = 0.0

    def __call__(self, request: Request) -> Any:
        # The script calls callables with the request; keep this one for _resolve.
        return self


class RequestRule:
    """Responses for the requests :meth:`Requests.on` described."""

    def __init__(self, owner: Requests, match: Match, description: str) -> None:
        self._owner = owner
        self._match = match
        self._description = description

    def respond(
        self, *values: Any, after: float = 0.0, times: Times = 1, optional: bool = False
    ) -> RequestRule:
        """Answer matching requests with ``values`` in order (a callable gets the data)."""
        self._owner._add(values, self._match, after, times, optional, self._description)
        return self

    def pause(self, *, times: Times = 1, optional: bool = False) -> RequestRule:
        """Leave matching requests pending: the run stops waiting for them."""
        self._owner._add((PAUSE,), self._match, 0.0, times, optional, self._description)
        return self


class Requests:
    """Agent Framework ``request_info`` answers, scripted on the ``human`` fixture."""

    def __init__(self, human: Any) -> None:
        self.human = human
        self.script = _script_of(human)

    def respond(
        self, *values: Any, after: float = 0.0, times: Times = 1, optional: bool = False
    ) -> Requests:
        """Answer the next requests, in the order they are raised, with ``values``.

        A value is the response itself (``True``, ``"text"``, a dataclass...),
        :data:`PAUSE`, an exception (raised into the test), or a callable
        ``f(data)`` returning one. ``after`` is how long the human takes
        (virtual seconds).
        """
        self._add(values, None, after, times, optional, "")
        return self

    def pause(self, *, times: Times = 1, optional: bool = False) -> Requests:
        """Leave the next request pending."""
        self._add((PAUSE,), None, 0.0, times, optional, "")
        return self

    def on(
        self,
        *,
        request: type | tuple[type, ...] | None = None,
        data: Any = None,
        executor: Any = None,
        occurrence: Any = None,
        flow: Any = None,
        where: Callable[[Request], bool] | None = None,
    ) -> RequestRule:
        """Responses for matching requests.

        ``request`` is the request data's type (``isinstance``); ``data`` is a
        regex (``str`` or compiled) searched in the data rendered as text, a
        mapping whose items the data's fields must have (dataclasses and
        pydantic models are seen as dicts), or a predicate ``f(data)``;
        ``executor`` the id of the executor that asked; ``occurrence`` its
        n-th request; ``where`` a predicate over the whole request.
        """
        conditions: list[tuple[str, Any]] = [("kind", _KIND)]
        described: list[str] = []
        for key, value in (("flow", flow), ("method", executor), ("occurrence", occurrence)):
            if value is not None:
                conditions.append((key, value))
                described.append(f"{'executor' if key == 'method' else key}={value!r}")
        checks: list[Callable[[Request], bool]] = []
        prompt: Any = None
        if request is not None:
            kinds = request if isinstance(request, tuple) else (request,)
            if not kinds or not all(isinstance(k, type) for k in kinds):
                raise FlowsUsageError(
                    f"requests(human).on(request={request!r}): request is the type of the "
                    "request data (a class, or a tuple of classes), e.g. request=ReviewRequest."
                )
            checks.append(lambda r: isinstance(r.data.get("request"), kinds))
            names = ", ".join(k.__qualname__ for k in kinds)
            described.insert(0, f"request={names if len(kinds) == 1 else f'({names})'}")
        if isinstance(data, str | re.Pattern):
            prompt = data
            described.append(f"data={getattr(data, 'pattern', data)!r}")
        elif isinstance(data, Mapping):
            conditions.append(("data", dict(data)))
            described.append(f"data={dict(data)!r}")
        elif callable(data):
            predicate = data
            checks.append(lambda r: bool(predicate(r.data.get("request"))))
            described.append(f"data=<{getattr(data, '__name__', 'predicate')}>")
        elif data is not None:
            raise FlowsUsageError(
                f"requests(human).on(data={data!r}): data is a regex (str), a mapping of "
                "fields the request data must have, or a predicate f(data)."
            )
        if where is not None:
            checks.append(where)
            described.append(f"where=<{getattr(where, '__name__', 'predicate')}>")
        combined = None
        if checks:

            def combined(r: Request) -> bool:
                return all(check(r) for check in checks)

        if len(conditions) == 1 and not checks and prompt is None:
            raise FlowsUsageError(
                "requests(human).on() needs at least one condition (request=, data=, "
                "executor=, occurrence=, flow= or where=); for answers in request order use "
                "requests(human).respond(...)."
            )
        match = Match(caller=tuple(conditions), prompt=prompt, where=combined, prompt_key="data")
        return RequestRule(self, match, ", ".join(described))

    def _add(
        self,
        values: Sequence[Any],
        match: Match | None,
        after: float,
        times: Times,
        optional: bool,
        description: str,
    ) -> None:
        if not values:
            raise FlowsUsageError(
                "respond() needs at least one value: requests(human).respond(True), "
                '.respond("looks good"), .respond(Decision(approved=True)).'
            )
        after = check_duration("respond(after=...)", after)
        prefix = "requests(human)" if match is None else f"requests(human).on({description})"
        for value in values:
            verb = "pause()" if is_pause(value) else f"respond({_label(value)})"
            extra = "" if times == 1 else f", times={times!r}"
            reply = value if is_pause(value) else _Respond(value, float(after))
            self.script.add(
                reply,
                match=match,
                times=times,
                optional=optional,
                label=f"{prefix}.{verb}{extra}",
            )


def _label(value: Any) -> str:
    if callable(value) and not isinstance(value, type):
        return f"<{getattr(value, '__name__', 'callable')}>"
    return short(value)


def requests(human: Any) -> Requests:
    """Script answers to Agent Framework ``request_info`` on the ``human`` fixture."""
    return Requests(human)


# -- answering (called by the adapter) ------------------------------------------------------


def _suggestion(request: Request) -> str:
    caller = request.caller
    conditions = [f"request={caller['request']}"]
    if caller.get("method"):
        conditions.insert(0, f'executor="{caller["method"]}"')
    if caller.get("occurrence", 1) > 1:
        conditions.append(f"occurrence={caller['occurrence']}")
    value = {"bool": "True", "str": '"..."', "int": "0", "float": "0.0"}.get(
        caller["response"], f"{caller['response']}(...)"
    )
    return f"requests(human).on({', '.join(conditions)}).respond({value})"


def _unscripted(error: UnscriptedRequest, request: Request) -> UnscriptedRequest:
    caller = request.caller
    lines = [
        f"pytest-flows: unscripted request_info #{request.number} from executor "
        f"{caller.get('method')!r} of workflow {caller.get('flow')!r}: no scripted answer "
        "matches it.",
        f"  request: {request.prompt}",
        f"  expects: {caller['response']}",
        "Add this line to the test to answer it (or .pause() to leave it pending):",
        f"    {_suggestion(request)}",
    ]
    # keep the script's own view of what was waiting, for context
    waiting = [line for line in str(error).splitlines() if line.startswith("    ")][:-1]
    if waiting:
        lines[4:4] = ["  waiting answers, none matches:", *waiting]
    replaced = UnscriptedRequest("\n".join(lines), request)
    return replaced


def answer_pending(human: Any, workflow: Any, pending: Sequence[Any], clock: Any) -> dict[str, Any]:
    """Ask ``human``'s script for each pending request; the responses to send."""
    script = _script_of(human)
    responses: dict[str, Any] = {}
    for item in pending:
        data = item.data
        caller: dict[str, Any] = {
            "flow": workflow.name or "workflow",
            "method": item.executor,
            "kind": _KIND,
        }
        caller["occurrence"] = occurrence(script, caller)
        caller["request"] = _type_name(item.request_type or type(data))
        caller["response"] = _type_name(item.response_type)
        caller["data"] = _view(data)
        request = Request(
            caller=caller,
            prompt=render(data, limit=10_000),
            purpose=_KIND,
            data={
                "request": data,
                "request_id": item.request_id,
                "request_type": item.request_type,
                "response_type": item.response_type,
            },
        )
        try:
            exchange = script.take(request)
        except UnscriptedRequest as error:
            raise _unscripted(error, request) from None
        value = exchange.resolve()
        if is_pause(value):
            exchange.reply = PAUSE
            continue
        after = 0.0
        if isinstance(value, _Respond):
            after = value.after
            value = value.value
            if callable(value) and not isinstance(value, type):
                value = value(data)
        else:  # a text answer scripted on the human (human.answer("..."))
            after = float(getattr(value, "after", 0.0) or 0.0)
            value = getattr(value, "text", value)
        if isinstance(value, BaseException):
            exchange.error = value
            raise value
        _check_type(value, item, exchange)
        if after:
            clock.advance(after)
        exchange.reply = value
        responses[item.request_id] = value
    return responses


def _check_type(value: Any, item: Any, exchange: Any) -> None:
    expected = item.response_type
    if isinstance(value, str) and isinstance(expected, type) and not issubclass(expected, str):
        label = exchange.entry.label if exchange.entry is not None else "the script"
        raise ScriptReplyError(
            f"pytest-flows: human request #{exchange.request.number} (request_info from "
            f"{item.executor!r}) expects {_type_name(expected)}, but {label} answers text "
            f"{value!r}. Script a typed answer: "
            f"requests(human).on(executor={item.executor!r}).respond(...)."
        )


__all__ += ["ScriptError", "answer_pending"]
