"""What streaming a run step by step costs, and how soon a step is in the store (issue 39.2).

* **Worker CPU per step** for runs of 50, 200 and 1,000 steps (an iteration, a model
  call and a tool call each), recorded by a real ``ProvSpanProcessor`` into the embedded
  store, with a worker cycle after every step (the worst case for streaming: a step per
  cycle): streamed (each cycle maps a window of the run, ``prov._stream_window``) and
  sealed once at the end (no streaming), beside the way streaming worked before, each
  cycle mapping the run so far (the same mapper, run on what a cycle had then; 50 and 200
  steps only: at 1,000 it takes minutes).  The CPU is the worker thread's own
  (``time.thread_time`` around each cycle).  Target: linear, the CPU per step at 1,000
  steps within 1.3x of that at 50.
* **Latency** from a step's end (its tool call's) to the step being in the store, p50
  and p99 over 100 steps 100 ms apart: in process (``configure(stream=True)``, the
  embedded store read by the writing process) and through a real ``otel-prov receive
  --stream`` fed by the SDK's OTLP/HTTP exporter (the store read by another process, as
  ``otel-prov sessions`` reads it).  Target: p99 under 1 s.

``python -m benchmarks.bench_streaming [--quick]`` (``--quick``: 20 and 80 steps, no
latency).
"""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_prov
from benchmarks.streaming_run import open_session, run_spans
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._processor import ProvSpanProcessor
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._span_record import Role

SIZES = (50, 200, 1000)
BEFORE_SIZES = (50, 200)
LATENCY_STEPS = 100
STEP_GAP_S = 0.1
_COUNT = (
    "SELECT (COUNT(DISTINCT ?i) AS ?n) WHERE { GRAPH ?g { "
    "?i a <https://w3id.org/otel-prov/ns#Iteration> } }"
)


class _TimedProcessor(ProvSpanProcessor):
    """The processor with its worker's CPU counted and its cycles numbered."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.cpu = 0.0
        self.cycles = 0
        self._cycled = threading.Condition()
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def _cycle(self, *, flush: bool, final: bool) -> None:
        began = time.thread_time()
        super()._cycle(flush=flush, final=final)
        self.cpu += time.thread_time() - began
        with self._cycled:
            self.cycles += 1
            self._cycled.notify_all()

    def next_cycles(self, count: int) -> None:
        """Wait until ``count`` more cycles have run."""
        with self._cycled:
            until = self.cycles + count
            self._cycled.wait_for(lambda: self.cycles >= until, timeout=30)


def _worker_cpu(steps: int, *, stream: bool, work: Path) -> tuple[float, int]:
    """(worker CPU seconds, streamed entries) for a run of ``steps`` steps, a cycle after each."""
    processor = _TimedProcessor(
        OxigraphStoreExporter(work / f"store-{steps}-{stream}"), stream=stream, schedule_delay=0.001
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    with otel_prov.agent_session("researcher", question="what?", tracer_provider=provider):
        for number in range(1, steps + 1):
            with otel_prov.iteration(number, thought=f"look up {number}", tracer_provider=provider):
                with otel_prov.model_call("m", provider="p", tracer_provider=provider):
                    pass
                with otel_prov.tool_call(
                    "lookup", arguments={"n": number}, tracer_provider=provider
                ):
                    otel_prov.set_observation(f"found {number}")
            processor.next_cycles(2)  # one whole cycle after the step's spans ended
        otel_prov.set_answer("done")
    processor.force_flush()
    entries = processor.statistics().steps_exported
    provider.shutdown()
    return processor.cpu, entries


def _before(steps: int) -> float:
    """CPU seconds of the mapping alone, streamed as before: the run so far at each cycle."""
    spans = run_spans(steps)
    session = next(span for span in spans if span.role is Role.SESSION)
    running = open_session(session)
    ends = sorted(span.end_ns or 0 for span in spans if span is not session)
    began = time.process_time()
    for end in ends:
        map_spans([running, *(s for s in spans if s is not session and (s.end_ns or 0) <= end)])
    map_spans(spans)
    return time.process_time() - began


def _count(backend: QueryBackend) -> int:
    rows = backend.query(_COUNT).rows
    return int(rows[0]["n"] or 0) if rows else 0


def _latencies(provider: TracerProvider, count: Callable[[], int]) -> list[float]:
    """Seconds from each step's end to its being counted in the store."""
    found: list[float] = []
    with otel_prov.agent_session("researcher", question="what?", tracer_provider=provider):
        for number in range(1, LATENCY_STEPS + 1):
            with otel_prov.iteration(number, tracer_provider=provider):  # noqa: SIM117
                with otel_prov.tool_call(
                    "lookup", arguments={"n": number}, tracer_provider=provider
                ):
                    otel_prov.set_observation(f"found {number}")
            ended = time.monotonic()
            while count() < number:
                time.sleep(0.01)
            found.append(time.monotonic() - ended)
            time.sleep(STEP_GAP_S)
    return found


