"""Exploration: running one flow many ways and reading what the runs showed.

Owns ``explore()`` (``explore``), a run under a given schedule (``schedule_runs``), the
many-seeds loop every property and helper shares (``seeding``), ``or_`` races and their
outcomes (``races``, ``race_check``).

May import: ``runtime``, ``run``, ``trace``, ``errors`` (and the session for typing only).
Kept empty: importing it costs nothing (``tests/benchmarks/bench_startup.py``).
"""
