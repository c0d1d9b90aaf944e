"""What the Model Context Protocol adds to a read: each tool of ``otel-prov mcp`` called by
the official MCP client over stdio, beside the same read through ``otel_prov.read`` and
beside the server's own answer to it (``Tools``, in process: the read, what the CLI's
JSON makes of it, the size limits), over 10,000 stored runs.

The store is :func:`benchmarks.bench_reads.build_store`'s (10,000 two-step runs), kept
under the system's temporary directory (``OTEL_PROV_BENCH_STORE`` names another place)
and used again by the next run.  Each question is asked ``ROUNDS`` times the three ways
in turn (read API, tools, MCP), on one read-only opening each, and the medians are
printed with the ratio of MCP to the read API and what the protocol adds to the tools'
answer (JSON-RPC, the SDK's validation of arguments and of the result's schema, the pipe).
``sparql`` runs its query in a child process under a time limit in every column (the
read API's is ``run_timed_query``, what ``query`` and ``serve`` run too).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from benchmarks.bench_reads import GRAPH, build_store
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.mcp_server._tools import Tools
from otel_prov.read import ProvenanceReader
from otel_prov.read._confinement import Confinement
from otel_prov.read._text_index import TextIndex
from otel_prov.view._timed_query import run_timed_query

RUNS = 10_000
ROUNDS = 15
QUERY = (
    "SELECT ?tool (COUNT(*) AS ?n) WHERE { ?c a oprov:ToolCall ; oprov:toolName ?tool } "
    "GROUP BY ?tool"
)


def _store() -> tuple[Path, float]:
    default = Path(tempfile.gettempdir()) / f"otel-prov-bench-mcp-{RUNS}"
    root = Path(os.environ.get("OTEL_PROV_BENCH_STORE", default))
    if (root / "complete").exists():
        return root / "store", 0.0
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    begin = time.perf_counter()
    build_store(root / "store", RUNS)
    (root / "complete").write_text("built\n")
    return root / "store", time.perf_counter() - begin


Question = tuple[str, dict[str, Any], Callable[[], object], Callable[[], object]]
"""A tool, its arguments, the same read through the read API, and the tools' answer to it."""


def _questions(reader: ProvenanceReader, backend: EmbeddedBackend, tools: Tools) -> list[Question]:
    newest, older = reader.sessions(limit=2).sessions
    run, other, trace = newest.id, older.id, newest.trace_id
    reads = Confinement.of(GRAPH)
    return [
        ("list_runs", {}, lambda: reader.sessions(limit=20), lambda: tools.list_runs(reads)),
        ("list_runs", {"status": "error"}, lambda: reader.sessions(status="error", limit=20),
         lambda: tools.list_runs(reads, status="error")),
        ("show_run", {"run": run}, lambda: reader.session(run), lambda: tools.show_run(reads, run)),
        ("why", {"id": run}, lambda: reader.why(run), lambda: tools.why(reads, run)),
        ("diff_runs", {"a": run, "b": other}, lambda: reader.diff(run, other),
         lambda: tools.diff_runs(reads, run, other)),
        ("summarize_run", {"run": run}, lambda: reader.summary(run),
         lambda: tools.summarize_run(reads, run)),
        ("trace_spans", {"id": trace}, lambda: reader.trace_spans(trace),
         lambda: tools.trace_spans(reads, trace)),
        ("verify", {"run": run}, lambda: reader.verify(run), lambda: tools.verify(reads, run)),
        ("sparql", {"query": QUERY},
         lambda: run_timed_query(backend, QUERY, confinement=reads, timeout_s=60),
         lambda: tools.sparql(reads, QUERY)),
    ]  # fmt: skip


def _timed(work: Callable[[], object]) -> float:
    begin = time.perf_counter()
    work()
    return time.perf_counter() - begin


async def _timed_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    begin = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    spent = time.perf_counter() - begin
    if result.is_error:
        raise RuntimeError(f"{tool} {arguments}: {result.content}")
    return spent


async def _measure(store: Path) -> list[tuple[str, float, float, float]]:
    backend = EmbeddedBackend(store)
    reader = ProvenanceReader(backend, graph=GRAPH)
    index = TextIndex()
    tools = Tools(backend=lambda: backend, indexes=lambda graph: index)
    questions = _questions(reader, backend, tools)
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "otel_prov", "mcp", "--store", str(store)]
    )
    rows = []
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for tool, arguments, direct, shaped in questions:
            times: dict[str, list[float]] = {"read": [], "tools": [], "mcp": []}
            await _timed_call(session, tool, arguments)  # each way once, caches warm
            direct(), shaped()
            for _ in range(ROUNDS):
                times["read"].append(_timed(direct))
                times["tools"].append(_timed(shaped))
                times["mcp"].append(await _timed_call(session, tool, arguments))
            named = [f"{k}={arguments[k]}" if k == "status" else k for k in arguments]
            label = f"{tool}({', '.join(named)})"
            rows.append(
                (label, *(statistics.median(times[way]) for way in ("read", "tools", "mcp")))
            )
    return rows


def main() -> None:
    store, built = _store()
    print(f"{RUNS:,} runs in {store}" + (f" (built in {built:.0f} s)" if built else ""))
    rows = asyncio.run(_measure(store))
    print(
        f"medians of {ROUNDS}, ms: read API | tools in process | MCP over stdio | MCP/read", end=""
    )
    print(" | MCP - tools")
    for label, read, shaped, mcp in rows:
        print(
            f"{label:<26} {read * 1e3:8.2f} {shaped * 1e3:8.2f} {mcp * 1e3:8.2f} "
            f"{mcp / read:6.2f}x {(mcp - shaped) * 1e3:+8.2f}"
        )
    print(json.dumps({"runs": RUNS, "rounds": ROUNDS, "rows": [list(r) for r in rows]}))


if __name__ == "__main__":
    main()
