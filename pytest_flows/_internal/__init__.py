"""The harness's implementation. Nothing here is public: import from :mod:`pytest_flows`
(and the adapter packages :mod:`pytest_flows.crewai`, :mod:`pytest_flows.agent_framework`).
Names and modules in this package change without notice; see ``docs/architecture.md``."""
