"""``otel-prov serve`` over 100,000 stored runs: the newest page of the sessions list
(target: 300 ms) and the page of a session with 500 activities (target: 1 s).

The store is :func:`benchmarks.bench_reads.build_store`'s, plus one long run of 167
steps (a model call and a tool call each: 502 activities).  The app runs in uvicorn on
a real socket and is asked over HTTP, as a browser asks; the list pages in SPARQL (by
cursor), so its time does not grow with the store.  Each time is the median of 5
requests on one read-only opening; the time of opening again is printed beside them.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pyoxigraph
import uvicorn

from benchmarks.bench_reads import SESSIONS, build_store
from benchmarks.workload import median_seconds, session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import to_nquads
from otel_prov.read._backend import EmbeddedBackend
from otel_prov.view import create_app

LIST_TARGET_MS = 300
SESSION_TARGET_MS = 1000
STEPS = 167


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=120) as answer:
        if answer.status != 200:
            raise RuntimeError(f"{url} answered {answer.status}")
        return str(answer.read().decode())


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    try:
        begin = time.perf_counter()
        build_store(root / "store", SESSIONS)
        long_run = map_spans(session_spans(SESSIONS + 1, iterations=STEPS))
        store = pyoxigraph.Store(str(root / "store"))
        store.bulk_load(
            to_nquads(long_run.triples, "<urn:otel-prov:graph>").encode(),
            pyoxigraph.RdfFormat.N_QUADS,
        )
        store.flush()
        del store
        built = time.perf_counter() - begin
        app = create_app(
            lambda: EmbeddedBackend(root / "store"), graph="urn:otel-prov:graph", refresh_s=3600
        )
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        newest = _get(base + "/")
        older = newest.split('rel="next"')[0].rpartition('href="')[2].replace("&amp;", "&")
        session = f"{base}/session?{urllib.parse.urlencode({'id': long_run.trace_id})}"
        page = _get(session)
        activities = page.count('class="bar ')
        times = {
            "newest page": median_seconds(lambda: _get(base + "/"), 5),
            "next page by cursor": median_seconds(lambda: _get(base + older), 5),
            "one agent": median_seconds(lambda: _get(base + "/?agent=bench"), 5),
            "500-activity session": median_seconds(lambda: _get(session), 5),
        }
        try:
            search = (
                f"{median_seconds(lambda: _get(base + '/?q=question+number+1'), 1) * 1000:.0f} ms"
            )
        except TimeoutError:
            search = "over 120 s"
        reopen = median_seconds(lambda: EmbeddedBackend(root / "store"), 3)
        server.should_exit = True
        thread.join(10)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if activities < 500 or newest.count("/session?id=") != 50:
        raise RuntimeError(f"wrong pages: {activities} activities, list {newest[:200]}")
    ms = {name: seconds * 1000 for name, seconds in times.items()}
    listing = "meets" if ms["newest page"] <= LIST_TARGET_MS else "MISSES"
    long_page = "meets" if ms["500-activity session"] <= SESSION_TARGET_MS else "MISSES"
    print(
        f"serve over {SESSIONS:,} runs (built in {built:.0f} s): sessions list, 50 rows: "
        f"{ms['newest page']:.0f} ms ({listing} target {LIST_TARGET_MS} ms), next page "
        f"{ms['next page by cursor']:.0f} ms, one agent {ms['one agent']:.0f} ms, "
        f"text search {search} (a scan); session page of {activities} activities "
        f"{ms['500-activity session']:.0f} ms ({long_page} target {SESSION_TARGET_MS} ms); "
        f"opening the store again (every refresh_s) {reopen * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
