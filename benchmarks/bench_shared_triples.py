"""(k) What leaving out the shared triples the held store already has saves per session.

Every session describes its agents, tools, models and services again; the embedded
exporter remembers what it wrote of those since it opened the store and leaves them out
(``exporters/_shared_triples.py``).  Two exporters, each on a fresh on-disk store, store
the same 2-step sessions (a model call and a tool call per step, as a LangChain
``create_agent`` run has), 15 a batch as ``bench_frameworks`` flushes them: one as
shipped, one sending every triple.  Rounds alternate which goes first; the CPU of every
thread (RocksDB's included) is compared, median of the rounds.  The mechanism stays only
while it saves at least 10% per session (issue 28): ratio = CPU without it / CPU with it,
target >= 1.10x.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from benchmarks.workload import report, session_spans
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import Triple
from otel_prov.prov._record import ProvRecord

ROUNDS = 9
BATCHES = 20
BATCH = 15
TARGET = 1.10


class _EveryTriple:
    """The exporter's shared-triple memory, forgetting everything: every triple is sent."""

    def fresh(self, triples: Iterable[Triple]) -> tuple[list[Triple], list[Triple]]:
        return list(triples), []

    def remember(self, stored: Iterable[Triple]) -> None:
        pass


def _store(directory: Path, batches: list[list[ProvRecord]], *, every: bool) -> float:
    """CPU seconds of storing ``batches``, the memtables written out at the end."""
    exporter = OxigraphStoreExporter(directory)
    if every:
        exporter._shared = _EveryTriple()  # type: ignore[assignment]
    start = time.process_time()
    for batch in batches:
        exporter.export(batch)
    exporter.shutdown()
    return time.process_time() - start


def main() -> None:
    sessions = BATCHES * BATCH
    root = Path(tempfile.mkdtemp(prefix="bench-shared-"))
    shipped, every = [], []
    try:
        for round_ in range(ROUNDS):
            records = [
                map_spans(session_spans(round_ * sessions + i, iterations=2))
                for i in range(sessions)
            ]
            batches = [records[i : i + BATCH] for i in range(0, sessions, BATCH)]
            sides = [(shipped, False), (every, True)]
            for times, sends_all in sides if round_ % 2 else sides[::-1]:
                times.append(_store(root / f"{round_}-{sends_all}", batches, every=sends_all))
    finally:
        shutil.rmtree(root)
    triples = sum(len(r.triples) for r in records)
    kept = len({t for r in records for t in r.triples})
    with_it, without = statistics.median(shipped), statistics.median(every)
    ratio = without / with_it
    report(
        "shared triples left out of the held store's loads",
        ratio,
        f">= {TARGET:.2f}x",
        ratio >= TARGET,
        f"{with_it / sessions * 1e6:,.0f} us CPU a session with it, "
        f"{without / sessions * 1e6:,.0f} us without ({triples / sessions:.0f} triples a "
        f"session, {kept / sessions:.0f} distinct across the sessions)",
    )


if __name__ == "__main__":
    main()