def _in_process(work: Path) -> list[float]:
    handle = otel_prov.configure(store=work / "store", set_global=False, stream=True)
    backend = EmbeddedBackend(work / "store")
    try:
        return _latencies(handle.tracer_provider, lambda: _count(backend))
    finally:
        handle.shutdown()


def _through_receive(work: Path) -> list[float]:
    store = work / "store-received"
    receiver = subprocess.Popen(
        [
            sys.executable, "-m", "otel_prov", "receive", "--grpc", "off", "--http",
            "127.0.0.1:0", "--store", str(store), "--data-dir", str(work / "data"), "--stream",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    try:
        assert receiver.stdout is not None
        ready, _, _ = select.select([receiver.stdout], [], [], 60)
        line = receiver.stdout.readline() if ready else ""
        found = re.search(r"OTLP/HTTP on (http://[^/]+)/v1/traces", line)
        assert found is not None, line
        provider = TracerProvider()
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{found.group(1)}/v1/traces"))
        )

        def count() -> int:
            try:
                return _count(EmbeddedBackend(store))  # another process's view, opened anew
            except Exception:  # noqa: BLE001 - not there yet
                return 0

        return _latencies(provider, count)
    finally:
        receiver.terminate()
        receiver.wait(60)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(quick: bool = False) -> None:
    sizes = (20, 80) if quick else SIZES
    per_step: dict[int, float] = {}
    print("worker CPU per step (ms), a cycle after every step: streamed / sealed at the end")
    with tempfile.TemporaryDirectory(prefix="bench-streaming-") as tmp:
        for steps in sizes:
            streamed, entries = _worker_cpu(steps, stream=True, work=Path(tmp))
            at_end, _ = _worker_cpu(steps, stream=False, work=Path(tmp))
            per_step[steps] = streamed / steps
            before = ""
            if steps in BEFORE_SIZES and not quick:
                mapped = _before(steps) / steps
                before = f"; before (the run so far mapped at each cycle): {1000 * mapped:.2f}"
            print(
                f"  {steps:4d} steps: {1000 * streamed / steps:.3f} / {1000 * at_end / steps:.3f}"
                f" = {streamed / at_end:.2f}x ({entries} streamed entries){before}"
            )
        first, last = sizes[0], sizes[-1]
        print(
            f"  per step at {last} steps / at {first}: {per_step[last] / per_step[first]:.2f}x "
            "(target <= 1.3x)"
        )
        if quick:
            return
        for name, measure in (("in process", _in_process), ("receive", _through_receive)):
            found = measure(Path(tmp))
            print(
                f"step end -> in the store, {name}: p50 {1000 * statistics.median(found):.0f} "
                f"ms, p99 {1000 * _percentile(found, 0.99):.0f} ms, max "
                f"{1000 * max(found):.0f} ms over {len(found)} steps (target p99 < 1000 ms)"
            )


if __name__ == "__main__":
    os.environ.setdefault("OTEL_PROV_PROVENANCE", "true")
    main(quick="--quick" in sys.argv)
