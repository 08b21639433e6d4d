"""Correct flows and deliberately broken twins for the property-helper tests.

Each broken flow plants one bug a property helper must find:

* ``UnsafePipeline`` repeats work after a resume (not crash-safe);
* ``BusinessKeyOrder`` re-keys its state to a business id, so a fork writes
  into the source's history;
* ``TagSetFlow`` keeps a ``set`` in a dict state, which comes back from the
  store as a ``list``, so a fork does not start from the source's snapshot;
* ``CachedReport`` keeps data in an instance attribute, which a checkpoint
  does not hold.
"""

from __future__ import annotations

from typing import Any

from crewai.flow.flow import Flow, and_, listen, start
from crewai.flow.persistence import persist
from crewai.state.checkpoint_config import CheckpointConfig
from pydantic import BaseModel


class PipelineState(BaseModel):
    items: list[int] = []
    doubled: list[int] = []
    total: int = 0
    done: list[str] = []


@persist()
class SafePipeline(Flow[PipelineState]):
    """Each step skips work the state says is done: safe to resume after any save."""

    @start()
    def fetch(self) -> int:
        if "fetch" not in self.state.done:
            self.state.items = [1, 2, 3]
            self.state.done.append("fetch")
        return len(self.state.items)

    @listen(fetch)
    def double(self, _: int) -> list[int]:
        if "double" not in self.state.done:
            self.state.doubled = [2 * i for i in self.state.items]
            self.state.done.append("double")
        return self.state.doubled

    @listen(double)
    def add(self, _: list[int]) -> int:
        if "add" not in self.state.done:
            self.state.total += sum(self.state.doubled)
            self.state.done.append("add")
        return self.state.total


@persist()
class UnsafePipeline(Flow[PipelineState]):
    """Planted bug: ``fetch`` appends again when a resume re-runs it."""

    @start()
    def fetch(self) -> int:
        self.state.items.extend([1, 2, 3])
        return len(self.state.items)

    @listen(fetch)
    def double(self, _: int) -> list[int]:
        self.state.doubled = [2 * i for i in self.state.items]
        return self.state.doubled

    @listen(double)
    def add(self, _: list[int]) -> int:
        self.state.total = sum(self.state.doubled)
        return self.state.total


class ParallelState(BaseModel):
    left: int = 0
    right: int = 0
    joined: str = ""


@persist()
class ParallelPipeline(Flow[ParallelState]):
    """Two starts the scheduler may order either way, joined by and_."""

    @start()
    def left_step(self) -> int:
        self.state.left = 1
        return 1

    @start()
    def right_step(self) -> int:
        self.state.right = 2
        return 2

    @listen(and_(left_step, right_step))
    def join(self) -> str:
        self.state.joined = f"{self.state.left}+{self.state.right}"
        return self.state.joined


@persist()
class OrderFlow(Flow[dict[str, Any]]):
    """Keeps the business key in a field; the state id stays the runtime's."""

    @start()
    def take(self) -> int:
        self.state["order"] = self.state.get("order", "order-1")
        self.state["count"] = self.state.get("count", 0) + 1
        return int(self.state["count"])


@persist()
class BusinessKeyOrder(Flow[dict[str, Any]]):
    """Planted bug: re-keys the state to the order id, so forks write into the source."""

    @start()
    def take(self) -> int:
        self.state["id"] = f"order-{self.state.get('order', 1)}"
        self.state["count"] = self.state.get("count", 0) + 1
        return int(self.state["count"])


class TagState(BaseModel):
    tags: set[str] = set()
    rounds: int = 0


@persist()
class TagModelFlow(Flow[TagState]):
    """A set in a pydantic state validates back from JSON: forks start where the source was."""

    @start()
    def tag(self) -> int:
        self.state.rounds += 1
        self.state.tags.add(f"round-{self.state.rounds}")
        return len(self.state.tags)


@persist()
class TagSetFlow(Flow[dict[str, Any]]):
    """Planted bug: a set in a dict state is stored as a JSON list."""

    @start()
    def tag(self) -> int:
        self.state["rounds"] = self.state.get("rounds", 0) + 1
        tags = self.state.setdefault("tags", set())
        tags.add(f"round-{self.state['rounds']}")
        return len(tags)


class ReportState(BaseModel):
    rows: list[int] = []
    total: int = 0
    title: str = ""


def every_step() -> CheckpointConfig:
    return CheckpointConfig(on_events=["method_execution_finished"])


class Report(Flow[ReportState]):
    """Everything the later steps need is in the state."""

    @start()
    def load(self) -> int:
        self.state.rows = [3, 4, 5]
        return len(self.state.rows)

    @listen(load)
    def summarize(self, _: int) -> int:
        self.state.total = sum(self.state.rows)
        return self.state.total

    @listen(summarize)
    def title_it(self, _: int) -> str:
        # From the state, not the argument: after a checkpoint restore crewai
        # 1.15.30 hands this listener None instead of summarize's output.
        self.state.title = f"{len(self.state.rows)} rows, total {self.state.total}"
        return self.state.title


class CachedReport(Flow[ReportState]):
    """Planted bug: the rows live in an instance attribute a checkpoint does not hold."""

    @start()
    def load(self) -> int:
        self.rows_cache = [3, 4, 5]
        return len(self.rows_cache)

    @listen(load)
    def summarize(self, _: int) -> int:
        self.state.total = sum(getattr(self, "rows_cache", []))
        return self.state.total

    @listen(summarize)
    def title_it(self, _: int) -> str:
        rows = getattr(self, "rows_cache", [])
        self.state.title = f"{len(rows)} rows, total {self.state.total}"
        return self.state.title


class TotalsState(BaseModel):
    by_id: dict[int, int] = {}


@persist()
class IntKeyedTotals(Flow[dict[str, Any]]):
    """Keeps int keys in a dict state: the store's JSON gives them back as str keys, so a
    resumed run's output differs in type only (``{1: 10}`` vs ``{'1': 10}``)."""

    @start()
    def collect(self) -> None:
        if "by_id" not in self.state:  # safe to resume: done work is skipped
            self.state["by_id"] = {1: 10, 2: 20}

    @listen(collect)
    def report(self) -> dict[Any, int]:
        return dict(self.state["by_id"])


@persist()
class TypedTotals(Flow[TotalsState]):
    """The correct twin: a typed state model turns the stored str keys back into ints."""

    @start()
    def collect(self) -> None:
        if not self.state.by_id:
            self.state.by_id = {1: 10, 2: 20}

    @listen(collect)
    def report(self) -> dict[int, int]:
        return dict(self.state.by_id)
