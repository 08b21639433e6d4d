"""A research workflow: fan a question out to three analysts, fan their notes in,
then route on how much they agree (switch-case).

    question -> plan -> (market | tech | risk) -> merge -> publish | escalate
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Never

from agent_framework import (
    Case,
    Default,
    Executor,
    FileCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)


@dataclass
class Note:
    analyst: str
    verdict: str  # "go" or "wait"
    text: str


@dataclass
class Findings:
    question: str
    notes: list[Note] = field(default_factory=list)

    @property
    def agreement(self) -> float:
        go = sum(1 for note in self.notes if note.verdict == "go")
        return go / len(self.notes) if self.notes else 0.0


#: What production allows its checkpoints to hold (FileCheckpointStorage refuses the rest).
ALLOWED_CHECKPOINT_TYPES = ["af_research:Note", "af_research:Findings"]


def production_storage(path: str | Path) -> FileCheckpointStorage:
    return FileCheckpointStorage(path, allowed_checkpoint_types=ALLOWED_CHECKPOINT_TYPES)


class Plan(Executor):
    @handler
    async def plan(self, question: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("question", question)
        await ctx.send_message(question.strip().rstrip("?"))


class Analyst(Executor):
    """A stand-in for an expensive analysis: says go when its keyword is in the question."""

    def __init__(self, id: str, keyword: str) -> None:
        super().__init__(id=id)
        self.keyword = keyword

    @handler
    async def analyse(self, topic: str, ctx: WorkflowContext[Note]) -> None:
        verdict = "go" if self.keyword in topic.lower() else "wait"
        await ctx.send_message(Note(self.id, verdict, f"{self.id} on {topic}: {verdict}"))


class Merge(Executor):
    @handler
    async def merge(self, notes: list[Note], ctx: WorkflowContext[Findings]) -> None:
        question = ctx.get_state("question")
        await ctx.send_message(Findings(question, notes))


class Publish(Executor):
    @handler
    async def publish(self, findings: Findings, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"PUBLISH ({findings.agreement:.0%} agree): {findings.question}")


class Escalate(Executor):
    @handler
    async def escalate(self, findings: Findings, ctx: WorkflowContext[Never, str]) -> None:
        dissent = ", ".join(n.analyst for n in findings.notes if n.verdict != "go")
        await ctx.yield_output(f"ESCALATE (dissent: {dissent}): {findings.question}")


def consensus(findings: Findings) -> bool:
    return findings.agreement >= 2 / 3


def build_workflow(checkpoint_storage: object = None) -> Workflow:
    plan = Plan(id="plan")
    analysts = [
        Analyst("market", "market"),
        Analyst("tech", "api"),
        Analyst("risk", "launch"),
    ]
    merge = Merge(id="merge")
    return (
        WorkflowBuilder(start_executor=plan, name="research", checkpoint_storage=checkpoint_storage)
        .add_fan_out_edges(plan, analysts)
        .add_fan_in_edges(analysts, merge)
        .add_switch_case_edge_group(
            merge,
            [
                Case(condition=consensus, target=Publish(id="publish")),
                Default(target=Escalate(id="escalate")),
            ],
        )
        .build()
    )
