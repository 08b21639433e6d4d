"""An in-memory ``CheckpointStorage`` that stores what production would.

``InMemoryCheckpointStorage`` only deep-copies, so a checkpoint holding a type
``FileCheckpointStorage`` refuses (a dataclass of your own, not allowlisted)
round-trips fine in tests and fails in production. :class:`FlowsCheckpointStorage`
sends every save through the production codec - ``encode_checkpoint_value``,
``json.dumps`` as the file storage writes it, ``json.loads`` and
``decode_checkpoint_value`` under the restricted unpickler allowlist - and
refuses the save exactly when the file storage would. Loads decode the stored
JSON afresh, so a restored run never shares objects with the run that saved.

Which rules it applies is a choice (``rules=``): ``"file"`` (the default)
encodes, refuses and decodes as ``FileCheckpointStorage`` does; ``"memory"``
deep-copies and refuses nothing, as ``InMemoryCheckpointStorage`` does. Behind
``flow_store`` it follows the storage each workflow was built with, unless the
test chose.

It also keeps what tests want to look at: every checkpoint in save order,
lineage (``previous_checkpoint_id`` chains, with branches after time travel),
a deterministic ``get_latest`` (the last one saved; the stock storages compare
timestamps, which tie under a frozen clock and return the oldest), and the
refused saves with the reason and the fix.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import json
import re
from collections.abc import Iterable
from typing import Any, Literal, get_args

from agent_framework import (
    FileCheckpointStorage,
    InMemoryCheckpointStorage,
    WorkflowCheckpoint,
    WorkflowCheckpointException,
)

from pytest_flows.adapters import FlowsError, FlowsUsageError
from pytest_flows.agent_framework._patches import (
    allowed_types_of,
    decode_checkpoint_value,
    encode_checkpoint_value,
)
from pytest_flows.agent_framework._pickle_types import pickled_type_keys

__all__ = [
    "CheckpointInfo",
    "CheckpointRefusedError",
    "CheckpointRules",
    "CheckpointSaveError",
    "FlowsCheckpointStorage",
    "refusal_from",
    "rules_for",
    "type_key",
]

#: ``"file"``: encode, refuse and decode as ``FileCheckpointStorage``;
#: ``"memory"``: deep-copy and refuse nothing, as ``InMemoryCheckpointStorage``.
CheckpointRules = Literal["file", "memory"]
_RULES: tuple[str, ...] = get_args(CheckpointRules)


#: Set while ``flows.run`` runs a workflow: the run turns a refused save into its
#: error, so the storage does not report it to ``flow_store`` a second time.
run_reports_refusals: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pytest_flows_af_run_reports_refusals", default=False
)


def reported_by_the_run() -> bool:
    return run_reports_refusals.get()


def check_rules(rules: object, where: str) -> CheckpointRules:
    if rules not in _RULES:
        raise FlowsUsageError(
            f"{where} got rules={rules!r}; use rules='file' (encode, refuse and decode as "
            "FileCheckpointStorage does) or rules='memory' (deep-copy and refuse nothing, as "
            "InMemoryCheckpointStorage does)."
        )
    return rules  # type: ignore[return-value]


def rules_for(storage: Any) -> tuple[CheckpointRules, str]:
    """The rules that stand in for the storage a workflow was built with, and why."""
    if isinstance(storage, InMemoryCheckpointStorage):
        return "memory", "the workflow was built with InMemoryCheckpointStorage"
    if isinstance(storage, FileCheckpointStorage):
        return "file", "the workflow was built with FileCheckpointStorage"
    if storage is None:
        return "file", "the workflow was built without checkpoint storage"
    # A storage of its own (a database, a blob store) serializes like the file one.
    return "file", f"the workflow was built with {type(storage).__name__}, which serializes"


_BLOCKED = re.compile(r"blocked for (?:nested |non-type )?(?:type|global|attribute) '([^']+)'")


def type_key(tp: type | str) -> str:
    """``"module:qualname"``, the form the restricted unpickler allowlists."""
    if isinstance(tp, str):
        if ":" not in tp:
            raise ValueError(
                f"allowed checkpoint type {tp!r} is not in 'module:qualname' form; "
                "write e.g. 'my_app.models:Draft' or pass the class itself."
            )
        return tp
    if not isinstance(tp, type):
        raise TypeError(
            f"allowed checkpoint types are classes or 'module:qualname' strings, got {tp!r}"
        )
    return f"{tp.__module__}:{tp.__qualname__}"


class CheckpointRefusedError(FlowsError):
    """A checkpoint that ``FileCheckpointStorage`` would refuse to save.

    Agent Framework logs a failed checkpoint save as a warning and keeps running,
    so in production such a workflow silently loses its checkpoints; in a flows
    test it fails the run.
    """

    def __init__(
        self,
        checkpoint_id: str,
        workflow_name: str,
        iteration: int,
        cause: BaseException,
        blocked_type: str | None,
        *,
        what: str | None = None,
        why: str | None = None,
    ) -> None:
        self.checkpoint_id = checkpoint_id
        self.workflow_name = workflow_name
        self.iteration = iteration
        self.blocked_type = blocked_type
        if blocked_type is not None:
            qualname = blocked_type.partition(":")[2]
            reason = (
                f"it holds a {qualname} ({blocked_type!r}), a type the restricted unpickler "
                "does not allow"
            )
            fix = (
                "Allow it where the workflow's storage is built - FileCheckpointStorage(path, "
                f"allowed_checkpoint_types=[{blocked_type!r}]) or "
                f"agent_framework.register_checkpoint_type({qualname}) - and in the test "
                f"(FlowsCheckpointStorage(allowed_types=[{qualname}]), storage.allow({qualname}) "
                f'or flow_store.backend("agent_framework").allow({qualname})); or keep workflow '
                "state and messages to JSON-native values and framework types."
            )
        else:
            reason = _root_message(cause)
            fix = (
                "Keep workflow state, in-flight messages and executor state to values the "
                "checkpoint codec can encode and the restricted unpickler can rebuild."
            )
        subject = what or (
            f"checkpoint {checkpoint_id} of workflow {workflow_name!r} after superstep {iteration}"
        )
        rules = f" (its rules apply because {why})" if why else ""
        super().__init__(
            f"{subject} would be refused by FileCheckpointStorage{rules}: {reason}. {fix}"
        )


class CheckpointSaveError(FlowsError):
    """The runtime failed to write a checkpoint (and, as in production, ran on without it)."""

    def __init__(self, workflow_name: str, iteration: int, cause: BaseException) -> None:
        self.workflow_name = workflow_name
        self.iteration = iteration
        super().__init__(
            f"workflow {workflow_name!r} could not save its checkpoint after superstep "
            f"{iteration}: {_root_message(cause)}. Agent Framework only logs this and runs on, "
            "so a resume would start from an older checkpoint; fix the storage or the state."
        )


def _root_message(error: BaseException) -> str:
    messages = []
    current: BaseException | None = error
    while current is not None:
        messages.append(f"{type(current).__name__}: {current}")
        current = current.__cause__
    return " <- ".join(messages)


_CHECKPOINT_ID = re.compile(r"Checkpoint (\S+) cannot be encoded")


def refusal_from(
    error: BaseException, workflow_name: str, iteration: int
) -> CheckpointRefusedError | None:
    """The refusal behind a failed checkpoint save: ours, or a file storage's."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, CheckpointRefusedError):
            return current
        current = current.__cause__ or current.__context__
    blocked = _blocked_type(error)
    if blocked is None and "refusing to save" not in str(error):
        return None
    match = _CHECKPOINT_ID.search(str(error))
    refused = CheckpointRefusedError(
        match.group(1) if match else "?", workflow_name, iteration, error, blocked
    )
    refused.__cause__ = error
    return refused


