"""A reduction change, before and after, on the same generated flows: the outcomes of
every search complete on both sides must be the same (a lost outcome is a miss the seeds
of the random-flow check may never reach), and the schedules say what it saves.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    BENCH_BEFORE=/path/to/other/checkout .venv/bin/python tests/benchmarks/bench_random_diff.py

``BENCH_FLOWS`` (default 300) crewAI flows are drawn from the random-flow check's
strategy (``tests/random_flows.py``, hypothesis's generate phase, no database), the
distinct ones explored with ``max_schedules=BENCH_CAP`` (default 150) under the check's
test id, here and, with ``BENCH_BEFORE``, in a subprocess on that checkout's package.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from benchkit import HERE  # first: crewai's offline settings, the test flows' path

# isort: split
sys.path.insert(0, str(HERE.parent))
import random_flows
from hypothesis import HealthCheck, Phase, given, settings

from pytest_flows import FlowsSession, explore

CAP = int(os.environ.get("BENCH_CAP", "150"))


def draw(count: int) -> list[str]:
    sources: list[str] = []

    @settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(spec=random_flows.crewai_specs())
    def one(spec: tuple[random_flows.Method, ...]) -> None:
        sources.append(random_flows.crewai_source(spec))

    one()
    return list(dict.fromkeys(sources))


def explore_all(sources: list[str]) -> list[dict[str, object]]:
    found = []
    for source in sources:
        flow = random_flows.load(source, "Generated")
        with FlowsSession(test_id="tests::random-flows") as session:
            result = explore(session, flow, max_schedules=CAP)
        found.append(
            {"complete": result.complete, "schedules": result.schedules_run,
             "texts": sorted(result.texts)}
        )  # fmt: skip
    return found


def compare(before: list[dict], after: list[dict]) -> None:  # type: ignore[type-arg]
    both = [(b, a) for b, a in zip(before, after, strict=True) if b["complete"] and a["complete"]]
    lost = [i for i, (b, a) in enumerate(zip(before, after, strict=True))
            if a["complete"] and not set(b["texts"]) <= set(a["texts"])]  # fmt: skip
    print(f"flows: {len(after)}; complete before {sum(b['complete'] for b in before)}, "
          f"after {sum(a['complete'] for a in after)}")  # fmt: skip
    if both:
        total = sum(b["schedules"] for b, _ in both)
        print(f"complete on both sides: {len(both)}; schedules {total}"
              f" -> {sum(a['schedules'] for _, a in both)}, median "
              f"{statistics.median(b['schedules'] for b, _ in both)} -> "
              f"{statistics.median(a['schedules'] for _, a in both)}")  # fmt: skip
    print(f"complete after, missing an outcome the search before found: {lost or 'none'}")


def main() -> None:
    if len(sys.argv) == 3:  # the other checkout's side: explore the saved flows
        sources = json.loads(Path(sys.argv[1]).read_text())
        Path(sys.argv[2]).write_text(json.dumps(explore_all(sources)))
        return
    warnings.simplefilter("ignore")
    sources = draw(int(os.environ.get("BENCH_FLOWS", "300")))
    after = explore_all(sources)
    before_tree = os.environ.get("BENCH_BEFORE", "")
    if not before_tree:
        compare(after, after)
        return
    with tempfile.TemporaryDirectory() as tmp:
        flows, found = Path(tmp, "flows.json"), Path(tmp, "found.json")
        flows.write_text(json.dumps(sources))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([before_tree, str(HERE.parent)])}
        subprocess.run([sys.executable, __file__, str(flows), str(found)], env=env, check=True)
        before = json.loads(found.read_text())
        compare(before, after)
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            if a["complete"] and not set(b["texts"]) <= set(a["texts"]):
                # the flow and what the search after lacks, to reproduce the loss
                print(f"--- flow {i}, lacking {sorted(set(b['texts']) - set(a['texts']))}")
                print(sources[i])


if __name__ == "__main__":
    main()
