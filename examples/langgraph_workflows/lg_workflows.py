"""LangGraph's documented workflow patterns, with plain functions where the docs call
a model (the patterns, not the prompts, are what these tests are about):

* ``support_router()``: routing (a conditional edge picks one handler);
* ``due_diligence()``: parallel branches joined by one node;
* ``report_writer()``: orchestrator-worker (``Send`` one worker per section), each
  worker's text proofread by a subgraph;
* ``joke_loop()``: evaluator-optimizer (generate, grade, loop until accepted).
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

# -- routing -------------------------------------------------------------------------


class Ticket(TypedDict, total=False):
    text: str
    team: str
    reply: str


def classify(ticket: Ticket) -> Ticket:
    text = ticket["text"].lower()
    team = (
        "billing"
        if "refund" in text or "invoice" in text
        else "tech"
        if "error" in text
        else "general"
    )
    return {"team": team}


def pick_team(ticket: Ticket) -> Literal["billing", "tech", "general"]:
    return ticket["team"]  # type: ignore[return-value]


def billing(ticket: Ticket) -> Ticket:
    return {"reply": "Billing will refund you within 5 days."}


def tech(ticket: Ticket) -> Ticket:
    return {"reply": "Please send us the error log."}


def general(ticket: Ticket) -> Ticket:
    return {"reply": "Thanks, we will get back to you."}


def support_router() -> StateGraph[Ticket]:
    builder = StateGraph(Ticket)
    builder.add_node("classify", classify)
    for name, node in (("billing", billing), ("tech", tech), ("general", general)):
        builder.add_node(name, node)
        builder.add_edge(name, END)
    builder.add_edge(START, "classify")
    builder.add_conditional_edges("classify", pick_team, ["billing", "tech", "general"])
    return builder


# -- parallel branches with a join ------------------------------------------------------


class Review(TypedDict, total=False):
    company: str
    findings: Annotated[list[str], operator.add]
    verdict: str


def market(review: Review) -> Review:
    return {"findings": [f"market: {review['company']} grows 12%"]}


def legal(review: Review) -> Review:
    return {"findings": ["legal: no open lawsuits"]}


def finance(review: Review) -> Review:
    return {"findings": ["finance: debt ratio 0.4"]}


def decide(review: Review) -> Review:
    # the join runs once, after all three branches, whatever order they finished in
    return {"verdict": f"invest ({len(review['findings'])} checks passed)"}


def due_diligence() -> StateGraph[Review]:
    builder = StateGraph(Review)
    branches = ["market", "legal", "finance"]
    for name, node in zip(branches, (market, legal, finance), strict=True):
        builder.add_node(name, node)
        builder.add_edge(START, name)
    builder.add_node("decide", decide)
    builder.add_edge(branches, "decide")
    builder.add_edge("decide", END)
    return builder


# -- orchestrator-worker, with a subgraph ---------------------------------------------


class Report(TypedDict, total=False):
    topic: str
    sections: list[str]
    drafts: Annotated[list[str], operator.add]
    report: str


class Section(TypedDict, total=False):
    section: str
    text: str
    drafts: Annotated[list[str], operator.add]


def write(section: Section) -> Section:
    return {"text": f"{section['section']}: the facts  "}


def proofread(section: Section) -> Section:
    return {"drafts": [section["text"].strip() + "."]}


def editor() -> object:
    """A subgraph: write a section, then proofread it."""
    builder = StateGraph(Section)
    builder.add_node("write", write)
    builder.add_node("proofread", proofread)
    builder.add_edge(START, "write")
    builder.add_edge("write", "proofread")
    return builder.compile()


def orchestrate(report: Report) -> Report:
    return {"sections": [f"{report['topic']} {part}" for part in ("intro", "body", "outlook")]}


def assign_workers(report: Report) -> list[Send]:
    return [Send("section_editor", {"section": s}) for s in report["sections"]]


def synthesize(report: Report) -> Report:
    return {"report": "\n".join(report["drafts"])}


def report_writer() -> StateGraph[Report]:
    builder = StateGraph(Report)
    builder.add_node("orchestrate", orchestrate)
    builder.add_node("section_editor", editor())
    builder.add_node("synthesize", synthesize)
    builder.add_edge(START, "orchestrate")
    builder.add_conditional_edges("orchestrate", assign_workers, ["section_editor"])
    builder.add_edge("section_editor", "synthesize")
    builder.add_edge("synthesize", END)
    return builder


# -- evaluator-optimizer ---------------------------------------------------------------


class Joke(TypedDict, total=False):
    topic: str
    joke: str
    attempts: int
    grade: str
    feedback: str


def generate(joke: Joke) -> Joke:
    attempts = joke.get("attempts", 0) + 1
    punchline = " because it had too many bugs" if joke.get("feedback") else ""
    return {"joke": f"The {joke['topic']} quit{punchline}.", "attempts": attempts}


def evaluate(joke: Joke) -> Joke:
    if "because" in joke["joke"]:
        return {"grade": "funny", "feedback": ""}
    return {"grade": "not funny", "feedback": "add a reason"}


def accepted(joke: Joke) -> Literal["accepted", "retry"]:
    return "accepted" if joke["grade"] == "funny" or joke["attempts"] >= 3 else "retry"


def joke_loop() -> StateGraph[Joke]:
    builder = StateGraph(Joke)
    builder.add_node("generate", generate)
    builder.add_node("evaluate", evaluate)
    builder.add_edge(START, "generate")
    builder.add_edge("generate", "evaluate")
    builder.add_conditional_edges("evaluate", accepted, {"accepted": END, "retry": "generate"})
    return builder
