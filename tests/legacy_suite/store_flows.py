"""Flows the flow_store and property tests run (real crewai flows, nothing faked but storage)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from crewai.flow.persistence import SQLiteFlowPersistence, persist
from crewai.state.checkpoint_config import CheckpointConfig
from pydantic import BaseModel, ConfigDict

EVERY_STEP = CheckpointConfig(on_events=["method_execution_finished"])


class CounterState(BaseModel):
    counter: int = 0


@persist()  # bound at import: crewai's default_flow_persistence(), i.e. our router
class CounterFlow(Flow[CounterState]):
    """The counter of seed 003: each kickoff adds one."""

    @start()
    def step(self) -> int:
        self.state.counter += 1
        return self.state.counter


class MethodPersistFlow(Flow[CounterState]):
    """Only one method is persisted: crewai leaves flow.persistence unset."""

    @start()
    @persist()
    def step(self) -> int:
        self.state.counter += 1
        return self.state.counter

    @listen(step)
    def report(self, value: int) -> str:
        return f"counter={value}"


@persist(SQLiteFlowPersistence())  # a real database file (in the plugin's temp data dir)
class ExplicitSqliteFlow(Flow[CounterState]):
    """Bound to a real SQLite file at import; flow_store keeps it in memory."""

    @start()
    def step(self) -> int:
        self.state.counter += 1
        return self.state.counter


@persist()
class DictFlow(Flow[dict[str, Any]]):
    """Unstructured state: whatever the methods put in it is what gets saved."""

    @start()
    def step(self) -> Any:
        kind = self.state.get("kind", "plain")
        if kind == "datetime":
            self.state["when"] = dt.datetime(2025, 1, 2, 3, 4, 5)
        elif kind == "tuple_keys":
            self.state["pairs"] = {(1, 2): "a"}
        elif kind == "cycle":
            loop: list[Any] = []
            loop.append(loop)
            self.state["loop"] = loop
        self.state["count"] = self.state.get("count", 0) + 1
        return self.state["count"]


class Money:
    """Not JSON-serializable, not a pydantic type."""

    def __init__(self, cents: int) -> None:
        self.cents = cents

    def __repr__(self) -> str:
        return f"Money({self.cents})"


class WalletState(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    id: str = ""
    balance: Any = None


class WalletFlow(Flow[WalletState]):
    """Puts an arbitrary object in its state: checkpoints cannot serialize it."""

    @start()
    def fund(self) -> int:
        self.state.balance = Money(500)
        return 500


@persist()
class WalletPersistFlow(Flow[WalletState]):
    """The same object under @persist: SQLite stores its str(), a resume cannot validate it."""

    @start()
    def fund(self) -> int:
        self.state.balance = Money(500)
        return 500


class StepsState(BaseModel):
    total: int = 0
    log: list[str] = []


class StepsFlow(Flow[StepsState]):
    """Three steps; checkpointed after each when given checkpoint=EVERY_STEP."""

    @start()
    def first(self) -> str:
        self.state.total += 1
        self.state.log.append("first")
        return "A"

    @listen(first)
    def second(self, _: str) -> str:
        self.state.total += 10
        self.state.log.append("second")
        return "B"

    @listen(second)
    def third(self, _: str) -> str:
        self.state.total += 100
        self.state.log.append("third")
        return f"total={self.state.total}"


class PendingProvider:
    """A human who answers later: the flow pauses and persists pending feedback."""

    def request_feedback(self, context: Any, flow: Any) -> str:
        raise HumanFeedbackPending(context=context)


class ReviewState(BaseModel):
    draft: str = ""
    verdict: str = ""


@persist()
class ReviewFlow(Flow[ReviewState]):
    @start()
    @human_feedback(message="Review the draft:", provider=PendingProvider())
    def write(self) -> str:
        self.state.draft = "hello"
        return self.state.draft

    @listen(write)
    def publish(self, result: Any) -> str:
        self.state.verdict = str(getattr(result, "feedback", result))
        return f"published: {self.state.verdict}"
