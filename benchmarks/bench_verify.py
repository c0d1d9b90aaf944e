"""Verify time for 10,000 sessions in the embedded store (target: 15 s for ``--all``).

Sessions of the benchmark workload (two steps each: model call, tool call) are stored
through the real exporter, then the read API's ``verify()`` recomputes every hash, as
``otel-prov verify --all`` does.  Printed: the store's size, the total time, the time
per session, and how much of it was the store writing the graph out.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from otel_prov.exporters import OxigraphStoreExporter

from benchmarks.workload import session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.read import open_store
from otel_prov.read._backend import EmbeddedBackend

SESSIONS = 10_000
TARGET_S = 15


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    try:
        exporter = OxigraphStoreExporter(root / "store")
        triples = 0
        for start in range(0, SESSIONS, 500):
            records = [map_spans(session_spans(i, iterations=2)) for i in range(start, start + 500)]
            triples += sum(len(r.triples) for r in records)
            exporter.export(records)
        exporter.shutdown()
        begin = time.perf_counter()
        EmbeddedBackend(root / "store").ntriples("urn:otel-prov:graph")
        reading = time.perf_counter() - begin
        reader = open_store(root / "store")
        begin = time.perf_counter()
        checks = reader.verify()
        elapsed = time.perf_counter() - begin
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(not check.ok for check in checks)
    verdict = "meets" if elapsed <= TARGET_S else "MISSES"
    print(
        f"verify {len(checks):,} sessions ({triples:,} triples, embedded store): "
        f"{elapsed:.1f} s ({verdict} target {TARGET_S} s), "
        f"{elapsed / len(checks) * 1000:.2f} ms per session, {failed} failed; "
        f"the store writing its graph out alone: {reading:.1f} s"
    )


if __name__ == "__main__":
    main()
