"""pytest-flows for LangGraph graphs (``pip install "pytest-flows[langgraph]"``).

Importing this package imports ``langgraph``; ``import pytest_flows`` does not.
"""

# First, before any module of this package: the plugin loads the adapter the
# moment langgraph is imported, and that must not find one of our modules
# half-imported.
import langgraph  # noqa: F401
