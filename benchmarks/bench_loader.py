"""(l) What the embedded store's loader costs the agent beside it, in short time slices or not.

One process, one agent: the 2-step LangChain run of ``bench_frameworks`` with our
instrumentor and ``ProvSpanProcessor`` into the embedded store, whose loader thread stores
each flushed batch while the next runs go on.  Turns alternate the loader's time slice
between the kernel's default and the 0.1 ms it asks for (``otel_prov._scheduling``), all
else the same: one untimed batch, five timed ones (each flushed), then a pause until the
loader is done.  It compares the mean run with its share of the flushes, as the agent
pays it, and the 90th percentile of a run.  Measured for an agent built for every run and
for one built once (``WORKLOADS``).  Before Linux 6.12 (no per-thread slices) both sides
are the same, and the ratio is about 1.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from benchmarks.bench_frameworks import _langchain_run
from benchmarks.workload import report
from otel_prov import ProvSpanProcessor
from otel_prov._scheduling import SHORT_SLICE_NS, set_time_slice
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.instrumentation.langchain import LangChainInstrumentor

TURNS = 24
BATCHES_PER_TURN = 5
RUNS_PER_BATCH = 15
SIDES = {"the kernel's slice": 0, "0.1 ms slices": SHORT_SLICE_NS}
TARGET = 0.95  # short slices should save the agent at least a twentieth
WORKLOADS = {"agent built per run": False, "agent built once": True}
"""How the agent is set up (``built_once``).  The slices paid where an agent was built for
each run: 0.90x-0.95x; where it is built once, as a service does, the runs came out the
same either way (0.99x-1.03x).  Only the first has the target."""


def _measure(
    prepare: Callable[[], Callable[[], Any]],
    provider: TracerProvider,
    store: OxigraphStoreExporter,
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Each side's run times and flush times, in turns alternating the loader's slice."""
    loader = store._ingester.native_id
    assert loader is not None

    def batch() -> tuple[list[float], float]:
        times = []
        for _ in range(RUNS_PER_BATCH):
            run = prepare()
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        provider.force_flush()
        return times, time.perf_counter() - start

    runs: dict[str, list[float]] = {side: [] for side in SIDES}
    flushes = dict.fromkeys(SIDES, 0.0)
    batch()
    for turn in range(TURNS):
        side = list(SIDES)[turn % 2]
        set_time_slice(SIDES[side], thread_id=loader)
        batch()
        for _ in range(BATCHES_PER_TURN):
            times, flush = batch()
            runs[side] += times
            flushes[side] += flush
        while store.waiting():
            time.sleep(0.005)
        time.sleep(0.1)
    set_time_slice(thread_id=loader)
    return runs, flushes


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-loader-"))
    provider = TracerProvider()
    store = OxigraphStoreExporter(root / "store")
    provider.add_span_processor(ProvSpanProcessor(store))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    try:
        measured = {
            workload: _measure(_langchain_run(built_once=built_once), provider, store)
            for workload, built_once in WORKLOADS.items()
        }
    finally:
        provider.shutdown()
        shutil.rmtree(root, ignore_errors=True)

    for workload, (runs, flushes) in measured.items():
        _report(workload, runs, flushes)


def _report(workload: str, runs: dict[str, list[float]], flushes: dict[str, float]) -> None:
    def paid(side: str) -> float:
        """Mean run with its share of the flushes (ms)."""
        return (sum(runs[side]) + flushes[side]) / len(runs[side]) * 1000

    def p90(side: str) -> float:
        return statistics.quantiles(runs[side], n=10)[-1] * 1000

    default, short = SIDES
    ratio = paid(short) / paid(default)
    name = f"loader in 0.1 ms slices vs the kernel's, {workload}, the agent's mean run"
    details = (
        f"{paid(short):.2f} ms vs {paid(default):.2f} ms with the flushes; p90 of a run "
        f"{p90(short):.2f} ms vs {p90(default):.2f} ms; medians "
        f"{statistics.median(runs[short]) * 1000:.2f} ms vs "
        f"{statistics.median(runs[default]) * 1000:.2f} ms; {len(runs[short])} runs each"
    )
    if WORKLOADS[workload]:
        print(f"{name}: ratio {ratio:.2f}x (no target); {details}")
    else:
        report(name, ratio, f"<= {TARGET}x", ratio <= TARGET, details)


if __name__ == "__main__":
    main()
