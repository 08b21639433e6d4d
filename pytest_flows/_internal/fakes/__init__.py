"""The fakes' framework-neutral side: what a test scripts and what it reads back.

Owns the scripting language (``script``: requests, matches, entries; ``replies``: tool
calls, streams, provider errors), the fake LLM (``llm_script``, ``auto_reply``,
``trajectory``), fake crews, tools and humans (``crew_script``, ``tool_script``,
``human_script``), and what a run used against its budget (``usage``). Each framework's
adapter turns its runtime's requests into these; the fixtures live in ``fake_fixtures``.

May import: ``runtime``, ``contract``, ``trace``, ``durations``, ``errors``.
Kept empty: importing it costs nothing (``tests/benchmarks/bench_startup.py``).
"""
