"""Random small flows as Python source, for the soundness check of exploration.

A hypothesis strategy draws a *spec* (methods, triggers, statements); :func:`crewai_source`
and :func:`af_source` render it as the source a user would write, and :func:`load` makes
it a class. The spec shrinks (hypothesis), and a failing check prints the source: the
minimal flow that shows the problem.

:func:`check_sound` is the invariant: every outcome seeds reach is among the outcomes of
a complete exploration, and every outcome replays from its schedule.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import linecache
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, assume, note, settings
from hypothesis import strategies as st
from long_mode import LONG

from pytest_flows._internal.runtime.participants import real_monotonic

#: The random-flow checks' sizes: a bounded sample in CI, over 1,000 larger flows in the
#: long mode, there in SHARDS tests of EXAMPLES each (so ``-n 2`` keeps both cores busy);
#: each a flow the run has not checked (see :func:`already_checked`).
#: ``PYTEST_FLOWS_SOUNDNESS_EXAMPLES`` sets the examples a shard (a shorter or longer run).
SHARDS = 4 if LONG else 1
EXAMPLES = int(os.environ.get("PYTEST_FLOWS_SOUNDNESS_EXAMPLES", "270")) if LONG else 3
SEEDS = range(16 if LONG else 8)
#: A search stopped here is not complete: it checks only that its outcomes replay.
#: ``PYTEST_FLOWS_SOUNDNESS_MAX_SCHEDULES`` sets it in the long mode (the log and
#: :func:`report` count the searches stopped at it).
MAX_SCHEDULES = int(os.environ.get("PYTEST_FLOWS_SOUNDNESS_MAX_SCHEDULES", "400")) if LONG else 60
#: A file each checked flow appends one JSON line to (the long mode's report; see
#: :func:`report`): its size, whether its search was complete, schedules, seconds.
LOG_VAR = "PYTEST_FLOWS_SOUNDNESS_LOG"
#: ``PYTEST_FLOWS_SOUNDNESS_KEEP_GOING=1`` (long mode, with a log): a failing check is
#: kept in ``<log>.failures`` and the shard goes on drawing flows, instead of stopping
#: there and shrinking it (a survey of many flows: hypothesis stops a test at its first
#: failure). Run a kept flow again to shrink it.
KEEP_GOING = (
    LONG
    and os.environ.get("PYTEST_FLOWS_SOUNDNESS_KEEP_GOING", "") not in ("", "0")
    and bool(os.environ.get(LOG_VAR))
)
#: ``PYTEST_FLOWS_SOUNDNESS_HANG_SECONDS`` (long mode, with a log): a check still running
#: after this many real seconds writes every thread's stack to ``<log>.hangs/<flow>.txt``
#: (the flow's source is in its marker, ``<log>.flows/<flow>``) and ends its worker: a
#: hung check is a crashed worker naming its flow, never an endless wait (see
#: :func:`hang_watch`). The slowest check of the long runs so far took under a minute.
HANG_SECONDS = float(os.environ.get("PYTEST_FLOWS_SOUNDNESS_HANG_SECONDS", "600"))
#: Their hypothesis settings: the same sample on every CI run, a fresh one in the long mode.
SOUNDNESS_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=not LONG,
    suppress_health_check=list(HealthCheck),
)

_FIELDS = ("x", "y")
_counter = itertools.count()
#: The flows this process claimed for a check (by their source's hash).
_claimed: set[str] = set()


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def already_checked(source: str) -> bool:
    """Whether this run of the long mode has checked ``source`` or is checking it: in
    this process, or, with a log, in another shard's worker (a marker file per flow
    beside the log, claimed here when the check is about to begin). Hypothesis draws
    the smallest flows first in every shard, and a drawn flow again now and then; a
    long-mode test rejects such a draw (``assume``), so each check is of a flow the run
    has not checked. The marker holds the flow's source (a check that hangs leaves it).
    A flow whose check failed is let go again (:func:`checking`): hypothesis replays it
    to shrink and report it."""
    digest = _digest(source)
    if digest in _claimed:
        return True
    path = os.environ.get(LOG_VAR)
    if path:
        os.makedirs(path + ".flows", exist_ok=True)
        try:
            marker = os.open(
                os.path.join(path + ".flows", digest), os.O_CREAT | os.O_EXCL | os.O_WRONLY
            )
        except FileExistsError:
            return True
        # the source: a check that hangs (claimed, never logged) can be run again
        with os.fdopen(marker, "w", encoding="utf-8") as held:
            held.write(source)
    _claimed.add(digest)
    return False


@contextlib.contextmanager
def checking(source: str) -> Iterator[None]:
    """The block checks ``source``: if it fails, the flow is let go (see
    :func:`already_checked`), so that hypothesis can run it again to shrink and report it,
    and with a log, the source and the failure go to ``<log>.failures`` (with
    :data:`KEEP_GOING`, an ``AssertionError`` stops there: the test goes on)."""
    try:
        with hang_watch(source) if LONG else contextlib.nullcontext():
            yield
    except AssertionError as failure:
        if not KEEP_GOING:
            _let_go(source, failure)
            raise
        _keep(source, failure)
    except BaseException as failure:
        _let_go(source, failure)
        raise


@contextlib.contextmanager
def hang_watch(source: str, seconds: float | None = None, *, end: bool = True) -> Iterator[None]:
    """With a log: if the block (one flow's check) runs over ``seconds`` (default
    :data:`HANG_SECONDS`) real seconds, every thread's stack goes to
    ``<log>.hangs/<flow>.txt`` (``faulthandler``) and, with ``end``, the process ends
    there (an xdist worker: the shard fails as a crashed worker, the others go on). The
    file stays only if the dump was written. One long run hung on a CPython deadlock
    that left every thread in a futex wait (see ``pytest_flows/_internal/runtime/
    frames.py``): this is how the next one is found, and bounded."""
    import faulthandler

    path = os.environ.get(LOG_VAR)
    if not path:
        yield
        return
    os.makedirs(path + ".hangs", exist_ok=True)
    name = os.path.join(path + ".hangs", _digest(source) + ".txt")
    limit = HANG_SECONDS if seconds is None else seconds
    header = (
        f"the check of flow {_digest(source)} ran over {limit:g} s (its source: "
        f"{path}.flows/{_digest(source)}); every thread's stack:\n"
    )
    with open(name, "w", encoding="utf-8") as held:
        held.write(header)
        held.flush()
        faulthandler.dump_traceback_later(limit, exit=end, file=held)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    if os.path.getsize(name) <= len(header.encode()):
        os.remove(name)


def _let_go(source: str, failure: BaseException) -> None:
    digest = _digest(source)
    _claimed.discard(digest)
    path = os.environ.get(LOG_VAR)
    if path:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(path + ".flows", digest))
        _keep(source, failure)


def _keep(source: str, failure: BaseException) -> None:
    path = os.environ.get(LOG_VAR)
    if path:
        # A long run stopped before hypothesis reports still keeps what failed.
        with open(path + ".failures", "a", encoding="utf-8") as kept:
            kept.write(f"--- {_digest(source)}: {type(failure).__name__}: {failure}\n{source}\n")


def check_drawn(source: str, check: Callable[[], object]) -> None:
    """Run ``check`` of a drawn flow's ``source`` as the random-flow tests of every
    framework do: in the long mode only a flow the run has not checked (see
    :func:`already_checked`), the source in hypothesis's report, and a failure kept (see
    :func:`checking`)."""
    if LONG:  # the long mode counts distinct flows: one checked already is no news
        assume(not already_checked(source))
    note(source)
    with checking(source):
        check()


@dataclasses.dataclass(frozen=True)
class Method:
    name: str
    is_async: bool
    trigger: tuple[str, ...]  # ("start",), ("listen", a), ("and", a, b), ("or", a, b)
    body: tuple[tuple[Any, ...], ...]
    router: bool = False
    locked: bool = False


_OPS_SYNC = ("read", "incr", "set", "append", "check", "sleep")


@st.composite
def _body(draw: Any, is_async: bool, size: int) -> tuple[tuple[Any, ...], ...]:
    ops = []
    for _ in range(draw(st.integers(0, size))):
        kind = draw(st.sampled_from(_OPS_SYNC))
        if kind == "sleep":
            ops.append(("sleep", draw(st.integers(0, 12))))
        elif kind == "append":
            ops.append(("append",))
        else:
            ops.append((kind, draw(st.sampled_from(_FIELDS))))
    return tuple(ops)


@st.composite
def crewai_specs(draw: Any) -> tuple[Method, ...]:
    """One or two ``@start``, 2-4 sync and async listeners (``and_``, ``or_``), perhaps a
    router, with reads, writes, appends, check-then-acts, sleeps and a lock."""
    size = 4 if LONG else 3
    methods: list[Method] = []
    for i in range(draw(st.integers(1, 2))):
        is_async = draw(st.booleans())
        methods.append(Method(f"s{i}", is_async, ("start",), draw(_body(is_async, size))))
    labels: list[str] = []
    for i in range(draw(st.integers(2, 4 if LONG else 3))):
        names = [m.name for m in methods if not m.router] + labels
        shape = draw(st.sampled_from(("listen", "listen", "and", "or")))
        if shape == "listen" or len(names) < 2:
            trigger: tuple[str, ...] = ("listen", draw(st.sampled_from(names)))
        else:
            pair = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
            trigger = (shape, *pair)
        is_async = draw(st.booleans())
        router = not labels and draw(st.integers(0, 4)) == 0
        locked = not is_async and draw(st.integers(0, 3)) == 0
        methods.append(
            Method(f"m{i}", is_async, trigger, draw(_body(is_async, size)), router, locked)
        )
        if router:
            labels.extend(("hi", "lo"))
    return tuple(methods)


def _trigger(trigger: tuple[str, ...]) -> str:
    kind, *names = trigger
    quoted = [n if n not in ("hi", "lo") else repr(n) for n in names]
    if kind == "start":
        return "@start()"
    if kind == "listen":
        return f"@listen({quoted[0]})"
    return f"@listen({kind}_({', '.join(quoted)}))"


def crewai_source(spec: tuple[Method, ...], name: str = "Generated") -> str:
    """The flow of ``spec`` as Python source."""
    lines = [
        "import asyncio",
        "import threading",
        "import time",
        "",
        "from crewai.flow.flow import Flow, and_, listen, or_, router, start",
        "from pydantic import BaseModel, Field",
        "",
        "",
        "class State(BaseModel):",
        "    x: int = 0",
        "    y: int = 0",
        "    log: list[str] = Field(default_factory=list)",
        "",
        "",
        f"class {name}(Flow[State]):",
        "    def __init__(self, **kwargs):",
        "        super().__init__(**kwargs)",
        "        self.guard = threading.Lock()",
    ]
    for m in spec:
        deco = _trigger(m.trigger)
        if m.router:
            deco = deco.replace("@listen(", "@router(", 1)
        lines += ["", f"    {deco}", f"    {'async ' if m.is_async else ''}def {m.name}(self):"]
        indent = "        "
        if m.locked:
            lines.append(f"{indent}with self.guard:")
            indent += "    "
        lines.append(f"{indent}v = 0")
        for op in m.body:
            lines.append(indent + _statement(op, m))
        if m.router:
            lines.append(f"{indent}return 'hi' if self.state.x > 0 else 'lo'")
        else:
            lines.append(f"{indent}return {m.name!r}")
    return "\n".join(lines) + "\n"


def _statement(op: tuple[Any, ...], m: Method) -> str:
    kind = op[0]
    if kind == "read":
        return f"v = self.state.{op[1]}"
    if kind == "incr":
        return f"self.state.{op[1]} = v + 1"
    if kind == "set":
        return f"self.state.{op[1]} = {len(m.name) + int(m.name[1:]) + 1}"
    if kind == "append":
        return f"self.state.log.append({m.name!r})"
    if kind == "check":
        return f"if self.state.{op[1]} == 0: self.state.{op[1]} = {int(m.name[1:]) + 5}"
    seconds = op[1] / 100
    return f"await asyncio.sleep({seconds})" if m.is_async else f"time.sleep({seconds})"


# -- Agent Framework ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Worker:
    name: str
    body: tuple[tuple[Any, ...], ...]


@st.composite
def af_specs(draw: Any) -> tuple[Worker, ...]:
    """A fan-out from a start executor to 2-4 workers, each reading and writing shared
    state keys with sleeps between, and a fan-in that reports the state."""
    size = 4 if LONG else 3
    workers = []
    for i in range(draw(st.integers(2, 4 if LONG else 3))):
        ops = []
        for _ in range(draw(st.integers(1, size))):
            kind = draw(st.sampled_from(("read", "incr", "set", "sleep")))
            if kind == "sleep":
                ops.append(("sleep", draw(st.integers(0, 12))))
            else:
                ops.append((kind, draw(st.sampled_from(_FIELDS))))
        workers.append(Worker(f"w{i}", tuple(ops)))
    return tuple(workers)


def af_source(spec: tuple[Worker, ...], name: str = "build") -> str:
    """The workflow of ``spec`` as Python source: ``build()`` returns a fresh workflow."""
    lines = [
        "import asyncio",
        "from typing import Never",
        "",
        "from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler",
        "",
        "",
        "class Start(Executor):",
        "    @handler",
        "    async def start(self, text: str, ctx: WorkflowContext[str]) -> None:",
        "        await ctx.send_message(text)",
        "",
        "",
        "class Tally(Executor):",
        "    @handler",
        "    async def tally(self, reports: list[str], ctx: WorkflowContext[Never, str]) -> None:",
        "        state = {k: ctx.get_state(k) for k in ('x', 'y')}",
        "        await ctx.yield_output(f'{state} {sorted(reports)}')",
    ]
    for w in spec:
        lines += [
            "",
            "",
            f"class {w.name.upper()}(Executor):",
            "    @handler",
            "    async def work(self, text: str, ctx: WorkflowContext[str]) -> None:",
            "        v = 0",
        ]
        for op in w.body:
            kind = op[0]
            if kind == "read":
                lines.append(f"        v = ctx.get_state({op[1]!r}) or 0")
            elif kind == "incr":
                lines.append(f"        ctx.set_state({op[1]!r}, v + 1)")
            elif kind == "set":
                lines.append(f"        ctx.set_state({op[1]!r}, {w.name!r})")
            else:
                lines.append(f"        await asyncio.sleep({op[1] / 100})")
        lines.append(f"        await ctx.send_message({w.name!r})")
    names = ", ".join(f"{w.name.upper()}(id={w.name!r})" for w in spec)
    lines += [
        "",
        "",
        f"def {name}():",
        "    start = Start(id='start')",
        f"    workers = [{names}]",
        "    return (",
        "        WorkflowBuilder(start_executor=start, name='generated')",
        "        .add_fan_out_edges(start, workers)",
        "        .add_fan_in_edges(workers, Tally(id='tally'))",
        "        .build()",
        "    )",
    ]
    return "\n".join(lines) + "\n"


# -- loading and checking ---------------------------------------------------------------


def load(source: str, name: str) -> Any:
    """``name`` from ``source``, compiled under a file name ``inspect`` can read back
    (crewai reads a router's source for its labels), run as a module of its own
    (LangGraph reads a state class's annotations through its module, which must be
    importable)."""
    filename = f"<generated flow {next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"generated_{next(_counter)}")
    sys.modules[module.__name__] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # our own generated source
    return getattr(module, name)


@dataclasses.dataclass
class Checked:
    complete: bool
    schedules: int
    outcomes: int
    seeded: int


def check_sound(
    target: Any,
    args: tuple[Any, ...],
    source: str,
    *,
    seeds: range,
    max_schedules: int,
    rebuild: Any = None,
    options: dict[str, Any] | None = None,
    test_id: str = "tests::random-flows",
    log_extra: dict[str, Any] | None = None,
) -> Checked:
    """Assert the invariant for ``target`` (see the module docstring). ``options`` go to
    every run and search (``asynchronous=True``); the seeds' runs are under ``test_id``;
    ``log_extra`` joins the flow's line in the log."""
    from pytest_flows import FlowsSession, explore
    from pytest_flows._internal.exploration.explore import outcome_key

    began = real_monotonic()

    options = options or {}
    with FlowsSession(test_id=test_id) as session:
        found = explore(session, target, *args, max_schedules=max_schedules, **options)
        for outcome in found.outcomes:
            again = session.run(
                rebuild() if rebuild else target,
                *args,
                schedule=outcome.schedule,
                raise_on_error=False,
                **options,
            )
            assert outcome_key(again) == outcome.text, (
                f"schedule {outcome.schedule} did not replay its outcome:\n"
                f"  explored: {outcome.text}\n  replayed: {outcome_key(again)}\n{source}"
            )
    reached: dict[str, int] = {}
    # What seeds reach is compared with a complete search only: a search stopped at
    # the cap may lack outcomes, so its flow's seeded runs would check nothing.
    for seed in seeds if found.complete else ():
        with FlowsSession(seed=seed, test_id=test_id) as session:
            target_now = rebuild() if rebuild else target
            run = session.run(target_now, *args, raise_on_error=False, **options)
            reached.setdefault(outcome_key(run), seed)
    if found.complete:
        missed = {text: seed for text, seed in reached.items() if text not in found.texts}
        assert not missed, (
            f"a complete exploration ({found.schedules_run} schedules, "
            f"{len(found.outcomes)} outcomes) misses what seeds reach: {missed}\n{source}"
        )
    checked = Checked(found.complete, found.schedules_run, len(found.outcomes), len(reached))
    _log(source, checked, real_monotonic() - began, log_extra or {})
    return checked


def _framework(source: str) -> str:
    for framework in ("crewai", "langgraph"):
        if f"from {framework}" in source:
            return framework
    return "agent_framework"


def _log(source: str, checked: Checked, seconds: float, extra: dict[str, Any]) -> None:
    path = os.environ.get(LOG_VAR)
    if not path:
        return
    line = {
        "framework": _framework(source),
        "flow": _digest(source),
        "lines": source.count("\n"),
        "seconds": round(seconds, 3),
        **dataclasses.asdict(checked),
        **extra,
    }
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")


def report(path: str) -> str:
    """The long run's summary from its log, per framework: distinct flows, how many
    searches were complete, the schedules they took, the time and the largest flow."""
    with open(path, encoding="utf-8") as log:
        rows = [json.loads(line) for line in log if line.strip()]
    lines = []
    for framework in sorted({row["framework"] for row in rows}):
        mine = [row for row in rows if row["framework"] == framework]
        flows = list({row["flow"]: row for row in mine}.values())  # hypothesis may rerun one
        complete = [row for row in flows if row["complete"]]
        schedules = sorted(row["schedules"] for row in complete) or [0]
        largest = max(row["lines"] for row in flows)
        lines.append(
            f"{framework}: {len(flows)} distinct flows ({len(mine)} checks) in "
            f"{sum(row['seconds'] for row in mine):.0f} s of checking; {len(complete)} "
            f"complete searches (schedules: median {schedules[len(schedules) // 2]}, max "
            f"{schedules[-1]}), {len(flows) - len(complete)} stopped at the cap (replay "
            f"checked only); largest flow {largest} lines"
        )
    lines.append(_failures(path))
    return "\n".join(lines)


def _failures(path: str) -> str:
    """What ``<log>.failures`` kept (see :func:`checking`): a failing check's flow, and
    each smaller one hypothesis tried while shrinking it that failed too."""
    try:
        with open(path + ".failures", encoding="utf-8") as kept:
            heads = [line for line in kept if line.startswith("--- ")]
    except FileNotFoundError:
        heads = []
    digests = {head.split(":", 1)[0] for head in heads}
    folder = path + ".hangs"
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    # a check still running has its file too, with no stack in it yet
    hangs = [n for n in names if "most recent call first" in _read(os.path.join(folder, n))]
    hung = f"; hung checks: {len(hangs)} (their stacks in {folder}/)" if hangs else ""
    return f"failures kept: {len(digests)} distinct flows ({len(heads)} checks){hung}"


def _read(name: str) -> str:
    try:
        with open(name, encoding="utf-8", errors="replace") as held:
            return held.read()
    except FileNotFoundError:  # its check ended meanwhile
        return ""


if __name__ == "__main__":  # python tests/random_flows.py LOG
    print(report(sys.argv[1]))
