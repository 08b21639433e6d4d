"""pytest-flows adapter for Microsoft Agent Framework workflows."""
