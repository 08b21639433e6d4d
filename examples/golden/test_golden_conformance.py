"""The conformance kit, run against the production backends of both frameworks."""

from __future__ import annotations

import sqlite3
from importlib.metadata import version

import pytest
from agent_framework import FileCheckpointStorage
from crewai.flow.persistence.sqlite import SQLiteFlowPersistence
from packaging.version import Version

from pytest_flows.conformance import CheckpointStorageSuite, FlowPersistenceSuite


@pytest.mark.skipif(
    Version(version("crewai")) < Version("1.15.23"),
    reason="crewai < 1.15.23: SQLiteFlowPersistence cannot save a state holding a datetime",
)
class TestSQLitePersistence(FlowPersistenceSuite):
    @pytest.fixture
    def persistence(self, tmp_path):
        self.db = tmp_path / "flows.db"
        return SQLiteFlowPersistence(str(self.db))

    def corrupt_state(self, persistence, flow_uuid):
        with sqlite3.connect(self.db) as conn:
            conn.execute(
                "UPDATE flow_states SET state_json = '{' WHERE flow_uuid = ?", (flow_uuid,)
            )


class TestFileStorage(CheckpointStorageSuite):
    @pytest.fixture
    def storage(self, tmp_path):
        self.root = tmp_path / "checkpoints"
        return FileCheckpointStorage(self.root)

    def corrupt_checkpoint(self, storage, checkpoint_id):
        path = self.root / f"{checkpoint_id}.json"
        path.write_text(path.read_text(encoding="utf-8")[:40], encoding="utf-8")
