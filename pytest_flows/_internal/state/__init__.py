"""State: the in-memory store behind persistence and checkpoints, and the properties on it.

Owns ``flow_store`` (``store``, ``store_records``), the snapshot codec and diffs
(``codec``), and the state properties with their hypothesis strategies
(``state_properties``, ``property_runs``, ``property_timeouts``, ``strategies``).

May import: ``runtime``, ``exploration`` (the seed loop), ``contract``, ``run``, ``trace``,
``normal_form``, ``errors``.
Kept empty: importing it costs nothing (``tests/benchmarks/bench_startup.py``).
"""
