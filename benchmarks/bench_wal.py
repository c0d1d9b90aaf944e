"""What the write-ahead log adds to starting a tool call (issue: recorded at dispatch).

Two providers with a ProvSpanProcessor each, one with a WAL directory; each starts and ends
the same tool-call spans (the manual API's attributes: name, call id, arguments); the time
of every ``start_span`` is recorded on the agent's thread.  Rounds alternate.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from otel_prov import ProvSpanProcessor
from otel_prov.exporters import OxigraphStoreExporter

CALLS = 2000


def _round(provider: TracerProvider, starts: list[int]) -> None:
    tracer = provider.get_tracer("bench")
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "gen_ai.tool.call.id": "call_1",
        "otel_prov.arguments": '{"q": "x", "n": 3}',
    }
    for _ in range(CALLS):
        begin = time.perf_counter_ns()
        span = tracer.start_span("execute_tool search", attributes=attributes)
        starts.append(time.perf_counter_ns() - begin)
        span.end()


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-wal-"))
    plain, logged = TracerProvider(), TracerProvider()
    plain.add_span_processor(ProvSpanProcessor(OxigraphStoreExporter(root / "a")))
    logged.add_span_processor(
        ProvSpanProcessor(OxigraphStoreExporter(root / "b"), wal_dir=root / "wal")
    )
    without: list[int] = []
    with_wal: list[int] = []
    try:
        for index in range(10):
            pairs = [(plain, without), (logged, with_wal)]
            for provider, starts in pairs if index % 2 else reversed(pairs):
                _round(provider, starts)
        plain.shutdown()
        logged.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ratio = statistics.median(with_wal) / statistics.median(without)
    print(
        f"tool-call start with the write-ahead log vs without: ratio {ratio:.2f}x; median "
        f"start_span {statistics.median(without) / 1000:.2f} us vs "
        f"{statistics.median(with_wal) / 1000:.2f} us (fsync never; one JSON line appended "
        "and flushed to the OS before the tool runs)"
    )


if __name__ == "__main__":
    main()
