"""``conversation``: drive a conversational crewai Flow turn by turn, with a transcript.

A :class:`ChatSession` wraps one session (one ``session_id``) of a
conversational flow. Every turn - ``send`` (``handle_turn``), ``stream``
(``stream_turn``) or a line of ``chat()`` - becomes a :class:`Turn`: what the
user said, the route and who chose it, the handler that ran, the assistant's
reply, the state after the turn. Turns are recognised from crewai's own
``conversation_turn_*`` events, so a turn started any way is recorded.

Who chose the route (``Turn.routed_by``):

* ``code`` - the flow's own ``route_turn`` returned it;
* ``llm`` - the LLM router chose a valid route;
* ``fallback`` - the LLM router failed or answered a route that does not
  exist, and crewai fell back (``fallback_intent``, else ``default_intent``);
* ``intent`` - the turn's pre-classified intent (``default_intents`` /
  ``intents=`` with an intent LLM);
* ``default`` - nothing chose: crewai's default route (``converse``, or the
  router's ``default_intent`` when it has no LLM).
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crewai.flow.flow import Flow

from pytest_flows.adapters import FlowsUsageError
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai._seams import SEAMS
from pytest_flows.crewai._transcript import Frame, Transcript, Turn

try:
    from crewai.events.types.flow_events import (
        ConversationMessageAddedEvent,
        ConversationRouteSelectedEvent,
        ConversationTurnCompletedEvent,
        ConversationTurnFailedEvent,
        ConversationTurnStartedEvent,
        MethodExecutionStartedEvent,
    )
    from crewai.flow.conversational_mixin import _ConversationalMixin
except ImportError as missing:  # crewai 1.14.x: conversational flows are experimental there
    from importlib.metadata import version

    raise FlowsUsageError(
        "the conversation fixture drives conversational flows, which need crewai >= 1.15 "
        f"(crewai.flow.conversational); crewai {version('crewai')} is installed"
    ) from missing
from pytest_flows.adapters import code, short

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = ["ChatSession", "Conversation", "Frame", "Transcript", "Turn"]

_ROUTE_TURN = SEAMS["crewai.flow.conversational_mixin:_ConversationalMixin.route_turn"]

_BUILTIN_ROUTER_STEP = "route_conversation"


class ChatSession:
    """One conversation (one ``session_id``) with a conversational flow."""

    def __init__(self, owner: Conversation, build: Callable[[], Any], session_id: str) -> None:
        self._owner = owner
        self._build = build
        self.session_id = session_id
        self.flow: Any = build()
        definition = getattr(self.flow, "_definition", None)
        #: The flow's name as crewai reports it (the declaration's ``name:``).
        self.name = str(getattr(definition, "name", None) or type(self.flow).__name__)
        self.transcript = Transcript()
        self._current: Turn | None = None
        self._route_turn: tuple[Any, bool] | None = None
        self._llm_mark = 0
        self._human_mark = 0
        owner._register(self)

    # -- scripting the LLM the natural way -------------------------------------------
    def route_to(self, label: str, *, times: int = 1) -> ChatSession:
        """The LLM router picks ``label`` for the next turn(s) of this flow."""
        field_name = _intent_field(self.flow)
        self._owner.llm.on(purpose="router", flow=self.name).reply({field_name: label}, times=times)
        return self

    def answer_with(self, *replies: str) -> ChatSession:
        """The converse LLM answers the next ``converse`` turn(s) with ``replies``."""
        self._owner.llm.on(purpose="converse", flow=self.name).reply(*replies)
        return self

    def classify_as(self, label: str, *, times: int = 1) -> ChatSession:
        """The intent LLM (``default_intents`` / ``intents=``) classifies the next turn(s)
        as ``label``."""
        self._owner.llm.on(purpose="intent", flow=self.name).reply({"outcome": label}, times=times)
        return self

    def router_fails(self, error: BaseException | None = None) -> ChatSession:
        """The LLM router raises on the next turn (crewai then falls back)."""
        from pytest_flows.adapters import ProviderError

        failure = error or ProviderError("router unavailable (scripted)", status_code=503)
        self._owner.llm.on(purpose="router", flow=self.name).reply(failure)
        return self

    # -- turns -------------------------------------------------------------------------
    def _script(self, route: str | None, answer: str | None) -> None:
        if route is not None:
            self.route_to(route)
        if answer is not None:
            self.answer_with(answer)

    def send(
        self,
        message: str,
        *,
        route: str | None = None,
        answer: str | None = None,
        **turn_kwargs: Any,
    ) -> Turn:
        """One ``handle_turn``; ``route=``/``answer=`` script the router / converse LLM first."""
        self._script(route, answer)
        before = len(self.transcript.turns)
        # A failing turn raises here, recorded in the transcript with its error.
        result = self.flow.handle_turn(message, session_id=self.session_id, **turn_kwargs)
        turn = self._last_turn(before, "handle_turn")
        turn.result = result
        return turn

    def stream(
        self,
        message: str,
        *,
        route: str | None = None,
        answer: str | None = None,
        **turn_kwargs: Any,
    ) -> Turn:
        """One ``stream_turn``: the turn with its ``frames`` in order and its ``result``."""
        self._script(route, answer)
        before = len(self.transcript.turns)
        stream = self.flow.stream_turn(message, session_id=self.session_id, **turn_kwargs)
        frames: list[Frame] = []
        with stream:
            for frame in stream.events:
                frames.append(Frame(str(frame.channel), str(frame.type), frame.content))
        turn = self._last_turn(before, "stream_turn")
        turn.frames = frames
        turn.result = stream.result
        return turn

    def chat(self, lines: Iterable[str], *, eof: bool = True) -> list[str]:
        """Drive ``flow.chat()`` with ``lines`` typed by the user; returns what it printed.

        After the last line the user closes the terminal (EOF) unless ``eof``
        is False, in which case the lines must end with ``exit`` or ``quit``.
        """
        pending = list(lines)
        printed: list[str] = []

        def read(prompt: str) -> str:
            if pending:
                return pending.pop(0)
            if eof:
                raise EOFError
            raise FlowsUsageError(
                "chat(lines, eof=False): the scripted lines ran out before an exit command; "
                'end them with "exit" or "quit", or leave eof=True.'
            )

        self.flow.chat(session_id=self.session_id, input_fn=read, output_fn=printed.append)
        self.transcript.note("chat closed")
        return printed

    def resume(self) -> ChatSession:
        """Continue this session in a fresh flow instance (state restored by ``@persist``)."""
        self._owner._unregister(self)
        self.flow = self._build()
        self._owner._register(self)
        self.transcript.note(f"resumed in a fresh {self.name}")
        return self

    def finish(self) -> None:
        """``finalize_session_traces()``: the session's trace gets its one flow finish."""
        self.flow.finalize_session_traces()
        self.transcript.note("finished")

    @property
    def state(self) -> Any:
        return self.flow.state

    @property
    def turns(self) -> list[Turn]:
        return self.transcript.turns

    def _last_turn(self, before: int, api: str) -> Turn:
        turns = self.transcript.turns
        if len(turns) <= before:
            raise FlowsUsageError(
                f"{api}() on {self.name} recorded no turn: is the flow conversational "
                "(@ConversationConfig or conversational = True)?"
            )
        return turns[-1]

    # -- events (from Conversation's sink) ---------------------------------------------
    def _turn_started(self) -> None:
        self._current = Turn(number=len(self.transcript.turns) + 1, user="")
        self._route_turn = None
        self._llm_mark = len(self._owner.llm.calls)
        human = self._owner.human
        self._human_mark = len(human.requests) if human is not None else 0

    def _event(self, event: Any) -> None:
        turn = self._current
        if turn is None:
            return
        if isinstance(event, ConversationMessageAddedEvent):
            if event.role == "user" and not turn.user:
                turn.user = str(event.content)
            elif event.role == "assistant":
                turn.replies.append(str(event.content))
        elif isinstance(event, ConversationRouteSelectedEvent):
            turn.route = event.route
        elif isinstance(event, MethodExecutionStartedEvent):
            name = str(event.method_name)
            if turn.route is not None and name != _BUILTIN_ROUTER_STEP:
                turn.handlers.append(name)

    def _route_turn_returned(self, result: Any, user_defined: bool) -> None:
        self._route_turn = (result, user_defined)

    def _turn_ended(self, error: BaseException | None) -> None:
        turn = self._current
        if turn is None:
            return
        self._current = None
        turn.error = error
        turn.llm_calls = self._owner.llm.calls[self._llm_mark :]
        human = self._owner.human
        if human is not None:
            turn.asked = [
                (r.prompt, r.reply)
                for r in human.requests[self._human_mark :]
                if r.caller.get("kind") == "ask"
            ]
        turn.routed_by, turn.why = self._who_routed(turn)
        state = self.flow.state
        turn.state = (
            state.model_copy(deep=True) if hasattr(state, "model_copy") else copy.deepcopy(state)
        )
        self.transcript.entries.append(turn)

    def _who_routed(self, turn: Turn) -> tuple[str, str]:
        returned, user_defined = self._route_turn or (None, False)
        router = turn.router_call
        if returned:
            if router is not None:
                if router.error is not None:
                    return "fallback", f"router failed: {short(router.error, 50)}"
                chosen = _intent_of(router.reply, _intent_field(self.flow))
                if chosen != returned:
                    return "fallback", f"router said {code(chosen)}"
                return "llm", ""
            return ("code", "") if user_defined else ("default", "")
        if any(c.purpose == "intent" for c in turn.llm_calls):
            return "intent", ""
        return "default", ""


