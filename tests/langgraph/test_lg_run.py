"""flows.run on real LangGraph graphs: targets, the run object, the trace, bad input."""

from __future__ import annotations

import subprocess
import sys

import lg_graphs
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from pytest_flows import FlowsUsageError
from pytest_flows.langgraph import GraphRun

TOUR_TRACE = [
    'graph started LangGraph input={"notes": [], "x": 1} thread=thread-1',
    "checkpoint saved c1 step=-1 source=input parent=- next=[__start__]",
    "checkpoint saved c2 step=0 source=loop parent=c1 next=[a, b]",
    "superstep started 1 tasks=[a, b]",
    "task started a triggers=[branch:to:a]",
    "router a path=route chose=sub",
    'task finished a writes={"notes": ["a"]}',
    "task started b triggers=[branch:to:b]",
    "router b path=fan chose=[Send(worker), Send(worker), Send(worker)]",
    'send worker arg={"x": 0}',
    'send worker arg={"x": 1}',
    'send worker arg={"x": 2}',
    'task finished b writes={"notes": ["b"]}',
    "checkpoint saved c3 step=1 source=loop parent=c2 next=[sub, worker, worker, worker]",
    "superstep started 2 tasks=[sub, worker[0], worker[1], worker[2]]",
    "task started sub triggers=[branch:to:sub]",
    "  superstep started 1 tasks=[inner]",
    "  task started inner triggers=[branch:to:inner]",
    '  task finished inner writes={"notes": ["inner"]}',
    'task finished sub writes={"notes": ["a", "b", "inner"], "x": 1}',
    'task started worker[0] arg={"x": 0}',
    'task finished worker[0] writes={"notes": ["worker0"]}',
    'task started worker[1] arg={"x": 1}',
    'task finished worker[1] writes={"notes": ["worker1"]}',
    'task started worker[2] arg={"x": 2}',
    'task finished worker[2] writes={"notes": ["worker2"]}',
    "checkpoint saved c4 step=2 source=loop parent=c3 next=[ask]",
    "superstep started 3 tasks=[ask]",
    "task started ask triggers=[branch:to:ask]",
    "interrupt ask id=i1 value='ship it?'",
    "task interrupted ask",
]


def test_a_compiled_graph_runs_with_a_canonical_trace(flows):
    graph = lg_graphs.tour_builder().compile()

    run = flows.run(graph, {"notes": [], "x": 1})

    assert isinstance(run, GraphRun)
    assert run.status == "interrupted"
    assert run.next == ("ask",)
    assert [(p.node, p.value) for p in run.pending] == [("ask", "ship it?")]
    assert run.interrupt("i1") is run.pending[0]
    assert run.result["__interrupt__"][0].value == "ship it?"
    assert run.trace.lines() == [
        *TOUR_TRACE,
        "graph interrupted LangGraph next=[ask] pending=[i1@ask]",
    ]
    assert run.checkpoint_names == ["c1", "c2", "c3", "c4"]
    assert run.thread_id == "thread-1"


def test_a_run_continues_with_command_resume_on_its_config(flows):
    graph = lg_graphs.tour_builder().compile()
    paused = flows.run(graph, {"notes": [], "x": 1})

    resumed = flows.run(graph, Command(resume="yes"), config=paused.config)

    assert resumed.status == "finished"
    assert resumed.values["notes"][-1] == "answer=yes"
    assert resumed.trace.lines() == [
        "graph started LangGraph input=Command(resume='yes') thread=thread-1",
        "checkpoint loaded c4 step=2 source=loop parent=c3 next=[ask]",
        "superstep started 3 tasks=[ask]",
        "task started ask triggers=[branch:to:ask]",
        'task finished ask writes={"notes": ["answer=yes"]}',
        "checkpoint saved c5 step=3 source=loop parent=c4",
        'graph finished LangGraph values={"notes": ["a", "b", "a", "b", "inner", "worker0", '
        '"worker1", "worker2", "answer=yes"], "x": 1}',
    ]
    assert resumed.checkpoint_names == ["c5"]


def test_the_users_graph_is_never_changed(flows):
    saver = InMemorySaver()
    graph = lg_graphs.tour_builder().compile(checkpointer=saver)
    before = dict(vars(graph))

    run = flows.run(graph, {"notes": [], "x": 0})

    assert run.status == "finished"
    assert vars(graph) == before and graph.checkpointer is saver
    assert list(saver.list(None)) == []  # the test's saver took the checkpoints
    assert run.graph is not graph and run.get_state().values == run.values


def test_a_builder_is_compiled_for_each_run(flows):
    builder = lg_graphs.tour_builder()

    first = flows.run(builder, {"notes": [], "x": 0})
    second = flows.run(builder, inputs={"notes": [], "x": 0})

    assert first.graph is not second.graph
    assert (
        first.values
        == second.values
        == {
            "notes": ["a", "b", "done", "worker0", "worker1", "worker2"],
            "x": 0,
        }
    )
    assert (first.thread_id, second.thread_id) == ("thread-1", "thread-2")


