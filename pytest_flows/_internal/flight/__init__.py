"""The flight recorder's record format, writer and replay (``pytest_flows.recorder`` is
its public face). Re-exports nothing: the production side imports only what it uses.

May import: ``contract`` (the recorder parts, by name), ``runtime``, ``fakes``, ``run``,
``exploration``, ``coverage``, ``recording`` (scrubbing), ``secrets``, ``identity``, ``trace``,
``errors``; ``capture`` (what production runs) imports none of the harness.
"""
