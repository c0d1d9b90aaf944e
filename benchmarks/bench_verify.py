"""Verify time for 10,000 sessions in the embedded store (target: 15 s for ``--all``).

Sessions of the benchmark workload (two steps each: model call, tool call) are stored
through the real exporter, then the read API's ``verify()`` recomputes every hash, as
``otel-prov verify --all`` does.  Two stores, side by side:

* written as agents write one: a few sessions per batch (5), each batch a transaction,
  so that RocksDB flushes and compacts as it goes.  The target is for this store;
* bulk-loaded, 500 sessions per batch (as parked batches or a receiver's large batches
  go in): each batch is ingested as files that nothing compacts before the writer
  exits, so every term the read decodes is looked up in more files.

For each: the store's size, the total time against the target, the time per session,
then each stage timed on its own (the store writing its graph out on every core, one
part per predicate; reading the bundles, which ``verify()`` does beside it; filing the
parts by trace, which ``verify()`` does as they come), the wall and CPU time of the
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

from benchmarks.workload import session_spans
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.prov._mapper import map_spans
from otel_prov.read import open_store
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
    parts of the graph take to be filed by trace, each timed alone."""
    parts, dumping = _timed(lambda: list(backend.ntriples(GRAPH)))
    _, bundles = _timed(lambda: _bundle_rows(backend, f"<{GRAPH}>", None))
    _, filing = _timed(lambda: GraphLines(parts))
    return dumping, bundles, filing


def _build(path: Path, per_batch: int) -> int:
    """Store SESSIONS sessions, ``per_batch`` to an export; the number of triples."""
    exporter = OxigraphStoreExporter(path)
    triples = 0
    for start in range(0, SESSIONS, per_batch):
        batch = range(start, start + per_batch)
        records = [map_spans(session_spans(i, iterations=2)) for i in batch]
        triples += sum(len(r.triples) for r in records)
        exporter.export(records)
    exporter.shutdown()
    return triples


def _measure(root: Path, per_batch: int, how: str) -> None:
    triples = _build(root / "store", per_batch)
    dumping, bundles, filing = _stages(EmbeddedBackend(root / "store"))
    reader = open_store(root / "store")
    cpu = time.process_time()
    checks, elapsed = _timed(reader.verify)
    cpu = time.process_time() - cpu
    one, alone = _timed(lambda: reader.verify(checks[len(checks) // 2].session))
    failed = sum(not check.ok for check in checks)
    verdict = "meets" if elapsed <= TARGET_S else "MISSES"
    print(
        f"verify {len(checks):,} sessions ({triples:,} triples, embedded store {how}): "
        f"{elapsed:.1f} s ({verdict} target {TARGET_S} s, {elapsed / TARGET_S:.2f}x of it), "
        f"{elapsed / len(checks) * 1000:.2f} ms per session, {failed} failed; "
        f"CPU {cpu:.1f} s (every thread)"
    )
    print(
        f"  stages, each timed alone: the store writing its graph out {dumping:.1f} s, "
        f"reading the bundles {bundles:.1f} s (beside the former), "
        f"filing the parts by trace {filing:.1f} s (as they come); "
        f"checking the runs and what did not overlap: the rest"
    )
    print(f"  verify one session by id on the same store: {alone:.2f} s ({len(one)} checked)")


def main() -> None:
    for per_batch, how in (
        (5, "written as agents write it, 5 sessions a transaction"),
        (500, "bulk-loaded 500 sessions a batch, not compacted"),
    ):
        root = Path(tempfile.mkdtemp(prefix="bench-verify-"))
        try:
            _measure(root, per_batch, how)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
