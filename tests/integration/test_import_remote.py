"""``otel-prov import --endpoint-update`` writes to Oxigraph's and Virtuoso's SPARQL
endpoints what it writes to the embedded store, and a second import adds nothing there
either (the stored sessions are read back over SPARQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.servers import SparqlServer
from tests.test_import import _session_spans, encode_lines

pytestmark = pytest.mark.integration


def test_import_to_an_endpoint_matches_the_store_and_is_idempotent(
    server: SparqlServer, tmp_path: Path
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(encode_lines(_session_spans(0xA, "weather", 0)), encoding="utf-8")
    session, iteration, tool = _session_spans(0xB, "weather", 100)
    second.write_text(encode_lines([session, iteration]), encoding="utf-8")
    later = tmp_path / "c.jsonl"
    later.write_text(encode_lines([tool]), encoding="utf-8")
    local = ("--store", str(tmp_path / "store"))
    remote = ("--endpoint", server.query_endpoint)
    to_remote = ("--endpoint-update", server.update_endpoint, *remote)
    # The last span of the second run comes in a later file (a revision), then the first
    # file comes again (nothing new).
    for files in ((first, second), (later,), (first, second)):
        for destination in (local, to_remote):
            result = run_cli("import", *map(str, files), *destination, cwd=tmp_path)
            assert result.returncode == 0, (destination, result.stderr)
    assert result.stdout == (
        "imported 5 spans from 2 traces: 2 sessions (2 already stored, 0 of them revised)\n"
    )
    for command in (
        ("sessions", "--format", "json"),
        ("show", f"{0xA:032x}", "--format", "json"),
        ("show", f"{0xB:032x}", "--format", "json"),
        ("verify", "--format", "json"),
    ):
        here, there = run_cli(*command, *local), run_cli(*command, *remote)
        assert here.returncode == there.returncode == 0, (command, there.stdout, there.stderr)
        assert there.stdout == here.stdout, command
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert run_cli("query", count, *remote).stdout == run_cli("query", count, *local).stdout
