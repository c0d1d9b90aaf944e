"""What streaming a run step by step costs, and how soon a step is in the store (issue 30.1).

* **Triples.**  A run of 50, 100 and 200 steps (an iteration, a model call and a tool call
  each) mapped and sealed once at its end, and streamed: the run so far mapped and sealed
  after every step (the worst case: one step a worker cycle), then its final entry.  The
  ratio of the triples written; the target is at most 1.5 at 200 steps.
* **Sealing work per step**, at 50, 100 and 200 steps, in three parts: *seal* (the delta's
  canonical lines, hash, manifest and chain entry: what issue 30 asks to be flat), *delta*
  (telling what of the mapping is new: a pass over the run so far) and *map* (mapping the
  run so far).  The last two grow with the run, once per worker cycle, not per step.
* **Latency** from a step's end (its tool call's) to the step being in the store, p50 and
  p99 over 100 steps 100 ms apart: in process (``ProvSpanProcessor(stream=True)``, the
  embedded store read by the writing process) and through a real ``otel-prov receive
  --stream`` fed by the SDK's OTLP/HTTP exporter (the store read by another process, as
  ``otel-prov sessions`` reads it).  The target is p99 under 2 s.
"""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_prov
from benchmarks.streaming_run import run_records
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._stream import delta_bundle_triples, running_view, step_delta
from otel_prov.read._backend import EmbeddedBackend, QueryBackend

SIZES = (50, 100, 200)
LATENCY_STEPS = 100
STEP_GAP_S = 0.1
_COUNT = (
    "SELECT (COUNT(DISTINCT ?i) AS ?n) WHERE { GRAPH ?g { "
    "?i a <https://w3id.org/otel-prov/ns#Iteration> } }"
)


def _written(steps: int, *, streamed: bool) -> tuple[int, list[float], list[float], list[float]]:
    """Triples written, and per streamed step the seconds of seal, delta and map."""
    sealer = Sealer(chain="bench")
    scratch = Sealer(chain="scratch")  # times a seal without moving the bench's chain on
    written = 0
    seals: list[float] = []
    deltas: list[float] = []
    began = time.perf_counter()
    records = run_records(steps, streamed=streamed)
    mapping = time.perf_counter() - began
    for group, final in records:
        for record in group:
            if final:
                written += len(sealer.seal(record, 0).triples)
                continue
            session = record.root
            known = sealer._streamed.get(session)
            start = time.perf_counter()
            content, _ = step_delta(
                running_view(record.triples), session, known.written if known else set()
            )
            middle = time.perf_counter()
            bundle = f"<{session[1:-1]}:bundle-x>"
            described = delta_bundle_triples(bundle, session, 0, content, "")
            scratch._enter(bundle, session, described)
            end = time.perf_counter()
            deltas.append(middle - start)
            seals.append(end - middle)
            sealed = sealer.seal_step(record, 0)
            written += len(sealed.triples) if sealed is not None else 0
    maps = [mapping / max(1, len(records) - 1)] * (len(records) - 1) if streamed else []
    return written, seals, deltas, maps


def _tail_ms(values: list[float]) -> float:
    """Median of the last 10 steps, in ms: the cost at that run length (a median, so that
    a garbage collection of the run's triples falling into one step does not count)."""
    return 1000 * statistics.median(values[-10:]) if values else 0.0


def _count(backend: QueryBackend) -> int:
    rows = backend.query(_COUNT).rows
    return int(rows[0]["n"] or 0) if rows else 0


def _latencies(provider: TracerProvider, count: callable) -> list[float]:  # type: ignore[valid-type]
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
            while count() < number:  # type: ignore[operator]
                time.sleep(0.01)
            found.append(time.monotonic() - ended)
            time.sleep(STEP_GAP_S)
    return found


def _in_process(work: Path) -> list[float]:
    handle = otel_prov.configure(
        store=work / "store", set_global=False, stream=True, wal_dir=work / "wal"
    )
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


def main() -> None:
    print("triples written: streamed after every step / sealed once at the end")
    for steps in SIZES:
        at_end = _written(steps, streamed=False)[0]
        streamed, seals, deltas, maps = _written(steps, streamed=True)
        print(
            f"  {steps:3d} steps: {streamed} / {at_end} = {streamed / at_end:.3f}; per step at "
            f"the end of the run: seal {_tail_ms(seals):.3f} ms, delta {_tail_ms(deltas):.2f} "
            f"ms, map {_tail_ms(maps):.2f} ms (the run's mean)"
        )
    with tempfile.TemporaryDirectory(prefix="bench-streaming-") as tmp:
        for name, measure in (("in process", _in_process), ("receive", _through_receive)):
            found = measure(Path(tmp))
            print(
                f"step end -> in the store, {name}: p50 {1000 * statistics.median(found):.0f} "
                f"ms, p99 {1000 * _percentile(found, 0.99):.0f} ms, max "
                f"{1000 * max(found):.0f} ms over {len(found)} steps (target p99 < 2000 ms)"
            )


if __name__ == "__main__":
    os.environ.setdefault("OTEL_PROV_PROVENANCE", "true")
    main()
