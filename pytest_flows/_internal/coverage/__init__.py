"""Flow-graph coverage (``--flows-cov``), counted from the normalized trace.

Framework-neutral: the adapters describe what a flow *can* do
(:mod:`pytest_flows.crewai._graph`, :mod:`pytest_flows.agent_framework._graph`);
this package counts what the tests' traces show it *did*.

May import: ``file_names``, ``secret_check``, ``stash`` (never a framework or an adapter:
the graphs come through ``AdapterBase.graph``).
"""
