"""MCP client and server processes writing to one real Oxigraph server over streamable HTTP:
the server's tool calls sit under the client's in one graph, and the client's run still
verifies (the server's part is outside its seal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.mcp_processes import http_server, run_client, tool_calls
from tests.servers import start_oxigraph

pytestmark = pytest.mark.integration


def test_both_processes_in_one_store_join_and_the_clients_run_verifies(tmp_path: Path) -> None:
    oxigraph = start_oxigraph(tmp_path)
    try:
        with http_server(tmp_path / "server", "--endpoint", oxigraph.update_endpoint) as url:
            run = run_client(
                tmp_path / "client", "http", "--url", url, "--endpoint", oxigraph.update_endpoint
            )
        calls = tool_calls(oxigraph.query_endpoint)
        for tool in ("get_weather", "broken"):
            client, server = calls[f"mcp-agent/{tool}"], calls[f"mcp-weather/{tool}"]
            assert server["parent"] == client["call"]
            assert server["trace"] == client["trace"] == run["trace_id"]
            assert server["arguments"] == client["arguments"]
        assert calls["mcp-weather/broken"]["status"] == "error"
        assert calls["mcp-weather/get_weather"]["observation"] == "Paris: 18 C, clear"
        for command in (["verify", "--all"], ["verify", run["trace_id"]]):
            result = run_cli(*command, "--endpoint", oxigraph.query_endpoint)
            assert result.returncode == 0, result.stdout + result.stderr
    finally:
        oxigraph.stop()
