"""The runtime: the deterministic scheduler every flow runs under.

Owns the event loop and its virtual clock (``loop``), the thread scheduler and what its
threads ask (``threads``, ``participants``, ``thread_context``, ``lock_factory``), the
schedule a run's choices are recorded in and replayed from (``schedule``, ``sleep_sets``,
``aliases``, ``conflicts``), the clocks and dates (``virtual_clocks``, ``clock_scan``,
``frozen_dates``), the world outside the flow (``foreign_work``, ``real_work``,
``outside_state``, ``network``), liveness and deadlock reports, and the standard-library
patches all of it rests on (``stdlib_seams``).

May import: ``errors``, ``durations``, ``trace`` and ``contract`` (the seam registry).
Never a run, a fake, the state tools or exploration: they all build on this package.
Kept empty: importing it costs nothing (``tests/benchmarks/bench_startup.py``).
"""
