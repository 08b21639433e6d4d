"""A LangGraph checkpointer that stores what production would, inside ``flow_store``.

:class:`FlowsCheckpointSaver` is a real ``BaseCheckpointSaver``: every value goes
through the saver's serializer (``serde.dumps_typed``; the graph's own when the
adapter swaps it in, with its msgpack allowlist and ``LANGGRAPH_STRICT_MSGPACK``
as production has them), and every load through ``serde.loads_typed``. It keeps
blobs per channel version as ``InMemorySaver`` does, so a load assembles a
checkpoint the way production savers do.

The store sees each write twice over: every ``put`` and ``put_writes`` is one
*save* in ``flow_store.history(thread_id)`` (in write order; a crash point
counts them), and every ``put`` is one *checkpoint* in
``flow_store.checkpoints()`` with its parent, so lineage and forks show. The
records hold the encoded bytes (base64 in a JSON document), and loads read them
back from the store: ``flow_store.tamper`` changes what a resume loads, and
``flow_store.discard`` removes it.

Reading is inert: a record the saver did not write as it is (tampered) is
decoded under a strict allowlist (the serializer's safe types and the types the
original bytes held), never by a permissive serializer that would import and
call whatever a stored payload names.
"""

from __future__ import annotations

import builtins
import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol, maybe_add_typed_methods

from pytest_flows.adapters import FlowStore, SimulatedCrash, StoreCorruptedError

try:
    from langgraph.checkpoint.base import writes_sort_key
except ImportError:  # langgraph-checkpoint < 4.3 (langgraph 1.2.11's): its own definition

    def writes_sort_key(task_path: str, task_id: str = "", idx: int = 0) -> tuple[str, str, int]:
        return (task_path, task_id, idx)


from pytest_flows.langgraph._checkpoint_admin import ThreadAdmin
from pytest_flows.langgraph._checkpoint_codec import (
    Typed,
    corrupted,
    load_document,
    named_types,
    pack,
    put_method,
    put_note,
    restricted,
    short_ns,
    state_key,
    unpack,
    writes_method,
)

__all__ = ["FRAMEWORK", "FlowsCheckpointSaver", "state_key"]

FRAMEWORK = "langgraph"


class _Shelf:
    """What every shallow copy of one saver shares (``with_allowlist`` copies the saver)."""

    def __init__(self, store: FlowStore) -> None:
        self.store = store
        self.lock = threading.RLock()
        #: thread id -> checkpoint ns -> checkpoint id -> (location, parent id, raw written)
        self.checkpoints: dict[Any, dict[str, dict[str, tuple[str, str | None, str]]]] = {}
        #: (thread id, ns, channel, version) -> location of the checkpoint that holds it
        self.blobs: dict[tuple[Any, str, str, Any], str] = {}
        #: (thread id, ns, checkpoint id) -> (task id, idx) -> (state key, save index, at)
        self.writes: dict[tuple[Any, str, str], dict[tuple[str, int], tuple[str, int, int]]] = {}
        #: state key -> save index -> (raw written, task path)
        self.saves: dict[str, dict[int, tuple[str, str]]] = {}
        self.versions = itertools.count(1)
        #: checkpoint location -> its lineage label
        self.branches: dict[str, str] = {}
        #: the crash that stopped a run: every later write of that run dies with it
        self.crashed: SimulatedCrash | None = None


