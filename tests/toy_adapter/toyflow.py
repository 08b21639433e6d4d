"""toyflow: a tiny plain-Python flow framework, standing in for a third framework.

It knows nothing of pytest-flows. Like a real framework it has extension
points a deployment configures (``config``): the model that answers
``Flow.llm``, who answers ``Flow.ask``, the persistence that keeps a flow's
state after each step, and how a tool runs. Its adapter
(``toyflow_adapter.py``) plugs the harness's fakes into exactly those.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Flow", "Paused", "config", "step"]


class NoModelConfigured(RuntimeError):
    pass


class _InMemoryPersistence:
    """The framework's own persistence: JSON text per state id."""

    def __init__(self) -> None:
        self.saved: dict[str, str] = {}

    def save(self, state_id: str, step: str, state: dict[str, Any]) -> None:
        self.saved[state_id] = json.dumps(state)

    def load(self, state_id: str) -> dict[str, Any] | None:
        raw = self.saved.get(state_id)
        return None if raw is None else dict(json.loads(raw))


def _no_model(flow: Flow, prompt: str, tools: list[str]) -> Any:
    raise NoModelConfigured("toyflow: configure a model (toyflow.config.llm)")


def _console_human(flow: Flow, question: str) -> str:
    return input(question)


def _run_tool(flow: Flow, name: str, function: Callable[..., Any], args: dict[str, Any]) -> Any:
    return function(**args)


def _run_crew(flow: Flow, crew: Crew, inputs: dict[str, Any]) -> str:
    return crew.work(inputs)


@dataclass
class Config:
    llm: Callable[[Flow, str, list[str]], Any] = _no_model
    human: Callable[[Flow, str], str] = _console_human
    persistence: Any = field(default_factory=_InMemoryPersistence)
    tool_runner: Callable[[Flow, str, Callable[..., Any], dict[str, Any]], Any] = _run_tool
    crew_runner: Callable[[Flow, Crew, dict[str, Any]], str] = _run_crew


@dataclass
class Crew:
    """A team of agents a step hands a whole job to (its real work: ``work(inputs)``)."""

    name: str
    roles: tuple[str, ...]
    work: Callable[[dict[str, Any]], str]


config = Config()


class Paused(Exception):
    """Raised by a human hook that will answer later: the flow stops, resumable."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


@dataclass
class PendingQuestion:
    """What ``kickoff`` returns when a step waits for a human."""

    step: str
    question: str


def step(function: Callable[..., Any]) -> Callable[..., Any]:
    function._toy_step = True  # type: ignore[attr-defined]
    return function


Listener = Callable[[str, str, Any], None]


class Flow:
    """Runs its ``@step`` methods in definition order, persisting after each."""

    tools: dict[str, Callable[..., Any]] = {}

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"id": str(uuid.uuid4()), "done": []}
        self.current = ""
        self.outputs: list[Any] = []
        self._answers: dict[str, str] = {}
        self._listener: Listener = lambda *_: None

    @classmethod
    def steps(cls) -> list[str]:
        return [name for name, f in vars(cls).items() if getattr(f, "_toy_step", False)]

    def kickoff(
        self, inputs: dict[str, Any] | None = None, listener: Listener | None = None
    ) -> Any:
        inputs = dict(inputs or {})
        self._listener = listener or self._listener
        if "id" in inputs:
            restored = config.persistence.load(inputs["id"])
            if restored is not None:
                self.state = restored
        self.state.update({k: v for k, v in inputs.items() if k != "id"})
        return self._continue()

    def resume(self, answer: str) -> Any:
        self._answers[self.current] = answer
        return self._continue()

    def _continue(self) -> Any:
        output: Any = self.state.get("output")  # a restored flow's last step output
        for name in self.steps():
            if name in self.state["done"]:
                continue
            self.current = name
            self._listener("started", name, None)
            try:
                output = getattr(self, name)()
            except Paused as paused:
                self._listener("paused", name, paused.question)
                return PendingQuestion(name, paused.question)
            self.state["done"].append(name)
            self.state["output"] = output
            self.outputs.append(output)
            config.persistence.save(self.state["id"], name, self.state)
            self._listener("finished", name, output)
        return output

    # -- what steps call --------------------------------------------------------
    def llm(self, prompt: str, *, tools: tuple[str, ...] = ()) -> Any:
        """Text, or ``{"tool": name, "args": {...}}`` when the model calls a tool."""
        return config.llm(self, prompt, list(tools))

    def ask(self, question: str) -> str:
        if self.current in self._answers:
            return self._answers.pop(self.current)
        return config.human(self, question)

    def tool(self, name: str, **args: Any) -> Any:
        return config.tool_runner(self, name, self.tools[name], args)

    def kickoff_crew(self, crew: Crew, **inputs: Any) -> str:
        return config.crew_runner(self, crew, inputs)
