"""The largest import circle in pytest_flows, counting imports made only for typing.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/import_circle.py [--core]

A circle is a strongly connected component of the module import graph (grimp's, with
``if TYPE_CHECKING:`` imports and imports inside functions included): every file in it
reaches every other through imports. import-linter's acyclic contract excludes the
typing-only imports, so this circle is what a reader still has to climb through when
following annotations. ``--core`` leaves the adapter packages out (their own graphs are
theirs). Prints the size of the largest circle and its files.
"""

from __future__ import annotations

import sys

import grimp


def _largest_circle(graph: grimp.ImportGraph, modules: set[str]) -> list[str]:
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    best: list[str] = []
    counter = 0
    # Iterative Tarjan: the graph is small, but recursion limits are not a thing to think about.
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > len(best):
                    best = sorted(component)
    return best


def main() -> None:
    graph = grimp.build_graph("pytest_flows", exclude_type_checking_imports=False, cache_dir=None)
    modules = {m for m in graph.modules if m.startswith("pytest_flows")}
    if "--core" in sys.argv:
        adapters = ("pytest_flows.crewai", "pytest_flows.agent_framework", "pytest_flows.langgraph")
        modules = {m for m in modules if not m.startswith(adapters)}
    circle = _largest_circle(graph, modules)
    print(f"largest import circle (typing imports counted): {len(circle)} files")
    for module in circle:
        print("   ", module)


if __name__ == "__main__":
    main()