class FlowsCheckpointSaver(ThreadAdmin, BaseCheckpointSaver[str]):
    """A ``BaseCheckpointSaver`` over ``flow_store`` (or a private store of its own).

    ``serde`` is the serializer (LangGraph's default ``JsonPlusSerializer`` if
    not given); :meth:`serving` makes a copy that uses the serializer of the
    checkpointer a graph was compiled with, sharing this saver's storage.
    """

    _shelf: _Shelf

    def __init__(
        self, *, store: FlowStore | None = None, serde: SerializerProtocol | None = None
    ) -> None:
        super().__init__(serde=serde)
        self._shelf = _Shelf(store if store is not None else FlowStore())

    # -- configuration ------------------------------------------------------------------
    @property
    def store(self) -> FlowStore:
        return self._shelf.store

    def serving(self, checkpointer: Any) -> FlowsCheckpointSaver:
        """This saver's storage with ``checkpointer``'s serializer (a graph's own), if any."""
        serde = getattr(checkpointer, "serde", None)
        if not isinstance(checkpointer, BaseCheckpointSaver) or serde is None:
            return self
        clone = FlowsCheckpointSaver.__new__(FlowsCheckpointSaver)
        clone.__dict__.update(self.__dict__)
        clone.serde = maybe_add_typed_methods(serde)
        return clone

    @property
    def crashed(self) -> SimulatedCrash | None:
        """The simulated crash that stopped the last run, if one did."""
        return self._shelf.crashed

    def revive(self) -> None:
        """Forget a simulated crash: the next run writes again (as a restarted process)."""
        self._shelf.crashed = None

    # -- the store's records ------------------------------------------------------------
    def _save(
        self,
        key: str,
        method: str,
        document: dict[str, Any],
        commit: Callable[[int, str], None],
    ) -> None:
        """One save in the thread's history (a crash point); ``commit(index, raw)`` once
        it landed (also when a crash point "after" it stops the run right there)."""
        shelf = self._shelf
        if shelf.crashed is not None:  # the process is gone: nothing more is written
            raise SimulatedCrash(shelf.crashed.point, shelf.crashed.state_id)
        raw = json.dumps({"id": key, **document}, sort_keys=True)
        try:
            save = shelf.store.append_save(key, method, raw, framework=FRAMEWORK)
        except SimulatedCrash as crash:
            shelf.crashed = crash
            if crash.point.when == "after":
                history = shelf.store.history(key)
                commit(history[-1].index if history else 0, raw)
            raise
        commit(save.index, raw)

    def _current_raws(self, key: str) -> dict[int, str]:
        return {save.index: save.raw for save in self._shelf.store.history(key)}

    def _read(self, typed: Typed, original: Typed | None) -> Any:
        """``typed`` decoded: by the saver's serializer if it is what the saver wrote,
        else (tampered) under a strict allowlist of what the original named."""
        if original is not None and typed == original:
            return self.serde.loads_typed(typed)
        allowed = named_types(self.serde, original) if original is not None else set()
        kind = typed[0].split("+", 1)[0]
        if kind not in ("null", "bytes", "bytearray", "msgpack"):
            raise StoreCorruptedError(
                f"flow_store: a stored LangGraph value was changed to the {kind!r} form after "
                "it was written (flow_store.tamper?); it is not decoded. Discard the record "
                "with flow_store.discard(...)."
            )
        return restricted(self.serde, allowed).loads_typed(typed)

    # -- BaseCheckpointSaver ------------------------------------------------------------
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        shelf = self._shelf
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        ns: str = configurable.get("checkpoint_ns", "")
        parent: str | None = configurable.get("checkpoint_id")
        checkpoint_id = checkpoint["id"]
        stored = dict(checkpoint)
        values: dict[str, Any] = stored.pop("channel_values")  # type: ignore[assignment]
        blobs = {
            channel: {
                "version": version,
                "value": pack(
                    self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
                ),
            }
            for channel, version in new_versions.items()
        }
        full_metadata = get_checkpoint_metadata(config, metadata)
        document = {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
            "parent_checkpoint_id": parent,
            "checkpoint": pack(self.serde.dumps_typed(stored)),
            "metadata": pack(self.serde.dumps_typed(full_metadata)),
            "blobs": blobs,
        }
        key = state_key(thread_id)
        location = f"{key}/{ns}/{checkpoint_id}" if ns else f"{key}/{checkpoint_id}"

        def commit(index: int, raw: str) -> None:
            self._add_checkpoint(
                key,
                thread_id,
                ns,
                checkpoint_id,
                parent,
                location,
                document,
                full_metadata,
                dict(checkpoint["channel_versions"]),
            )
            for channel, version in new_versions.items():
                shelf.blobs[(thread_id, ns, channel, version)] = location

        with shelf.lock:
            self._save(key, put_method(ns, full_metadata), put_note(ns, checkpoint_id), commit)
        return _config(thread_id, ns, checkpoint_id)

    def _add_checkpoint(
        self,
        key: str,
        thread_id: Any,
        ns: str,
        checkpoint_id: str,
        parent: str | None,
        location: str,
        document: dict[str, Any],
        metadata: CheckpointMetadata,
        versions: dict[str, Any],
    ) -> None:
        shelf = self._shelf
        raw = json.dumps(document, sort_keys=True)
        namespaces = shelf.checkpoints.setdefault(thread_id, {})
        known = namespaces.setdefault(ns, {})
        old = known.get(checkpoint_id)
        if old is not None:  # a re-put of the same id replaces it, as in every saver
            record = shelf.store.find_checkpoint(old[0])
            if record is not None:
                shelf.store.discard(record)
        branch = self._branch(key, ns, known, parent)
        known[checkpoint_id] = (location, parent, raw)
        shelf.branches[location] = branch
        shelf.store.add_checkpoint(
            id=checkpoint_id,
            location=location,
            parent_id=parent,
            branch=branch,
            trigger=f"step {metadata.get('step', '?')} ({metadata.get('source', '?')})",
            raw=raw,
            framework=FRAMEWORK,
            kind="json",
            base=key,
            state=self._display_state(document, versions, known.get(parent or "")),
        )

    def _branch(
        self, key: str, ns: str, known: dict[str, tuple[str, str | None, str]], parent: str | None
    ) -> str:
        """The lineage label: the thread's, a new ``~n`` one where a parent gets a second
        child (a fork: ``update_state`` or a run from an older checkpoint)."""
        base = f"{key}/{short_ns(ns)}" if ns else key
        if parent is None or parent not in known:
            return base
        siblings = sum(1 for _, p, _ in known.values() if p == parent)
        parent_branch = self._shelf.branches.get(known[parent][0], base)
        return parent_branch if siblings == 0 else f"{parent_branch}~{siblings + 1}"

    def _display_state(
        self,
        document: dict[str, Any],
        versions: dict[str, Any],
        parent: tuple[str, str | None, str] | None,
    ) -> dict[str, Any]:
        """The state channels a load of this checkpoint gives: those this put wrote,
        decoded from its own bytes as a load would, and the rest as its parent held them."""
        before = self._shelf.store.find_checkpoint(parent[0]) if parent else None
        kept = before.state if before is not None and before.state is not None else {}
        state = {channel: value for channel, value in kept.items() if channel in versions}
        for channel, blob in document["blobs"].items():
            if channel.startswith(("branch:", "__", "join:")) or blob["value"][0] == "empty":
                continue
            state[channel] = self.serde.loads_typed(unpack(blob["value"], channel))
        return state

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        shelf = self._shelf
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        ns: str = configurable.get("checkpoint_ns", "")
        checkpoint_id: str = configurable["checkpoint_id"]
        outer = (thread_id, ns, checkpoint_id)
        key = state_key(thread_id)
        with shelf.lock:
            existing = shelf.writes.get(outer, {})
            entries = []
            for idx, (channel, value) in enumerate(writes):
                inner = (task_id, WRITES_IDX_MAP.get(channel, idx))
                if inner[1] >= 0 and inner in existing:
                    continue  # a write already stored is never replaced (as InMemorySaver)
                entries.append((inner, channel, self.serde.dumps_typed(value)))
            if not entries:
                return
            document = {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
                "task_id": task_id,
                "task_path": task_path,
                "writes": [[inner[1], channel, pack(typed)] for inner, channel, typed in entries],
            }
            method = writes_method(ns, task_path, [channel for _, channel, _ in entries])

            def commit(index: int, raw: str) -> None:
                shelf.saves.setdefault(key, {})[index] = (raw, task_path)
                slot = shelf.writes.setdefault(outer, {})
                for at, (inner, _, _) in enumerate(entries):
                    slot[inner] = (key, index, at)

            self._save(key, method, document, commit)

    def _writes_of(self, thread_id: Any, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        shelf = self._shelf
        slot = shelf.writes.get((thread_id, ns, checkpoint_id), {})
        if not slot:
            return []
        key = state_key(thread_id)
        raws = self._current_raws(key)
        documents: dict[int, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        rows = []
        for (task_id, idx), (_, index, at) in slot.items():
            if index not in raws:
                continue  # discarded from flow_store
            if index not in documents:
                written, task_path = shelf.saves[key][index]
                current = load_document(raws[index], f"the writes saved as save {index} of {key!r}")
                original = json.loads(written) if raws[index] != written else None
                documents[index] = (current, original)
            current, original = documents[index]
            try:
                _, channel, packed = current["writes"][at]
            except (KeyError, IndexError, TypeError, ValueError):
                raise corrupted(f"the writes saved as save {index} of {key!r}") from None
            typed = unpack(packed, f"a write of save {index} of {key!r}")
            first = unpack(original["writes"][at][2], "") if original is not None else typed
            task_path = shelf.saves[key][index][1]
            rows.append((task_path, task_id, idx, channel, self._read(typed, first)))
        rows.sort(key=lambda r: writes_sort_key(r[0], r[1], r[2]))
        return [(task_id, channel, value) for _, task_id, _, channel, value in rows]

    def _tuple(self, thread_id: Any, ns: str, checkpoint_id: str) -> CheckpointTuple | None:
        shelf = self._shelf
        entry = shelf.checkpoints.get(thread_id, {}).get(ns, {}).get(checkpoint_id)
        if entry is None:
            return None
        location, parent, written = entry
        record = shelf.store.find_checkpoint(location)
        if record is None:
            return None  # discarded from flow_store
        what = f"checkpoint {record.n} ({checkpoint_id}, thread {thread_id!r})"
        document = load_document(record.raw, what)
        original = json.loads(written) if record.raw != written else None
        try:
            stored = self._read(
                unpack(document["checkpoint"], what),
                unpack(original["checkpoint"], what) if original else None,
            )
            metadata = self._read(
                unpack(document["metadata"], what),
                unpack(original["metadata"], what) if original else None,
            )
            versions = dict(stored["channel_versions"])
        except (KeyError, TypeError):
            raise corrupted(what) from None
        values = {}
        documents: dict[str, tuple[Any, dict[str, Any]]] = {}  # a record's blobs, read once
        for channel, version in versions.items():
            value = self._blob(thread_id, ns, channel, version, documents)
            if value is not _EMPTY:
                values[channel] = value
        return CheckpointTuple(
            config=_config(thread_id, ns, checkpoint_id),
            checkpoint={**stored, "channel_values": values},  # type: ignore[typeddict-item]
            metadata=metadata,
            parent_config=_config(thread_id, ns, parent) if parent else None,
            pending_writes=self._writes_of(thread_id, ns, checkpoint_id),
        )

    def _blob(
        self,
        thread_id: Any,
        ns: str,
        channel: str,
        version: Any,
        documents: dict[str, tuple[Any, dict[str, Any]]],
    ) -> Any:
        shelf = self._shelf
        location = shelf.blobs.get((thread_id, ns, channel, version))
        if location is None:
            return _EMPTY
        if location not in documents:
            found = shelf.store.find_checkpoint(location)
            if found is None:
                return _EMPTY
            documents[location] = (found, load_document(found.raw, f"checkpoint {found.n}"))
        record, document = documents[location]
        what = f"checkpoint {record.n} ({record.id}), channel {channel!r}"
        written = _written_raw(shelf, thread_id, ns, record.id)
        try:
            typed = unpack(document["blobs"][channel]["value"], what)
            first = (
                unpack(json.loads(written)["blobs"][channel]["value"], what)
                if written is not None and written != record.raw
                else typed
            )
        except (KeyError, TypeError):
            raise corrupted(what) from None
        if typed[0] == "empty":
            return _EMPTY
        return self._read(typed, first)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        ns: str = configurable.get("checkpoint_ns", "")
        if not ns:
            # A run starts by reading its thread: a crashed run's process is gone by now.
            self.revive()
        with self._shelf.lock:
            checkpoint_id = get_checkpoint_id(config)
            if checkpoint_id:
                found = self._tuple(thread_id, ns, checkpoint_id)
                if found is not None:
                    found = found._replace(config=config)
                return found
            known = self._shelf.checkpoints.get(thread_id, {}).get(ns, {})
            for candidate in sorted(known, reverse=True):  # latest = max id, as every saver
                found = self._tuple(thread_id, ns, candidate)
                if found is not None:
                    return found
            return None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return iter(self._list(config, filter=filter, before=before, limit=limit))

    def _list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> builtins.list[CheckpointTuple]:
        shelf = self._shelf
        found: builtins.list[CheckpointTuple] = []
        with shelf.lock:
            threads = [config["configurable"]["thread_id"]] if config else list(shelf.checkpoints)
            wanted_ns = config["configurable"].get("checkpoint_ns") if config else None
            wanted_id = get_checkpoint_id(config) if config else None
            before_id = get_checkpoint_id(before) if before else None
            for thread_id in threads:
                for ns, known in list(shelf.checkpoints.get(thread_id, {}).items()):
                    if wanted_ns is not None and ns != wanted_ns:
                        continue
                    for checkpoint_id in sorted(known, reverse=True):
                        if wanted_id and checkpoint_id != wanted_id:
                            continue
                        if before_id and checkpoint_id >= before_id:
                            continue
                        if limit is not None and len(found) >= limit:
                            return found
                        item = self._tuple(thread_id, ns, checkpoint_id)
                        if item is None:
                            continue
                        if filter and not all(item.metadata.get(k) == v for k, v in filter.items()):
                            continue
                        found.append(item)
        return found

    def delete_thread(self, thread_id: str) -> None:
        shelf = self._shelf
        with shelf.lock:
            namespaces = shelf.checkpoints.pop(thread_id, {})
            self._forget(thread_id, namespaces)
            key = state_key(thread_id)
            for save in shelf.store.history(key):
                if save.framework == FRAMEWORK:
                    shelf.store.discard(save)
            shelf.saves.pop(key, None)

    def _forget(
        self, thread_id: Any, namespaces: dict[str, dict[str, tuple[str, str | None, str]]]
    ) -> None:
        shelf = self._shelf
        for ns, known in namespaces.items():
            for checkpoint_id, (location, _, _) in known.items():
                record = shelf.store.find_checkpoint(location)
                if record is not None:
                    shelf.store.discard(record)
                shelf.writes.pop((thread_id, ns, checkpoint_id), None)
        gone = {loc for known in namespaces.values() for loc, _, _ in known.values()}
        for blob_key in [k for k, loc in shelf.blobs.items() if loc in gone]:
            del shelf.blobs[blob_key]

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self._list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """As ``InMemorySaver``'s, with a counter where it draws ``random.random()``: the
        suffix keeps versions of two forks apart; a counter needs no seeding."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:032}.{next(self._shelf.versions):016}"

    def __repr__(self) -> str:
        shelf = self._shelf
        count = sum(len(k) for ns in shelf.checkpoints.values() for k in ns.values())
        return f"<FlowsCheckpointSaver threads={len(shelf.checkpoints)} checkpoints={count}>"


_EMPTY = object()


def _config(thread_id: Any, ns: str, checkpoint_id: str) -> RunnableConfig:
    ids = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}
    return {"configurable": ids}


def _written_raw(shelf: _Shelf, thread_id: Any, ns: str, checkpoint_id: str) -> str | None:
    entry = shelf.checkpoints.get(thread_id, {}).get(ns, {}).get(checkpoint_id)
    return entry[2] if entry is not None else None
