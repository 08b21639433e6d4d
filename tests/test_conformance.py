"""The conformance kit, run against the backends pytest-flows and the frameworks ship."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_flows.conformance import CheckpointStorageSuite, FlowPersistenceSuite

pytest.importorskip("crewai")
pytest.importorskip("agent_framework")

from pytest_flows.crewai import _compat as compat

# The suite's sample state holds a datetime, which crewai < 1.15.23 cannot save.
needs_json_default = pytest.mark.skipif(
    not compat.HAS_SQLITE_JSON_DEFAULT,
    reason="crewai < 1.15.23 cannot save a state holding a datetime (no json default)",
)


# -- crewai FlowPersistence ---------------------------------------------------------------
@needs_json_default
class TestFlowStorePersistence(FlowPersistenceSuite):
    """The in-memory store behind ``@persist`` in flows tests."""

    @pytest.fixture
    def persistence(self, flow_store: Any) -> Any:
        return flow_store.persistence

    @pytest.fixture(autouse=True)
    def _store(self, flow_store: Any) -> None:
        self.store = flow_store

    def corrupt_state(self, persistence: Any, flow_uuid: str) -> None:
        self.store.tamper(flow_uuid, lambda raw: raw[: len(raw) // 2])


@needs_json_default
class TestSQLiteFlowPersistence(FlowPersistenceSuite):
    """crewai's own production backend."""

    @pytest.fixture
    def persistence(self, tmp_path: Path) -> Any:
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

        self.db = tmp_path / "flows.db"
        return SQLiteFlowPersistence(str(self.db))

    def corrupt_state(self, persistence: Any, flow_uuid: str) -> None:
        with sqlite3.connect(self.db) as conn:
            conn.execute(
                "UPDATE flow_states SET state_json = '{\"id\": ' WHERE flow_uuid = ?",
                (flow_uuid,),
            )


class TestBasePersistenceDefaults(FlowPersistenceSuite):
    """A minimal backend that keeps crewai's default pending-feedback methods."""

    supports_pending_feedback = False

    @pytest.fixture
    def persistence(self) -> Any:
        from crewai.flow.persistence.base import FlowPersistence

        class DictPersistence(FlowPersistence):
            rows: dict[str, str] = {}

            def init_db(self) -> None:
                return None

            def save_state(self, flow_uuid: str, method_name: str, state_data: Any) -> None:
                data = (
                    state_data.model_dump(mode="json")
                    if hasattr(state_data, "model_dump")
                    else state_data
                )
                self.rows[flow_uuid] = json.dumps(data)

            def load_state(self, flow_uuid: str) -> dict[str, Any] | None:
                raw = self.rows.get(flow_uuid)
                return None if raw is None else dict(json.loads(raw))

        return DictPersistence(rows={})

    def corrupt_state(self, persistence: Any, flow_uuid: str) -> None:
        persistence.rows[flow_uuid] = "{truncated"


# -- Agent Framework CheckpointStorage -------------------------------------------------------
class TestFileCheckpointStorage(CheckpointStorageSuite):
    """agent-framework's production file storage."""

    @pytest.fixture
    def storage(self, tmp_path: Path) -> Any:
        from agent_framework import FileCheckpointStorage

        self.root = tmp_path / "checkpoints"
        return FileCheckpointStorage(self.root)

    def corrupt_checkpoint(self, storage: Any, checkpoint_id: str) -> None:
        path = self.root / f"{checkpoint_id}.json"
        path.write_text(path.read_text(encoding="utf-8")[:40], encoding="utf-8")


class TestFlowsCheckpointStorage(CheckpointStorageSuite):
    """pytest-flows' in-memory storage with the file storage's codec."""

    @pytest.fixture
    def storage(self) -> Any:
        from pytest_flows.agent_framework._checkpoints import FlowsCheckpointStorage

        return FlowsCheckpointStorage()

    def corrupt_checkpoint(self, storage: Any, checkpoint_id: str) -> None:
        storage._texts[checkpoint_id] = storage._texts[checkpoint_id][:40]


class TestFlowsCheckpointStorageBehindFlowStore(CheckpointStorageSuite):
    """The same storage writing into ``flow_store`` (what flows tests use)."""

    @pytest.fixture
    def storage(self, flow_store: Any) -> Any:
        from pytest_flows.agent_framework._checkpoints import FlowsCheckpointStorage

        self.store = flow_store
        return FlowsCheckpointStorage(store=flow_store)

    def corrupt_checkpoint(self, storage: Any, checkpoint_id: str) -> None:
        self.store.tamper(checkpoint_id, lambda raw: raw[:40])

    def test_disallowed_type_is_not_restored(self, storage: Any) -> None:
        super().test_disallowed_type_is_not_restored(storage)
        # ...and flow_store reports the refused save (else teardown fails the test)
        (failure,) = self.store.checkpoint_failures()
        assert "NotAllowlisted" in failure


class TestInMemoryCheckpointStorage(CheckpointStorageSuite):
    """agent-framework's in-memory storage: keeps live objects, so no allow-list."""

    enforces_allowlist = False

    @pytest.fixture
    def storage(self) -> Any:
        from agent_framework import InMemoryCheckpointStorage

        return InMemoryCheckpointStorage()
