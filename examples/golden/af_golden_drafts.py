"""An Agent Framework workflow whose checkpoints must survive every release."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Never

from agent_framework import (
    Executor,
    FileCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)


@dataclass
class Draft:
    text: str


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("draft", Draft(f"about {topic}"))
        await ctx.send_message(topic)


class Editor(Executor):
    @handler
    async def edit(self, topic: str, ctx: WorkflowContext[Never, str]) -> None:
        draft = ctx.get_state("draft")
        await ctx.yield_output(draft.text.capitalize() + ".")


def build_drafts(path: Path) -> Workflow:
    storage = FileCheckpointStorage(path, allowed_checkpoint_types=["af_golden_drafts:Draft"])
    writer, editor = Writer(id="writer"), Editor(id="editor")
    return (
        WorkflowBuilder(start_executor=writer, name="drafts", checkpoint_storage=storage)
        .add_edge(writer, editor)
        .build()
    )
