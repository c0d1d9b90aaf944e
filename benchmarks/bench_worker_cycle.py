"""(l) What the processor's worker costs while a long run is open, with and without its two
shortcuts for open sessions.

A deep-research agent keeps its session, its current step and a model call open for
minutes while the worker wakes every ``schedule_delay`` (0.25 s).  Here one such run is
open (session, iteration, a model call with a 32 KiB prompt captured as
``gen_ai.input.messages``, content capture on), and ``_cycle`` is timed as the worker runs
it, in four variants side by side:

- shipped: the open spans are read as id-and-role views (``_open_snapshots``), and the
  assembler is asked about timeouts once a second (``_TIMEOUT_CHECK_INTERVAL_NS``);
- full snapshots: every open span is prepared as the mapper gets it (redacted, big values
  moved to the blob store) at each look;
- every cycle: the assembler is asked at every wake-up;
- neither shortcut: full snapshots at every wake-up.

The CPU of a cycle is a median over rounds; the figure that matters is CPU a second of an
open run, at four wake-ups a second.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from otel_prov import ProvSpanProcessor
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.processing import _processor

CYCLES = 200
OPEN_RUNS = (1, 50)
ROUNDS = 7
WAKEUPS_A_SECOND = 4


def _open_runs(root: Path, runs: int) -> tuple[ProvSpanProcessor, Callable[[], None]]:
    processor = ProvSpanProcessor(
        OxigraphStoreExporter(root / "store"), schedule_delay=3600, blob_dir=root / "blobs"
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    prompt = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "x " * 16_384}]}])
    for _ in range(runs):
        _open_run(tracer, prompt)
    processor._cycle(flush=False, final=False)  # the first look, as the worker's
    return processor, lambda: processor._cycle(flush=False, final=False)


def _open_run(tracer: trace.Tracer, prompt: str) -> None:
    session = tracer.start_span(
        "invoke_agent research",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "research"},
    )
    with trace.use_span(session, end_on_exit=False):
        step = tracer.start_span("iteration 1", attributes={"otel_prov.iteration.number": 1})
        with trace.use_span(step, end_on_exit=False):
            tracer.start_span(
                "chat m",
                attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": prompt},
            )


def _cpu_a_cycle(cycle: Callable[[], None]) -> float:
    start = time.process_time()
    for _ in range(CYCLES):
        cycle()
        time.sleep(0)  # the worker waits between wake-ups
    return (time.process_time() - start) / CYCLES


def _variants(runs: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-cycle-"))
    shipped: list[float] = []
    full: list[float] = []
    every: list[float] = []
    neither: list[float] = []
    try:
        processor, cycle = _open_runs(root, runs)
        cheap_view = processor._open_snapshots

        def full_snapshots() -> list[_processor.SpanRecord]:
            return [processor._snapshot(s, ended=False) for s in list(processor._open.values())]

        interval = _processor._TIMEOUT_CHECK_INTERVAL_NS
        for _ in range(ROUNDS):
            shipped.append(_cpu_a_cycle(cycle))
            processor._open_snapshots = full_snapshots  # type: ignore[method-assign]
            full.append(_cpu_a_cycle(cycle))
            processor._open_snapshots = cheap_view  # type: ignore[method-assign]
            _processor._TIMEOUT_CHECK_INTERVAL_NS = 0
            every.append(_cpu_a_cycle(cycle))
            processor._open_snapshots = full_snapshots  # type: ignore[method-assign]
            neither.append(_cpu_a_cycle(cycle))
            processor._open_snapshots = cheap_view  # type: ignore[method-assign]
            _processor._TIMEOUT_CHECK_INTERVAL_NS = interval
        processor.shutdown()
    finally:
        shutil.rmtree(root)
    for name, times in (
        ("shipped", shipped),
        ("full snapshots", full),
        ("every cycle", every),
        ("neither", neither),
    ):
        per_cycle = statistics.median(times)
        print(
            f"{runs:3d} open run(s), {name:15s} {per_cycle * 1e6:9.1f} us a cycle, "
            f"{per_cycle * WAKEUPS_A_SECOND * 1e3:7.2f} ms CPU a second "
            f"({per_cycle / statistics.median(shipped):.2f}x shipped)"
        )


def main() -> None:
    os.environ["OTEL_PROV_CAPTURE_CONTENT"] = "true"
    for runs in OPEN_RUNS:
        _variants(runs)


if __name__ == "__main__":
    main()
