"""(c2) The embedded store's N-Quads load, lenient against strict, side by side.

Our own writer produced every line (``to_nquads``, property-tested against the strict
parser), so the store is told to skip the re-check.  Two batch shapes: one session a
batch in a transaction, as the processor stores a run, and 50 sessions a batch
bulk-loaded, as ``import`` and ``receive`` do.  Each round loads the same batches into a
fresh on-disk store both ways, alternating which goes first.  Target: lenient takes at
most 0.95x of strict, or the exporter parses that shape strictly (on 2026-12-01: 0.71x
for the transactions, which stay lenient; 0.98x for the bulk loads, which do not).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyoxigraph

from benchmarks.workload import report, session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import to_nquads

TEXTS = [
    to_nquads(map_spans(session_spans(i, iterations=8)).triples, "<urn:otel-prov:graph>")
    for i in range(300)
]
ROUNDS = 7


def _load(batches: list[str], *, lenient: bool, bulk: bool) -> float:
    directory = Path(tempfile.mkdtemp(prefix="bench-nquads-"))
    store = pyoxigraph.Store(str(directory))
    load = store.bulk_load if bulk else store.load
    start = time.perf_counter()
    for batch in batches:
        load(batch, pyoxigraph.RdfFormat.N_QUADS, lenient=lenient)
    elapsed = time.perf_counter() - start
    del store
    shutil.rmtree(directory)
    return elapsed


def main() -> None:
    shapes = (
        ("one session a batch, in a transaction", TEXTS, False),
        (
            "50 sessions a batch, bulk-loaded",
            ["".join(TEXTS[i : i + 50]) for i in range(0, 300, 50)],
            True,
        ),
    )
    for name, batches, bulk in shapes:
        times: dict[bool, list[float]] = {True: [], False: []}
        for round_ in range(ROUNDS):
            for lenient in (True, False) if round_ % 2 else (False, True):
                times[lenient].append(_load(batches, lenient=lenient, bulk=bulk))
        strict, lenient = statistics.median(times[False]), statistics.median(times[True])
        ratio = lenient / strict
        report(
            f"N-Quads load, lenient vs strict: {name}",
            ratio,
            "<= 0.95x",
            ratio <= 0.95,
            f"median strict {strict * 1000:.0f} ms, lenient {lenient * 1000:.0f} ms "
            f"({len(batches)} batches, {ROUNDS} rounds)",
        )


if __name__ == "__main__":
    main()
