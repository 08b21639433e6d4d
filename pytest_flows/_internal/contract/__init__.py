"""The adapter contract: how a framework joins pytest-flows.

Owns the registry of adapters (``registry``: ``AdapterSpec``, ``RecorderPart``,
``ADAPTERS``), the adapter base class and its loading (``adapters``), and the declared
seams every patch of a framework or the standard library goes through (``seams``).

May import: ``errors`` only: everything else looks adapters up here.
Kept empty: importing it costs nothing (``tests/benchmarks/bench_startup.py``).
"""
