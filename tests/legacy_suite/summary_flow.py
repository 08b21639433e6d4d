"""A release-notes summarizer: pull the key points out of a changelog, write a
summary (streamed), then route long summaries to a shortening pass.

Nothing here knows about tests. The LLM is crewai's real ``LLM`` with the
OpenAI provider; where it connects and with which key come from the
environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), as in production.
``test_summary_flow.py`` records its real HTTP calls once and replays them.
"""

from __future__ import annotations

from crewai import LLM
from crewai.flow.flow import Flow, listen, router, start
from pydantic import BaseModel

MODEL = "gpt-4o-mini"
#: The longest summary that is published as is.
MAX_WORDS = 12


class SummaryState(BaseModel):
    changelog: str = ""
    points: str = ""
    summary: str = ""


class ReleaseSummaryFlow(Flow[SummaryState]):
    @start()
    def key_points(self) -> str:
        llm = LLM(model=MODEL, temperature=0)
        self.state.points = str(
            llm.call(
                [
                    {"role": "system", "content": "List the user-visible changes, one a line."},
                    {"role": "user", "content": self.state.changelog},
                ]
            )
        )
        return self.state.points

    @listen(key_points)
    def write_summary(self, points: str) -> str:
        llm = LLM(model=MODEL, temperature=0, stream=True)
        self.state.summary = str(
            llm.call([{"role": "user", "content": f"Summarize for users:\n{points}"}])
        )
        return self.state.summary

    @router(write_summary)
    def check_length(self) -> str:
        return "too_long" if len(self.state.summary.split()) > MAX_WORDS else "ok"

    @listen("too_long")
    def shorten(self) -> str:
        llm = LLM(model=MODEL, temperature=0)
        self.state.summary = str(
            llm.call([{"role": "user", "content": f"Shorten: {self.state.summary}"}])
        )
        return self.state.summary

    @listen("ok")
    def publish(self) -> str:
        return self.state.summary
