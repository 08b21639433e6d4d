"""The thread-level operations of the flows checkpointer (``delete_for_runs``,
``copy_thread``, ``prune`` and their async twins), over its own reads and writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple

__all__ = ["ThreadAdmin"]


class ThreadAdmin:
    """Mixed into ``FlowsCheckpointSaver``: each operation is its reads and writes."""

    _shelf: Any

    def _tuple(self, thread_id: Any, ns: str, checkpoint_id: str) -> CheckpointTuple | None:
        raise NotImplementedError

    def _forget(self, thread_id: Any, namespaces: dict[str, dict[str, Any]]) -> None:
        raise NotImplementedError

    def _list(self, config: RunnableConfig | None, *, filter: Any, before: Any, limit: Any) -> Any:
        raise NotImplementedError

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        raise NotImplementedError

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        raise NotImplementedError

    def delete_thread(self, thread_id: str) -> None:
        raise NotImplementedError

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        doomed = set(run_ids)
        shelf = self._shelf
        with shelf.lock:
            for thread_id, namespaces in list(shelf.checkpoints.items()):
                for ns, known in namespaces.items():
                    for checkpoint_id in list(known):
                        item = self._tuple(thread_id, ns, checkpoint_id)
                        if item is not None and item.metadata.get("run_id") in doomed:
                            self._forget(thread_id, {ns: {checkpoint_id: known[checkpoint_id]}})
                            del known[checkpoint_id]

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        shelf = self._shelf
        with shelf.lock:
            items = sorted(
                (
                    t
                    for t in self._list(
                        {"configurable": {"thread_id": source_thread_id}},
                        filter=None,
                        before=None,
                        limit=None,
                    )
                ),
                key=lambda t: t.checkpoint["id"],
            )
            for item in items:
                ns = item.config["configurable"]["checkpoint_ns"]
                parent = (
                    item.parent_config["configurable"]["checkpoint_id"]
                    if item.parent_config
                    else None
                )
                target: RunnableConfig = {
                    "configurable": {
                        "thread_id": target_thread_id,
                        "checkpoint_ns": ns,
                        **({"checkpoint_id": parent} if parent else {}),
                    }
                }
                metadata = dict(item.metadata)
                versions = item.checkpoint["channel_versions"]
                self.put(target, item.checkpoint, metadata, versions)
                by_task: dict[str, list[tuple[str, Any]]] = {}
                for task_id, channel, value in item.pending_writes or []:
                    by_task.setdefault(task_id, []).append((channel, value))
                written = {**target["configurable"], "checkpoint_id": item.checkpoint["id"]}
                for task_id, task_writes in by_task.items():
                    self.put_writes({"configurable": written}, task_writes, task_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"delete"``: drop the threads; ``"keep_latest"``: keep each namespace's latest
        checkpoint (re-stored with every channel value it reads) and its writes."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"prune(strategy={strategy!r}): use 'keep_latest' or 'delete'.")
        shelf = self._shelf
        with shelf.lock:
            for thread_id in thread_ids:
                if strategy == "delete":
                    self.delete_thread(thread_id)
                    continue
                for ns, known in list(shelf.checkpoints.get(thread_id, {}).items()):
                    if len(known) <= 1:
                        continue
                    latest = self._tuple(thread_id, ns, max(known))
                    others = {cid: e for cid, e in known.items() if cid != max(known)}
                    self._forget(thread_id, {ns: others})
                    for cid in others:
                        del known[cid]
                    if latest is None:
                        continue
                    # The kept checkpoint may read blobs the dropped ones held: store it whole.
                    keep = latest.checkpoint
                    config: RunnableConfig = {
                        "configurable": {"thread_id": thread_id, "checkpoint_ns": ns}
                    }
                    writes = shelf.writes.pop((thread_id, ns, keep["id"]), {})
                    self._forget(thread_id, {ns: {keep["id"]: known.pop(keep["id"])}})
                    shelf.writes[(thread_id, ns, keep["id"])] = writes
                    self.put(config, keep, latest.metadata, keep["channel_versions"])

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)
