"""Real MCP client and server processes (``tests.mcp_client``, ``tests.mcp_server``), for
the tests: each with its write-ahead log, blobs and spool under the test's directory."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph
import requests

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
VARIABLES = (
    "call",
    "tool",
    "status",
    "error",
    "parent",
    "trace",
    "service",
    "arguments",
    "observation",
)
TOOL_CALLS = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?call ?tool ?status ?error ?parent ?trace ?service ?arguments ?observation WHERE {
  GRAPH ?g {
    ?call a oprov:ToolCall ; oprov:toolName ?tool ; oprov:status ?status ;
          oprov:traceId ?trace ; oprov:serviceName ?service .
    OPTIONAL { ?call oprov:errorType ?error }
    OPTIONAL { ?call oprov:partOf ?parent }
    OPTIONAL { ?call prov:used ?a . ?a a oprov:Arguments ; prov:value ?arguments }
    OPTIONAL { ?o prov:wasGeneratedBy ?call ; a oprov:Observation ; prov:value ?observation }
  }
}"""


def environment(work: Path) -> dict[str, str]:
    """Write-ahead logs, blobs and spools of both processes under the test's directory."""
    return {
        **os.environ,
        "OTEL_PROV_WAL_DIR": str(work / "wal"),
        "OTEL_PROV_BLOB_DIR": str(work / "blobs"),
        "OTEL_PROV_SPOOL_DIR": str(work / "spool"),
        "PYTHONPATH": str(ROOT),
    }


def run_client(work: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.mcp_client", *args],
        cwd=ROOT,
        env=environment(work),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@contextlib.contextmanager
def http_server(work: Path, *args: str) -> Iterator[str]:
    """The server on a free port; SIGTERM at the end (it flushes, then exits)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_server", "http", "--port", str(port), *args],
        cwd=ROOT,
        env=environment(work),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[1][-3000:]
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < deadline, "the MCP server did not start listening"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tool_calls(store: Path | str) -> dict[str, dict[str, str | None]]:
    """Tool name -> its call's values (strings; None where absent), by service when both
    processes share the store: from an embedded store's directory or a query endpoint."""
    rows: list[dict[str, str | None]] = []
    if isinstance(store, Path):
        solutions = pyoxigraph.Store.read_only(str(store)).query(TOOL_CALLS)
        assert isinstance(solutions, pyoxigraph.QuerySolutions)
        names = [v.value for v in solutions.variables]
        rows = [{n: None if r[n] is None else r[n].value for n in names} for r in solutions]
    else:
        answer = requests.post(
            store,
            data={"query": TOOL_CALLS},
            headers={"Accept": "application/sparql-results+json"},
            timeout=30,
        )
        answer.raise_for_status()
        rows = [
            {name: cell["value"] for name, cell in binding.items()}
            for binding in answer.json()["results"]["bindings"]
        ]
    found: dict[str, dict[str, str | None]] = {}
    for row in rows:
        found[f"{row.get('service')}/{row.get('tool')}"] = {k: row.get(k) for k in VARIABLES}
    return found
