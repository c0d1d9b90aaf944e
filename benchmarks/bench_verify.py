"""Verify time for 10,000 sessions in the embedded store (target: 15 s for ``--all``).

Sessions of the benchmark workload (two steps each: model call, tool call) are stored
through the real exporter, then the read API's ``verify()`` recomputes every hash, as
``otel-prov verify --all`` does.  Printed: the store's size, the total time against the
target, the time per session, then each stage timed on its own in the same run (the
store writing its graph out, reading the bundles, which ``verify()`` does beside the
former, sorting the graph's lines, and checking the runs), the wall and CPU time of the
whole, and the time to check one run by its id (``otel-prov verify ID``), which must
not read the whole store.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from otel_prov.exporters import OxigraphStoreExporter

from benchmarks.workload import session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.read import open_store
from otel_prov.read._backend import EmbeddedBackend
from otel_prov.read._graph_lines import GraphLines
from otel_prov.read._verify import _bundle_rows

SESSIONS = 10_000
TARGET_S = 15
GRAPH = "urn:otel-prov:graph"
T = TypeVar("T")


def _timed(run: Callable[[], T]) -> tuple[T, float]:
    begin = time.perf_counter()
    result = run()
    return result, time.perf_counter() - begin


def _stages(backend: EmbeddedBackend) -> tuple[float, float, float]:
    """Seconds the store takes to write its graph out, to read the bundles, and the
    lines of the graph take to be sorted, each timed alone."""
    text, dumping = _timed(lambda: backend.ntriples(GRAPH))
    _, bundles = _timed(lambda: _bundle_rows(backend, f"<{GRAPH}>", None))
    _, sorting = _timed(lambda: GraphLines(text))
    return dumping, bundles, sorting


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
        dumping, bundles, sorting = _stages(EmbeddedBackend(root / "store"))
        reader = open_store(root / "store")
        cpu = time.process_time()
        checks, elapsed = _timed(reader.verify)
        cpu = time.process_time() - cpu
        one, alone = _timed(lambda: reader.verify(checks[len(checks) // 2].session))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(not check.ok for check in checks)
    checking = elapsed - max(dumping, bundles) - sorting
    verdict = "meets" if elapsed <= TARGET_S else "MISSES"
    print(
        f"verify {len(checks):,} sessions ({triples:,} triples, embedded store): "
        f"{elapsed:.1f} s ({verdict} target {TARGET_S} s, {elapsed / TARGET_S:.2f}x of it), "
        f"{elapsed / len(checks) * 1000:.2f} ms per session, {failed} failed; "
        f"CPU {cpu:.1f} s (two threads: the store writes its graph out beside the bundle reads)"
    )
    print(
        f"  stages, each timed alone: the store writing its graph out {dumping:.1f} s, "
        f"reading the bundles {bundles:.1f} s (beside the former), "
        f"sorting the lines {sorting:.1f} s, checking the runs (the rest) {checking:.1f} s"
    )
    print(f"verify one session by id on the same store: {alone:.2f} s ({len(one)} checked)")


if __name__ == "__main__":
    main()
