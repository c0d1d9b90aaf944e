"""(c) Embedded ingest: OxigraphStoreExporter vs. a raw pyoxigraph ``bulk_extend``.

Both write the same quads into a fresh on-disk store.  The raw side gets ready-made
``pyoxigraph.Quad`` objects (built outside the timing); ours starts from the mapper's
records, as the processor hands them over.  Target: ratio (raw time / ours) >= 0.8x.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyoxigraph

from benchmarks.workload import report, session_spans
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import to_nquads

RECORDS = [map_spans(session_spans(i, iterations=8)) for i in range(400)]
BATCH = 50


def _ours(directory: Path) -> float:
    """Until the store holds it all and has written its memtables out, in ``shutdown``
    (as the raw side's flush does)."""
    exporter = OxigraphStoreExporter(directory)
    start = time.perf_counter()
    for i in range(0, len(RECORDS), BATCH):
        exporter.export(RECORDS[i : i + BATCH])
    exporter.shutdown()
    return time.perf_counter() - start


def _raw(directory: Path, batches: list[list[pyoxigraph.Quad]]) -> float:
    store = pyoxigraph.Store(str(directory))
    start = time.perf_counter()
    for quads in batches:
        store.bulk_extend(quads)
    store.flush()
    elapsed = time.perf_counter() - start
    del store
    return elapsed


def main() -> None:
    batches = []
    for i in range(0, len(RECORDS), BATCH):
        text = "".join(
            to_nquads(r.triples, "<urn:otel-prov:graph>") for r in RECORDS[i : i + BATCH]
        )
        batches.append(list(pyoxigraph.parse(text, pyoxigraph.RdfFormat.N_QUADS)))
    quads = sum(len(b) for b in batches)
    ours, raw = [], []
    root = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        for round_ in range(9):  # alternate which side goes first, so drift hits both
            if round_ % 2:
                raw.append(_raw(root / f"raw{round_}", batches))
                ours.append(_ours(root / f"ours{round_}"))
            else:
                ours.append(_ours(root / f"ours{round_}"))
                raw.append(_raw(root / f"raw{round_}", batches))
    finally:
        shutil.rmtree(root)
    ours_s, raw_s = statistics.median(ours), statistics.median(raw)
    ratio = raw_s / ours_s
    report(
        "embedded ingest vs raw bulk_extend",
        ratio,
        ">= 0.8x",
        ratio >= 0.8,
        f"ours {quads / ours_s:,.0f} quads/s, raw {quads / raw_s:,.0f} quads/s "
        f"({quads:,} quads in batches of {BATCH} sessions)",
    )


if __name__ == "__main__":
    main()
