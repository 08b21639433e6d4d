"""The CrewAI Flows adapter.

Importing this package does not import crewai; the adapter proper
(:mod:`pytest_flows.crewai.adapter`) loads once crewai is imported.
"""
