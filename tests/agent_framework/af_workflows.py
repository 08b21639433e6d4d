"""Real Agent Framework workflows the adapter's tests run (no fakes inside)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Never

from agent_framework import (
    AgentExecutorResponse,
    Case,
    Default,
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)
from pydantic import BaseModel

# -- fan-out / fan-in, then a switch-case --------------------------------------------


@dataclass
class Joined:
    parts: list[str]


class Split(Executor):
    @handler
    async def split(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("text", text)
        await ctx.send_message(text)


class Upper(Executor):
    @handler
    async def upper(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())


class Reverse(Executor):
    @handler
    async def reverse(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text[::-1])


class Join(Executor):
    @handler
    async def join(self, parts: list[str], ctx: WorkflowContext[Joined]) -> None:
        await ctx.send_message(Joined(parts))


def is_long(joined: Joined) -> bool:
    return sum(map(len, joined.parts)) > 10


@executor(id="long")
async def long_(joined: Joined, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("LONG:" + "|".join(joined.parts))


@executor(id="short")
async def short(joined: Joined, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("SHORT:" + "|".join(joined.parts))


def build_diamond(storage: Any = None, *, extra_edge: bool = False) -> Workflow:
    split, upper, reverse, join = (
        Split(id="split"),
        Upper(id="upper"),
        Reverse(id="reverse"),
        Join(id="join"),
    )
    builder = (
        WorkflowBuilder(start_executor=split, name="diamond", checkpoint_storage=storage)
        .add_fan_out_edges(split, [upper, reverse])
        .add_fan_in_edges([upper, reverse], join)
        .add_switch_case_edge_group(
            join, [Case(condition=is_long, target=long_), Default(target=short)]
        )
    )
    if extra_edge:
        builder = builder.add_edge(split, short_text_check())
    return builder.build()


class ShortTextCheck(Executor):
    @handler
    async def check(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"checked {text}")


def short_text_check() -> ShortTextCheck:
    return ShortTextCheck(id="check")


# -- switch-case triage ----------------------------------------------------------------


@dataclass
class Ticket:
    text: str
    priority: str = "normal"
    topic: str = "general"


class Classify(Executor):
    @handler
    async def classify(self, text: str, ctx: WorkflowContext[Ticket]) -> None:
        lowered = text.lower()
        priority = "high" if "down" in lowered or "urgent" in lowered else "normal"
        topic = "billing" if "invoice" in lowered or "refund" in lowered else "general"
        await ctx.send_message(Ticket(text, priority, topic))


class Route(Executor):
    def __init__(self, id: str, label: str) -> None:
        super().__init__(id=id)
        self.label = label

    @handler
    async def route(self, ticket: Ticket, ctx: WorkflowContext[Never, str]) -> None:
        ctx.set_state("routed_to", self.label)
        await ctx.yield_output(f"{self.label}: {ticket.text}")


def is_urgent(ticket: Ticket) -> bool:
    return ticket.priority == "high"


def is_billing(ticket: Ticket) -> bool:
    return ticket.topic == "billing"


def build_triage(storage: Any = None) -> Workflow:
    classify = Classify(id="classify")
    return (
        WorkflowBuilder(start_executor=classify, name="triage", checkpoint_storage=storage)
        .add_switch_case_edge_group(
            classify,
            [
                Case(condition=is_urgent, target=Route("escalate", "on-call")),
                Case(condition=is_billing, target=Route("billing", "billing")),
                Default(target=Route("faq", "faq bot")),
            ],
        )
        .build()
    )


# -- approval with request_info and @response_handler ----------------------------------


@dataclass
class ReviewRequest:
    reviewer: str
    draft: str


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"Draft about {topic}")


class Reviewer(Executor):
    """Asks a human (``request_info``) to approve; passes the draft on if approved."""

    def __init__(self, id: str, *, request_id: str | None = None) -> None:
        super().__init__(id=id)
        self._request_id = request_id

    @handler
    async def review(self, draft: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.request_info(
            ReviewRequest(reviewer=self.id, draft=draft), bool, request_id=self._request_id
        )

    @response_handler
    async def on_review(
        self, request: ReviewRequest, approved: bool, ctx: WorkflowContext[str, str]
    ) -> None:
        if approved:
            await ctx.send_message(f"{request.draft} [ok {self.id}]")
        else:
            await ctx.yield_output(f"REJECTED by {self.id}: {request.draft}")


class Publish(Executor):
    @handler
    async def publish(self, draft: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"PUBLISHED: {draft}")


def build_approval(storage: Any = None, *, reviewers: int = 1) -> Workflow:
    """writer -> legal (-> editor) -> publish; each reviewer asks a human."""
    writer = Writer(id="writer")
    chain: list[Executor] = [writer, Reviewer("legal")]
    if reviewers > 1:
        chain.append(Reviewer("editor"))
    chain.append(Publish(id="publish"))
    return (
        WorkflowBuilder(start_executor=writer, name="approval", checkpoint_storage=storage)
        .add_chain(chain)
        .build()
    )


# -- races on shared state -------------------------------------------------------------


class Start(Executor):
    @handler
    async def start(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


class ClaimWinner(Executor):
    """Racy: every worker writes the same key; the last writer wins."""

    @handler
    async def claim(self, text: str, ctx: WorkflowContext[str]) -> None:
        seen = ctx.get_state("winner")
        ctx.set_state("winner", self.id)
        await ctx.send_message(f"{self.id} saw {seen}")


class Vote(Executor):
    """Correct: each worker writes its own key and sends its result."""

    @handler
    async def vote(self, text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state(f"vote_{self.id}", len(text) + len(self.id))
        await ctx.send_message(f"{self.id}={len(text) + len(self.id)}")


class Tally(Executor):
    @handler
    async def tally(self, reports: list[str], ctx: WorkflowContext[Never, str]) -> None:
        winner = ctx.get_state("winner")
        await ctx.yield_output(f"winner={winner} reports={sorted(reports)}")


def build_race(*, racy: bool) -> Workflow:
    worker = ClaimWinner if racy else Vote
    start = Start(id="start")
    workers = [worker(id=name) for name in ("a", "b", "c")]
    tally = Tally(id="tally")
    return (
        WorkflowBuilder(start_executor=start, name="racy" if racy else "votes")
        .add_fan_out_edges(start, workers)
        .add_fan_in_edges(workers, tally)
        .build()
    )


class RecordStart(Executor):
    """Notes the order executors of one superstep start in."""

    def __init__(self, id: str, started: list[str]) -> None:
        super().__init__(id=id)
        self.started = started

    @handler
    async def record(self, text: str, ctx: WorkflowContext[str]) -> None:
        self.started.append(self.id)
        await ctx.send_message(text)


def build_wide(started: list[str], names: str = "abcdef") -> Workflow:
    start = Start(id="start")
    workers = [RecordStart(name, started) for name in names]
    return (
        WorkflowBuilder(start_executor=start, name="wide")
        .add_fan_out_edges(start, workers)
        .add_fan_in_edges(workers, Tally(id="tally"))
        .build()
    )


# -- a loop with executor state (restore equivalence) ------------------------------------


class Counter(Executor):
    """Counts to ``limit`` one superstep at a time; saves its count in checkpoints."""

    def __init__(self, id: str, limit: int, *, saves_state: bool = True, pause: float = 1) -> None:
        super().__init__(id=id)
        self.limit = limit
        self.pause = pause
        self.visits = 0
        self.saves_state = saves_state

    @handler
    async def step(self, n: int, ctx: WorkflowContext[int, str]) -> None:
        self.visits += 1
        ctx.set_state("last", n)
        if n >= self.limit:
            await ctx.yield_output(f"done at {n} after {self.visits} visits")
        else:
            await asyncio.sleep(self.pause)  # virtual time: free
            await ctx.send_message(n + 1)

    async def on_checkpoint_save(self) -> dict[str, Any]:
        return {"visits": self.visits} if self.saves_state else {}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        if self.saves_state:
            self.visits = int(state.get("visits", 0))


class Echo(Executor):
    @handler
    async def echo(self, n: int, ctx: WorkflowContext[int, str]) -> None:
        await ctx.yield_output(f"tick {n}")
        await ctx.send_message(n)


def build_counter(
    storage: Any = None, *, limit: int = 3, saves_state: bool = True, pause: float = 1
) -> Workflow:
    counter = Counter("counter", limit, saves_state=saves_state, pause=pause)
    echo = Echo(id="echo")
    return (
        WorkflowBuilder(start_executor=counter, name="counter", checkpoint_storage=storage)
        .add_edge(counter, echo)
        .add_edge(echo, counter)
        .build()
    )


# -- failure -----------------------------------------------------------------------------


class Boom(Executor):
    @handler
    async def boom(self, text: str, ctx: WorkflowContext[str]) -> None:
        raise ValueError(f"cannot handle {text!r}")


def build_failing() -> Workflow:
    start = Start(id="start")
    return (
        WorkflowBuilder(start_executor=start, name="failing")
        .add_edge(start, Boom(id="boom"))
        .build()
    )


# -- agents (the chat client is whatever the caller gives; tests script fake_llm) ----------

WEATHER_CALLS: list[str] = []


def get_weather(city: str) -> str:
    """The weather in a city."""
    WEATHER_CALLS.append(city)
    return f"sunny, 21C in {city}"


class Report(Executor):
    @handler
    async def report(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output(f"[{response.executor_id}] {response.agent_response.text}")


def build_weather(client: Any, *, output_agent: bool = False) -> Workflow:
    from agent_framework import Agent, tool

    agent = Agent(
        client=client,
        name="weather",
        instructions="Answer with the current weather.",
        tools=[tool(get_weather)],
    )
    report = Report(id="report")
    return (
        WorkflowBuilder(
            start_executor=agent,
            name="weather-report",
            output_from=[agent] if output_agent else [report],
        )
        .add_edge(agent, report)
        .build()
    )


class Verdict(BaseModel):
    approved: bool
    reason: str


class Decide(Executor):
    @handler
    async def decide(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        verdict = response.agent_response.value
        assert isinstance(verdict, Verdict)
        await ctx.yield_output(f"{'approve' if verdict.approved else 'reject'}: {verdict.reason}")


def build_judge(client: Any) -> Workflow:
    from agent_framework import Agent

    judge = Agent(
        client=client,
        name="judge",
        instructions="Decide.",
        default_options={"response_format": Verdict},
    )
    decide = Decide(id="decide")
    return (
        WorkflowBuilder(start_executor=judge, name="judge", output_from=[decide])
        .add_edge(judge, decide)
        .build()
    )


# -- a sync function executor (Agent Framework runs it in a thread) --------------------------


@executor(id="count_words")
def count_words(text: str, ctx: WorkflowContext[Never]) -> None:
    ctx.set_state("words", len(text.split()))


def build_sync() -> Workflow:
    start = Start(id="start")
    return WorkflowBuilder(start_executor=start, name="sync").add_edge(start, count_words).build()
