"""LangGraph's functional API: an ``@entrypoint`` calling ``@task`` s in parallel, with
a human review through ``interrupt()``."""

from __future__ import annotations

from typing import Any

from langgraph.func import entrypoint, task
from langgraph.types import interrupt


@task
def outline(topic: str) -> list[str]:
    return [f"{topic}: why", f"{topic}: how", f"{topic}: what next"]


@task
def write_paragraph(point: str) -> str:
    return f"{point.capitalize()} - a paragraph."


@task
def review(essay: str) -> Any:
    return interrupt({"essay": essay, "question": "publish?"})


@entrypoint()
def essay_writer(topic: str) -> dict[str, Any]:
    points = outline(topic).result()
    paragraphs = [write_paragraph(p) for p in points]  # run in parallel
    essay = "\n".join(p.result() for p in paragraphs)
    verdict = review(essay).result()
    return {"essay": essay, "published": verdict == "publish"}