def _blocked_type(error: BaseException) -> str | None:
    current: BaseException | None = error
    while current is not None:
        match = _BLOCKED.search(str(current))
        if match:
            return match.group(1)
        current = current.__cause__ or current.__context__
    return None


@dataclasses.dataclass(frozen=True)
class CheckpointInfo:
    """One stored checkpoint, as listed by :meth:`FlowsCheckpointStorage.history`."""

    checkpoint_id: str
    workflow_name: str
    superstep: int
    parent: str | None
    pending_request_ids: tuple[str, ...]
    sequence: int


class FlowsCheckpointStorage:
    """In-memory ``CheckpointStorage`` that encodes, refuses and decodes like production.

    ``allowed_types`` are extra classes (or ``"module:qualname"`` strings) the
    restricted unpickler may rebuild, as ``FileCheckpointStorage``'s
    ``allowed_checkpoint_types``; types registered with
    ``agent_framework.register_checkpoint_type`` are allowed too, as there.

    ``store`` (the ``flow_store`` fixture) makes that store hold the encoded
    checkpoints: they appear in ``flow_store.checkpoints()`` and
    ``flow_store.lineage(...)``, ``flow_store.tamper``/``discard`` act on what
    a restore loads, and refused saves are reported to it.
    """

    def __init__(
        self,
        *,
        allowed_types: Iterable[type | str] = (),
        store: Any = None,
        rules: CheckpointRules = "file",
    ) -> None:
        self._allowed: set[str] = {type_key(t) for t in allowed_types}
        self._store = store
        self._infos: dict[str, CheckpointInfo] = {}
        self._texts: dict[str, str] = {}
        self._objects: dict[str, WorkflowCheckpoint] = {}
        self._sequence = 0
        self._rules: CheckpointRules = check_rules(rules, "FlowsCheckpointStorage()")
        self._chosen = True
        self._why = "FlowsCheckpointStorage() applies them unless given rules='memory'"
        #: Every refused save, in order.
        self.refused: list[CheckpointRefusedError] = []

    # -- configuration ------------------------------------------------------------
    @property
    def allowed_types(self) -> frozenset[str]:
        return frozenset(self._allowed)

    def allow(self, *types: type | str) -> None:
        """Allow more types, as ``allowed_checkpoint_types`` would."""
        self._allowed.update(type_key(t) for t in types)

    def allow_like(self, storage: Any) -> None:
        """Allow what a ``FileCheckpointStorage`` allows (its ``allowed_checkpoint_types``)."""
        if isinstance(storage, FileCheckpointStorage):
            self._allowed.update(allowed_types_of(storage))

    @property
    def rules(self) -> CheckpointRules:
        """``"file"`` or ``"memory"``: the rules saves and loads follow now."""
        return self._rules

    @property
    def rules_chosen(self) -> bool:
        """Whether the test chose the rules (else they follow each run's workflow)."""
        return self._chosen

    def use_rules(self, rules: CheckpointRules | None) -> None:
        """Apply these rules to every save from now on; ``None``: follow each workflow.

        ``"file"`` is the strict choice: a workflow built with
        ``InMemoryCheckpointStorage`` is checked as if it wrote files.
        """
        if rules is None:
            self._chosen = False
            return
        self._rules = check_rules(rules, "use_rules()")
        self._chosen = True
        self._why = "the test chose them"

    def follow(self, built: Any) -> None:
        """Stand in for ``built``, the storage a workflow was built with (unless chosen)."""
        self.allow_like(built)
        if not self._chosen:
            self._rules, self._why = rules_for(built)

    # -- the codec ----------------------------------------------------------------
    def _decode(self, text: str) -> WorkflowCheckpoint:
        decoded = decode_checkpoint_value(json.loads(text), allowed_types=frozenset(self._allowed))
        return WorkflowCheckpoint.from_dict(decoded)

    def _encode(self, checkpoint: WorkflowCheckpoint) -> str:
        encoded = encode_checkpoint_value(checkpoint.to_dict())
        # As FileCheckpointStorage writes it (indent=2 only changes whitespace).
        return json.dumps(encoded, ensure_ascii=False)

    # -- records ------------------------------------------------------------------
    def _text(self, checkpoint_id: str) -> str | None:
        if checkpoint_id not in self._infos:
            return None
        if self._store is None:
            return self._texts.get(checkpoint_id)
        record = self._store.find_checkpoint(checkpoint_id)
        if record is None:  # discarded from the flow_store
            return None
        text: str = record.raw
        return text

    def _put(self, info: CheckpointInfo, text: str, checkpoint: WorkflowCheckpoint) -> None:
        self._infos.pop(info.checkpoint_id, None)  # a re-save moves to the end
        self._infos[info.checkpoint_id] = info
        self._texts[info.checkpoint_id] = text  # behind a flow_store: to tell a tamper
        if self._store is None:
            return
        self._store.add_checkpoint(
            id=info.checkpoint_id,
            location=info.checkpoint_id,
            parent_id=info.parent,
            branch=self._branch(info),
            trigger=f"superstep {info.superstep}",
            raw=text,
            framework="agent_framework",
            kind="json",
            base=info.workflow_name,
            state={
                k: v
                for k, v in checkpoint.state.items()
                if isinstance(k, str) and not k.startswith("_")
            },
        )

    def _branch(self, info: CheckpointInfo) -> str:
        """The lineage a checkpoint continues: its parent's, or a new one at a fork."""
        branches = {r.id: r.branch for r in self._store.checkpoints()}
        if info.parent is None or info.parent not in branches:
            roots = sum(
                1
                for i in self._infos.values()
                if i.workflow_name == info.workflow_name and i.parent is None
            )
            return info.workflow_name if roots <= 1 else f"{info.workflow_name}~{roots}"
        siblings = [i for i in self._infos.values() if i.parent == info.parent]
        parent_branch: str = branches[info.parent]
        return parent_branch if len(siblings) <= 1 else f"{parent_branch}~{len(siblings)}"

    def _live(self) -> list[CheckpointInfo]:
        return [i for i in self._infos.values() if self._text(i.checkpoint_id) is not None]

    # -- CheckpointStorage ----------------------------------------------------------
    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        checkpoint_id = str(checkpoint.checkpoint_id)
        if self._rules == "memory":
            text = self._encode_for_reading(checkpoint)
            self._objects[checkpoint_id] = copy.deepcopy(checkpoint)
        else:
            text = self._encode_or_refuse(checkpoint, checkpoint_id)
        self._sequence += 1
        info = CheckpointInfo(
            checkpoint_id=checkpoint_id,
            workflow_name=checkpoint.workflow_name,
            superstep=checkpoint.iteration_count,
            parent=checkpoint.previous_checkpoint_id,
            pending_request_ids=tuple(sorted(checkpoint.pending_request_info_events)),
            sequence=self._sequence,
        )
        self._put(info, text, checkpoint)
        return checkpoint_id

    def _encode_or_refuse(self, checkpoint: WorkflowCheckpoint, checkpoint_id: str) -> str:
        try:
            if not checkpoint_id or "/" in checkpoint_id or "\\" in checkpoint_id:
                raise WorkflowCheckpointException(f"Invalid checkpoint ID: {checkpoint_id}")
            text = self._encode(checkpoint)
            self._decode(text)
        except Exception as exc:
            refused = CheckpointRefusedError(
                checkpoint_id,
                checkpoint.workflow_name,
                checkpoint.iteration_count,
                exc,
                _blocked_type(exc),
                why=self._why or None,
            )
            self.refused.append(refused)
            if self._store is not None and not reported_by_the_run():
                self._store.note_checkpoint_failure(str(refused))
            raise WorkflowCheckpointException(
                f"Checkpoint {checkpoint_id} cannot be encoded or restored under this "
                "storage's allowed types; refusing to save."
            ) from refused
        return text

    def _encode_for_reading(self, checkpoint: WorkflowCheckpoint) -> str:
        """The JSON ``raw()`` shows under in-memory rules (nothing is refused)."""
        try:
            return self._encode(checkpoint)
        except Exception as exc:  # an object pickle cannot take: in memory that is fine
            return json.dumps({"__not_encodable__": f"{type(exc).__name__}: {exc}"})

    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        text = self._text(str(checkpoint_id))
        if text is None:
            known = ", ".join(i.checkpoint_id for i in self._live()) or "none"
            raise WorkflowCheckpointException(
                f"No checkpoint found with ID {checkpoint_id} (stored: {known})"
            )
        return self._read(str(checkpoint_id), text)

    def _read(self, checkpoint_id: str, text: str) -> WorkflowCheckpoint:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            # As FileCheckpointStorage reports a damaged file (and quoting nothing of it).
            raise WorkflowCheckpointException(
                f"Checkpoint {checkpoint_id} is not valid JSON and cannot be loaded."
            ) from exc
        saved = self._objects.get(checkpoint_id)
        if saved is None:
            return self._decode(text)
        original = self._texts.get(checkpoint_id, text)
        if text != original:  # tampered in the flow_store: decoded, never trusted
            decoded = decode_checkpoint_value(
                json.loads(text), allowed_types=self._allowed_for_memory(original)
            )
            return WorkflowCheckpoint.from_dict(decoded)
        return copy.deepcopy(saved)

    def _allowed_for_memory(self, original: str) -> frozenset[str]:
        """Under in-memory rules: the declared types and those the run's own save pickled
        (read from the plugin's encoding of it, never from the record being loaded)."""
        try:
            own = pickled_type_keys(json.loads(original))
        except ValueError:
            own = frozenset()
        return frozenset(self._allowed) | own

    async def list_checkpoints(self, *, workflow_name: str) -> list[WorkflowCheckpoint]:
        checkpoints = []
        for info in self.history(workflow_name):
            text = self._text(info.checkpoint_id)
            if text is not None:
                checkpoints.append(self._read(info.checkpoint_id, text))
        return checkpoints

    async def delete(self, checkpoint_id: str) -> bool:
        if self._text(str(checkpoint_id)) is None:
            return False
        self._infos.pop(str(checkpoint_id), None)
        self._texts.pop(str(checkpoint_id), None)
        self._objects.pop(str(checkpoint_id), None)
        if self._store is not None:
            record = self._store.find_checkpoint(str(checkpoint_id))
            if record is not None:
                self._store.discard(record)
        return True

    async def get_latest(self, *, workflow_name: str) -> WorkflowCheckpoint | None:
        latest = self.latest_id(workflow_name)
        return None if latest is None else await self.load(latest)

    async def list_checkpoint_ids(self, *, workflow_name: str) -> list[str]:
        return [i.checkpoint_id for i in self.history(workflow_name)]

    def round_trip(self, value: Any) -> tuple[Any, list[Any]]:
        """``value`` through the codec as a checkpoint holds it: (what comes back, changes).

        Raises :class:`CheckpointRefusedError` if the file storage would refuse it.
        """
        from pytest_flows.adapters import differences

        try:
            encoded = json.dumps(encode_checkpoint_value(value), ensure_ascii=False)
            back = decode_checkpoint_value(
                json.loads(encoded), allowed_types=frozenset(self._allowed)
            )
        except Exception as exc:
            raise CheckpointRefusedError("(round trip)", "-", 0, exc, _blocked_type(exc)) from exc
        return back, differences(value, back)

    def assert_round_trip(self, value: Any) -> None:
        """Assert that ``value`` comes back unchanged from a checkpoint."""
        _, changes = self.round_trip(value)
        if changes:
            raise AssertionError(
                "checkpoint save -> load does not give the value back:\n"
                + "".join(f"  {change.describe()}\n" for change in changes)
            )

    # -- for tests --------------------------------------------------------------------
    def history(self, workflow_name: str | None = None) -> list[CheckpointInfo]:
        """Every stored checkpoint (of one workflow, if named), in save order."""
        return [
            i for i in self._live() if workflow_name is None or i.workflow_name == workflow_name
        ]

    def ids(self, workflow_name: str | None = None) -> list[str]:
        return [i.checkpoint_id for i in self.history(workflow_name)]

    def latest_id(self, workflow_name: str | None = None) -> str | None:
        """The id of the checkpoint saved last (of one workflow, if named)."""
        history = self.history(workflow_name)
        return history[-1].checkpoint_id if history else None

    def info(self, checkpoint_id: str) -> CheckpointInfo:
        if self._text(checkpoint_id) is None:
            raise KeyError(f"no checkpoint {checkpoint_id!r} in this storage")
        return self._infos[checkpoint_id]

    def lineage(self, checkpoint_id: str) -> list[str]:
        """The ids from the first checkpoint of the run down to ``checkpoint_id``."""
        chain: list[str] = []
        current: str | None = checkpoint_id
        while current is not None and current in self._infos and current not in chain:
            chain.append(current)
            current = self._infos[current].parent
        return chain[::-1]

    def children(self, checkpoint_id: str) -> list[str]:
        """Checkpoints whose parent is ``checkpoint_id`` (more than one after time travel)."""
        return [i.checkpoint_id for i in self.history() if i.parent == checkpoint_id]

    def at_superstep(self, superstep: int, workflow_name: str | None = None) -> list[str]:
        """Ids of the checkpoints taken at superstep boundary ``superstep``, in save order."""
        return [i.checkpoint_id for i in self.history(workflow_name) if i.superstep == superstep]

    def raw(self, checkpoint_id: str) -> dict[str, Any]:
        """The JSON document ``FileCheckpointStorage`` would have written."""
        text = self._text(checkpoint_id)
        if text is None:
            raise KeyError(f"no checkpoint {checkpoint_id!r} in this storage")
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    def __len__(self) -> int:
        return len(self._live())

    def __bool__(self) -> bool:
        # Agent Framework picks storage with `runtime or built`: an empty storage
        # must not read as "no storage".
        return True

    def __repr__(self) -> str:
        return (
            f"<FlowsCheckpointStorage rules={self._rules} checkpoints={len(self)} "
            f"refused={len(self.refused)}>"
        )
