"""What the flight recorder's LangGraph part (``pytest_flows/recorder/_langgraph.py``)
reaches into without a promise, declared so that a release that moves one fails the
seam check, not a production recording.

The part patches nothing of LangGraph: it registers a langchain-core callback handler
with ``register_configure_hook`` (public); langchain-core has no way to unregister one,
so stopping the recorder takes its entry out of the hooks' list; and at a graph run's
start it reads the graph and its config from the ``Pregel.stream``/``astream`` call
running it (the callbacks carry neither).
"""

from __future__ import annotations

from pytest_flows.adapters import Registry, Seam

__all__ = ["RECORDER_SEAMS"]

_REC = "the flight recorder (pytest_flows.recorder)"

RECORDER = (
    Seam(
        "langchain_core.tracers.context:_configure_hooks",
        "patch",
        f"{_REC} takes its callback handler's entry out of the configure hooks when "
        "recording stops (langchain-core has no unregister)",
    ),
    Seam(
        "langchain_core.tracers.context:register_configure_hook",
        "read",
        "the hooks' list above is the one register_configure_hook appends to",
        source=("_configure_hooks.append(",),
    ),
    *(
        Seam(
            f"langgraph.pregel.main:Pregel.{method}",
            "read",
            f"{_REC} reads the graph (self) and its config from the {method} call running "
            "a recorded graph: the record names the graph and the configurable keys",
            source=("config = ensure_config(self.config, config)",),
        )
        for method in ("stream", "astream")
    ),
)

RECORDER_SEAMS = Registry("langgraph", __name__, *RECORDER)
