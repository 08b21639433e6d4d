"""The flight recorder's record format, writer and replay (``pytest_flows.recorder`` is
its public face). Re-exports nothing: the production side imports only what it uses."""
