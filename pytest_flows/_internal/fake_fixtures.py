"""The fakes' fixtures: ``fake_llm``, ``fake_crews``, ``fake_tools``, ``human``,
``conversation``, ``flow_store``, ``flow_memory``.

Each fixture builds its fake, binds it in the test's harness (every active
framework adapter installs it) and, at teardown, fails the test for scripted
replies nobody used. Implementations are imported inside the fixtures only:
the plugin imports this module at start-up, and a run that uses no fake must
pay for neither a framework nor pydantic.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.stash import CALL_RAISED_KEY

if TYPE_CHECKING:
    from pytest_flows._internal.fakes.human_script import ScriptedHuman
    from pytest_flows._internal.fakes.llm_script import LLMScript
    from pytest_flows._internal.fakes.script import Script
    from pytest_flows._internal.fakes.tool_script import FakeTools
    from pytest_flows._internal.state.store import FlowStore

__all__ = [
    "conversation",
    "fake_crews",
    "fake_llm",
    "fake_tools",
    "flow_memory",
    "flow_store",
    "human",
]


def session_of(request: pytest.FixtureRequest) -> Any:
    from pytest_flows._internal.session import session_of

    return session_of(request)


def _require(framework: str, fixture: str) -> None:
    if importlib.util.find_spec(framework) is None:
        raise FlowsUsageError(
            f"the {fixture} fixture needs {framework}: pip install 'pytest-flows[{framework}]'."
        )


def _test_failed(request: pytest.FixtureRequest) -> bool:
    # A test that already failed shows its own error; listing the replies it
    # never got to would only bury it. Whether the test *raised* is what
    # counts: a script error the test caught itself (pytest.raises) is not a
    # failure, and the replies it left unused are still reported. No call
    # phase at all (set-up failed) counts as failed.
    return bool(request.node.stash.get(CALL_RAISED_KEY, True))


def _verify(script: Script, request: pytest.FixtureRequest) -> None:
    __tracebackhide__ = True
    if not _test_failed(request):
        script.verify()


def _bound(request: pytest.FixtureRequest, kind: str, fake: Any) -> Iterator[Any]:
    """Bind ``fake`` in the test's harness for the fixture's life; check its script after."""
    session_of(request).bind(kind, fake)
    yield fake
    _verify(fake.script, request)


@pytest.fixture
def fake_llm(request: pytest.FixtureRequest) -> Iterator[LLMScript]:
    """A scripted LLM every LLM of the flow resolves to: ``fake_llm.reply("...")``.

    The same :class:`~pytest_flows._internal.fakes.llm_script.LLMScript` whatever the
    framework: each adapter answers its framework's LLM calls from it.
    """
    from pytest_flows._internal.fakes.llm_script import LLMScript

    yield from _bound(request, "llm", LLMScript())


@pytest.fixture
def fake_crews(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Scripted crew results: ``fake_crews.on(crew="research").reply("...")``."""
    from pytest_flows._internal.fakes.crew_script import FakeCrews

    yield from _bound(request, "crews", FakeCrews(session_of(request)))


@pytest.fixture
def fake_tools(request: pytest.FixtureRequest) -> Iterator[FakeTools]:
    """Scripted tool results: ``fake_tools.on("search").reply("3 results")``."""
    from pytest_flows._internal.fakes.tool_script import FakeTools

    yield from _bound(request, "tools", FakeTools(session_of(request)))


@pytest.fixture
def human(request: pytest.FixtureRequest) -> Iterator[ScriptedHuman]:
    """Scripted human answers: ``human.on(method="review").answer("approved")``."""
    from pytest_flows._internal.fakes.human_script import ScriptedHuman

    yield from _bound(request, "human", ScriptedHuman(session_of(request)))


@pytest.fixture
def conversation(request: pytest.FixtureRequest, fake_llm: Any) -> Iterator[Any]:
    """Turn-by-turn sessions on conversational flows: ``conversation.start(SupportFlow)``."""
    session = session_of(request)
    _require("crewai", "conversation")
    from pytest_flows.crewai._conversation import Conversation, install

    chats = Conversation(session, fake_llm)
    with install(chats):
        yield chats


@pytest.fixture
def flow_store(request: pytest.FixtureRequest) -> Iterator[FlowStore]:
    """An in-memory store behind ``@persist``, pending feedback and checkpoints.

    Every save goes through the framework's production codec; inspect it with
    ``flow_store.history(run.state.id)``, ``flow_store.checkpoints()``, ...
    """
    from pytest_flows._internal.state.store import FlowStore

    session = session_of(request)
    store = FlowStore(session)
    session.bind("store", store)
    yield store
    store.verify()


@pytest.fixture
def flow_memory(request: pytest.FixtureRequest) -> Iterator[Any]:
    """What the test's crewai flows remembered, per scope: ``flow_memory.contents("/flow/x")``.

    Every ``Memory`` that chose no storage keeps its records in the test's in-memory
    store (flows test or not, with or without this fixture); asking for the fixture
    also gives every ``Memory`` that chose no embedder a deterministic fake one.
    """
    session = session_of(request)
    _require("crewai", "flow_memory")
    from pytest_flows.crewai._memory import FlowMemory, current_store, install

    session.ensure("crewai")
    with install(FlowMemory(current_store())) as memory:
        yield memory