def _intent_field(flow: Any) -> str:
    config = getattr(flow, "_conversation_config", None)
    router = getattr(config, "router", None)
    return str(getattr(router, "intent_field", None) or "intent")


def _intent_of(reply: Any, field_name: str) -> Any:
    if isinstance(reply, dict):
        return reply.get(field_name)
    return getattr(reply, field_name, reply)


class Conversation:
    """The ``conversation`` fixture: start sessions on conversational flows."""

    def __init__(self, session: FlowsSession, llm: Any) -> None:
        self.session = session
        self.llm = llm
        self.sessions: list[ChatSession] = []
        self._by_flow: dict[int, ChatSession] = {}
        self._by_id: dict[str, ChatSession] = {}
        self._watched: set[type] = set()
        self._unwatch_all = contextlib.ExitStack()

    @property
    def human(self) -> Any:
        """The test's ``human`` fake, if it uses one (``ask()`` inside handlers)."""
        return self.session.bound("human")

    def start(self, target: Any, *, session_id: str | None = None) -> ChatSession:
        """A new session on ``target``: a conversational Flow class, an instance, or a
        declaration (YAML/JSON text, a dict, or a path to a file)."""
        build = self._builder(target)
        sid = session_id or str(uuid.uuid4())
        if sid in self._by_id:
            raise FlowsUsageError(
                f"conversation.start(..., session_id={sid!r}): that session is already open "
                "in this test; continue it with its ChatSession, or .resume() it."
            )
        chat = ChatSession(self, build, sid)
        self.sessions.append(chat)
        return chat

    def _builder(self, target: Any) -> Callable[[], Any]:
        if isinstance(target, type) and issubclass(target, Flow):
            return target
        if isinstance(target, Flow):
            first = [target]
            cls = type(target)

            def again() -> Any:
                return first.pop() if first else cls()

            return again
        if isinstance(target, Path) or (
            isinstance(target, str)
            and target.endswith((".yaml", ".yml", ".json"))
            and "\n" not in target
        ):
            path = Path(target)
            return lambda: Flow.from_declaration(path=path)
        if isinstance(target, str | dict):
            return lambda: Flow.from_declaration(contents=target)
        raise FlowsUsageError(
            f"conversation.start({target!r}): pass a conversational Flow class or instance, "
            "or a declaration (YAML/JSON text, a dict, or a path)."
        )

    # -- routing events to sessions -------------------------------------------------
    def _register(self, chat: ChatSession) -> None:
        self._by_flow[id(chat.flow)] = chat
        self._by_id[chat.session_id] = chat
        self._watch(type(chat.flow))

    def _watch(self, cls: type) -> None:
        """Record what ``cls.route_turn`` returns, and whether the flow's own code decided.

        A class attribute wraps whichever ``route_turn`` the class resolves to
        (its own override or crewai's default); undone at the end of the test.
        """
        if cls in self._watched:
            return
        default = _ConversationalMixin.__dict__["route_turn"]
        resolved = cls.route_turn  # type: ignore[attr-defined]
        owner = self

        def route_turn(flow: Any, context: dict[str, Any]) -> Any:
            result = resolved(flow, context)
            owner._route_turn_returned(flow, result, resolved is not default)
            return result

        self._unwatch_all.enter_context(_ROUTE_TURN.shadow(cls, route_turn))
        self._watched.add(cls)

    def _unwatch(self) -> None:
        self._unwatch_all.close()
        self._watched.clear()

    def _unregister(self, chat: ChatSession) -> None:
        self._by_flow.pop(id(chat.flow), None)

    def _sink(self, source: Any, event: Any) -> None:
        chat = self._by_flow.get(id(source))
        if chat is None:
            return
        if isinstance(event, ConversationTurnStartedEvent):
            chat._turn_started()
        elif isinstance(event, ConversationTurnCompletedEvent):
            chat._turn_ended(None)
        elif isinstance(event, ConversationTurnFailedEvent):
            chat._turn_ended(event.error)
        else:
            chat._event(event)

    def _route_turn_returned(self, flow: Any, result: Any, user_defined: bool) -> None:
        chat = self._by_flow.get(id(flow))
        if chat is not None:
            chat._route_turn_returned(result, user_defined)


@contextlib.contextmanager
def install(conversation: Conversation) -> Iterator[None]:
    """Watch turns for ``conversation`` until exit."""
    with callers.stream_sink(conversation._sink), contextlib.ExitStack() as stack:
        stack.callback(conversation._unwatch)
        with callers.tracking():
            yield
