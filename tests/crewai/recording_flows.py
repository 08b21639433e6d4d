"""Flows that call a real crewai ``LLM`` (OpenAI provider), for the recording tests.

The base URL and the key come from the environment (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``), as in production; the tests point them at a loopback server.
"""

from __future__ import annotations

from crewai import LLM
from crewai.flow.flow import Flow, listen, start

#: The summary instruction; a test changes it to see prompt drift reported.
SUMMARY_PROMPT = "Summarize in one line:"


class SummaryFlow(Flow):
    """Outline a topic (plain call), summarize it (streamed), title it (async, streamed)."""

    @start()
    def outline(self) -> str:
        llm = LLM(model="gpt-4o-mini", temperature=0)
        return str(
            llm.call(
                [
                    {"role": "system", "content": "You outline topics in three points."},
                    {"role": "user", "content": f"Outline: {self.state['topic']}"},
                ]
            )
        )

    @listen(outline)
    def summarize(self, outline: str) -> str:
        llm = LLM(model="gpt-4o-mini", stream=True)
        return str(llm.call([{"role": "user", "content": f"{SUMMARY_PROMPT}\n{outline}"}]))

    @listen(summarize)
    async def title(self, summary: str) -> str:
        llm = LLM(model="gpt-4o-mini", stream=True)
        title = await llm.acall([{"role": "user", "content": f"Title for: {summary}"}])
        self.state["title"] = str(title)
        return str(title)


class TwiceFlow(Flow):
    """Asks the same question ``self.state['times']`` times."""

    @start()
    def ask(self) -> list[str]:
        llm = LLM(model="gpt-4o-mini")
        times = int(self.state.get("times", 1))
        return [str(llm.call([{"role": "user", "content": "Ping?"}])) for _ in range(times)]
