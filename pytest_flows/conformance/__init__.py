"""A ready test suite for third-party storage backends of the flow frameworks.

Subclass a suite in a ``Test*`` class of your own and give it one fixture that
builds a fresh, empty backend; pytest collects every check of the suite for it::

    from pytest_flows.conformance import FlowPersistenceSuite

    class TestMyPersistence(FlowPersistenceSuite):
        @pytest.fixture
        def persistence(self, tmp_path):
            return MyPersistence(tmp_path / "flows.db")

* :class:`FlowPersistenceSuite`: crewai ``FlowPersistence`` implementations
  (what ``@persist`` writes to).
* :class:`CheckpointStorageSuite`: Agent Framework ``CheckpointStorage``
  implementations (what ``WorkflowBuilder(checkpoint_storage=...)`` writes to).

Importing this module imports neither framework: each check imports what it uses.
"""

from __future__ import annotations

from pytest_flows.conformance.checkpoint_storage import CheckpointStorageSuite
from pytest_flows.conformance.flow_persistence import FlowPersistenceSuite

__all__ = ["CheckpointStorageSuite", "FlowPersistenceSuite"]