def test_an_entrypoint_runs_with_its_task_calls_under_it(flows):
    run = flows.run(lg_graphs.doubler, [1, 2])

    assert run.status == "interrupted"
    assert run.trace.lines()[2:] == [
        "superstep started 0 tasks=[doubler]",
        "task started doubler triggers=[__start__]",
        "  task started double[0]",
        "  task finished double[0] writes=2",
        "  task started double[1]",
        "  task finished double[1] writes=4",
        "  task started confirm[2]",
        "  interrupt confirm[2] id=i1 value='total 6?'",
        "  task interrupted confirm[2]",
        "interrupt doubler id=i1 value='total 6?'",
        "task interrupted doubler",
        "graph interrupted LangGraph next=[doubler] pending=[i1@doubler]",
    ]
    done = flows.run(lg_graphs.doubler, Command(resume=True), config=run.config)
    assert done.values == {"total": 6, "confirmed": True}


def test_a_graph_that_test_code_invokes_itself_is_traced(flows):
    graph = lg_graphs.parallel_builder(2).compile()

    graph.invoke({"notes": []})

    assert flows.trace.lines() == [
        "graph started LangGraph",
        "superstep started 1 tasks=[start]",
        "task started start triggers=[branch:to:start]",
        'task finished start writes={"notes": ["start"]}',
        "superstep started 2 tasks=[n0, n1]",
        "task started n0 triggers=[branch:to:n0]",
        'task finished n0 writes={"notes": ["n0"]}',
        "task started n1 triggers=[branch:to:n1]",
        'task finished n1 writes={"notes": ["n1"]}',
        "superstep started 3 tasks=[join]",
        "task started join triggers=[branch:to:join, join:n0+n1:join]",
        'task finished join writes={"notes": ["join"]}',
        "graph finished LangGraph",
    ]


def test_a_failing_node_fails_the_run_with_its_error(flows):
    def broken(state):
        raise ValueError("no stock")

    builder = lg_graphs.parallel_builder(2, broken={"n1": broken})
    with pytest.raises(ValueError, match="no stock"):
        flows.run(builder, {"notes": []})
    run = flows.run(builder, {"notes": []}, raise_on_error=False)
    assert run.status == "failed" and isinstance(run.error, ValueError)
    assert run.trace.lines()[-1] == "graph failed LangGraph error='ValueError: no stock'"
    assert "task failed n1 error='ValueError: no stock'" in run.trace.lines()


def test_a_remote_graph_is_refused_naming_the_fix(flows):
    from langgraph.pregel.remote import RemoteGraph

    remote = RemoteGraph("agent", url="http://127.0.0.1:9")
    with pytest.raises(FlowsUsageError, match=r"RemoteGraph .*import the compiled graph"):
        flows.run(remote, {"notes": []})


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "needs the graph's input"),
        (({}, {}), {}, "at most one positional argument"),
        (({},), {"inputs": {}}, "got the input more than once"),
        (({},), {"subgraphs": True}, "unknown keyword argument.*subgraphs"),
        (({},), {"stream_mode": "tokens"}, "stream_mode='tokens'.*one of LangGraph's"),
        (({},), {"config": "thread-1"}, "config is a RunnableConfig mapping"),
        ((Command(resume="x"),), {}, "continues a thread but names none"),
    ],
)
def test_bad_arguments_name_the_fix(flows, args, kwargs, message):
    graph = lg_graphs.parallel_builder(2).compile()
    with pytest.raises(FlowsUsageError, match=message):
        flows.run(graph, *args, **kwargs)


def test_importing_the_plugin_imports_no_langgraph():
    code = (
        "import sys, pytest_flows, pytest_flows.plugin, pytest_flows.adapters\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langgraph', 'langchain_core')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_fixture_binds_with_langgraph_imported(flows, fake_llm, fake_tools, flow_store):
    # (the model, tool and store parts load lazily: a test of another framework that
    # requests these fixtures must not fail because langgraph is imported in the process)
    run = flows.run(lg_graphs.parallel_builder(2), {"notes": []})
    assert run.status == "finished"


def test_a_line_a_fake_records_inside_a_node_stays_in_that_nodes_block(flows):
    from pytest_flows.adapters import TraceEvent
    from pytest_flows.langgraph._adapter import ADAPTER

    sink = ADAPTER.trace_sink(flows)  # (the flows fixture is the session)

    def n1(state):
        sink(TraceEvent(kind="llm.call", name="n1", fields=(("reply", "hi"),)))
        return {"notes": ["n1"]}

    run = flows.run(lg_graphs.parallel_builder(2, broken={"n1": n1}), {"notes": []})

    lines = run.trace.lines()
    start = lines.index("task started n1 triggers=[branch:to:n1]")
    assert lines[start + 1 : start + 3] == [
        "llm call n1 reply=hi",
        'task finished n1 writes={"notes": ["n1"]}',
    ]


def test_the_trace_forgets_a_runs_tasks_once_it_ends(flows):
    # a task's lines are kept by its namespace while its graph runs (fakes' lines join
    # it); a test of many runs must not keep every run's tasks
    from pytest_flows.langgraph._adapter import ADAPTER

    graph = lg_graphs.parallel_builder(3).compile()
    for _ in range(3):
        flows.run(graph, {"notes": []})
    graph.invoke({"notes": []})  # a direct invocation, traced too
    assert ADAPTER.watch(flows)._tasks == {}
