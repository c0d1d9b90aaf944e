"""Verify time for 10,000 sessions in the embedded store (issue: a ledger you can trust).

Sessions of the benchmark workload (two steps each: model call, tool call) are stored
through the real exporter, then ``verify_sessions`` recomputes every hash.  Printed: the
store's size, the total time and the time per session.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from otel_prov.exporters import OxigraphStoreExporter

from benchmarks.workload import session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.read._backend import EmbeddedBackend
from otel_prov.read._verify import verify_sessions

SESSIONS = 10_000


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
        backend = EmbeddedBackend(root / "store")
        begin = time.perf_counter()
        checks = verify_sessions(backend, "<urn:otel-prov:graph>", None)
        elapsed = time.perf_counter() - begin
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(not check.ok for check in checks)
    print(
        f"verify {len(checks):,} sessions ({triples:,} triples, embedded store): "
        f"{elapsed:.1f} s, {elapsed / len(checks) * 1000:.2f} ms per session, {failed} failed"
    )


if __name__ == "__main__":
    main()
