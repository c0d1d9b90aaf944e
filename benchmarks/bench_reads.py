"""The newest page of ``sessions`` over 100,000 stored runs (target: 300 ms).

The store is built by bulk-loading generated quads: one workload session is mapped
once, and each copy gets its own trace id, start minute, conversation id and question
(the bundle hashes are the template's, which listing does not read).  Mapping and
exporting 100,000 sessions through the processor would take longer than everything
measured here.  Printed: the store's size, how long building took, and the time of
the newest page, of the page after it (by cursor), and of the newest page filtered by
agent, by status, and by an agent no run has (the filters are checked on the newest
runs a batch at a time; a filter that keeps few runs ends in one query over them all).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyoxigraph

from benchmarks.workload import T0, median_seconds, session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import to_nquads
from otel_prov.read import ProvenanceReader, open_store

SESSIONS = 100_000
TARGET_MS = 300
_CHUNK = 5_000


def build_store(path: Path, sessions: int) -> int:
    """``sessions`` copies of a workload session, one a minute (a two-step session
    lasts 21 s, so only the minute of its times changes); the number of quads."""
    record = map_spans(session_spans(0, iterations=2))
    template = to_nquads(record.triples, "<urn:otel-prov:graph>")
    first = datetime.fromtimestamp(T0 / 1e9, tz=timezone.utc)
    minute = first.strftime("%Y-%m-%dT%H:%M:")
    store = pyoxigraph.Store(str(path))
    for start in range(0, sessions, _CHUNK):
        chunk = [
            template.replace(record.trace_id, f"{index + 1:032x}")
            .replace(minute, f"{first + timedelta(minutes=index):%Y-%m-%dT%H:%M:}")
            .replace('"c0"', f'"c{index}"')
            .replace("Question number 0 ", f"Question number {index} ")
            for index in range(start, min(start + _CHUNK, sessions))
        ]
        store.bulk_load("".join(chunk).encode(), pyoxigraph.RdfFormat.N_QUADS)
    store.flush()
    return len(template.splitlines()) * sessions


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-reads-"))
    try:
        begin = time.perf_counter()
        quads = build_store(root / "store", SESSIONS)
        built = time.perf_counter() - begin
        reader: ProvenanceReader = open_store(root / "store")
        begin = time.perf_counter()
        page = reader.sessions(limit=20)
        cold = (time.perf_counter() - begin) * 1000
        newest = median_seconds(lambda: reader.sessions(limit=20), 5) * 1000
        after = median_seconds(lambda: reader.sessions(limit=20, cursor=page.next_cursor), 5) * 1000
        agent = median_seconds(lambda: reader.sessions(agent="bench", limit=20), 5) * 1000
        status = median_seconds(lambda: reader.sessions(status="ok", limit=20), 5) * 1000
        nobody = median_seconds(lambda: reader.sessions(agent="nobody", limit=20), 1) * 1000
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if len(page.sessions) != 20 or page.sessions[0].question != (
        f'Question number {SESSIONS - 1} with some "quotes"\n'
    ):
        raise RuntimeError(f"the newest page is wrong: {page.sessions[:1]}")
    verdict = "meets" if newest <= TARGET_MS else "MISSES"
    print(
        f"sessions over {SESSIONS:,} runs ({quads:,} quads, built in {built:.0f} s): "
        f"newest page {newest:.0f} ms ({verdict} target {TARGET_MS} ms; first call {cold:.0f} ms), "
        f"next page by cursor {after:.0f} ms; newest page of one agent {agent:.0f} ms, "
        f"of status ok {status:.0f} ms, of an agent no run has {nobody:.0f} ms"
    )


if __name__ == "__main__":
    main()
