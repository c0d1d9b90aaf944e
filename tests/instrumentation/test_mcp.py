"""MCPInstrumentor with real MCP client and server processes, over stdio and streamable HTTP.

The client (``tests.mcp_client``) runs an agent session whose two iterations call the
server's ``get_weather`` and ``broken`` tools; the server (``tests.mcp_server``) is the
SDK's ``MCPServer``.  Each process stores its own provenance in its own embedded store;
the tests read both and check that the server's tool calls are ``oprov:partOf`` the
client's, in the client's trace.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from otel_prov.instrumentation.mcp import MCPInstrumentor
from otel_prov.instrumentation.mcp._patches import result_text
from tests.mcp_processes import http_server, run_client, tool_calls


def _by_tool(calls: dict[str, dict[str, str | None]]) -> dict[str, dict[str, str | None]]:
    """Calls of one process's store, by tool name alone."""
    return {key.split("/", 1)[1]: call for key, call in calls.items()}


def check_client(calls: dict[str, dict[str, str | None]], trace_id: str) -> None:
    """The client's calls are complete whatever the server did: arguments, result, status."""
    weather, broken = calls["get_weather"], calls["broken"]
    assert {weather["trace"], broken["trace"]} == {trace_id}
    assert {weather["service"], broken["service"]} == {"mcp-agent"}
    assert json.loads(weather["arguments"] or "") == {"city": "Paris"}
    assert weather["status"] == "ok" and weather["observation"] == "Paris: 18 C, clear"
    assert json.loads(broken["arguments"] or "") == {"city": "Atlantis"}
    assert broken["status"] == "error" and broken["error"] == "tool_error"
    assert broken["observation"] is None


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_servers_tool_calls_are_part_of_the_clients_in_its_trace(
    transport: str, tmp_path: Path
) -> None:
    client_store, server_store = tmp_path / "client", tmp_path / "server"
    if transport == "stdio":
        run = run_client(
            tmp_path, "stdio", "--store", str(client_store), "--server-store", str(server_store)
        )
    else:
        with http_server(tmp_path, "--store", str(server_store)) as url:
            run = run_client(tmp_path, "http", "--url", url, "--store", str(client_store))
    assert [call["error"] for call in run["calls"]] == [False, True]
    client = _by_tool(tool_calls(client_store))
    server = _by_tool(tool_calls(server_store))
    check_client(client, run["trace_id"])
    assert set(server) == {"get_weather", "broken"}
    for tool, call in server.items():
        assert call["parent"] == client[tool]["call"], tool
        assert call["trace"] == run["trace_id"] and call["service"] == "mcp-weather"
        assert call["arguments"] == client[tool]["arguments"]
    assert server["get_weather"]["status"] == "ok"
    assert server["get_weather"]["observation"] == client["get_weather"]["observation"]
    assert server["broken"]["status"] == "error" and server["broken"]["error"] == "tool_error"


def test_with_only_the_client_instrumented_its_calls_are_still_complete(tmp_path: Path) -> None:
    run = run_client(tmp_path, "stdio", "--store", str(tmp_path / "client"), "--server-plain")
    calls = _by_tool(tool_calls(tmp_path / "client"))
    check_client(calls, run["trace_id"])
    assert set(calls) == {"get_weather", "broken"}  # nothing of the server's
    assert not (tmp_path / "server").exists()


async def _call_both(url: str) -> list[bool]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("get_weather", {"city": "Paris"})
        second = await session.call_tool("broken", {"city": "Atlantis"})
    return [bool(first.is_error), bool(second.is_error)]


def test_client_spans_carry_the_genai_and_mcp_attributes(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, exporter = memory_provider
    instrumentor = MCPInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with http_server(tmp_path, "--plain") as url:
            errors = asyncio.run(_call_both(url))
    finally:
        instrumentor.uninstrument()
    assert errors == [False, True]
    spans = {span.name: span for span in exporter.get_finished_spans()}
    weather, broken = spans["execute_tool get_weather"], spans["execute_tool broken"]
    for span in (weather, broken):
        attributes = dict(span.attributes or {})
        assert span.kind is SpanKind.CLIENT
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.method.name"] == "tools/call"
        assert isinstance(attributes["mcp.session.id"], str) and attributes["mcp.session.id"]
    assert weather.attributes is not None and broken.attributes is not None
    assert json.loads(str(weather.attributes["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert weather.attributes["gen_ai.tool.call.result"] == "Paris: 18 C, clear"
    assert weather.status.status_code is not StatusCode.ERROR
    assert broken.status.status_code is StatusCode.ERROR
    assert broken.attributes["error.type"] == "tool_error"
    assert "gen_ai.tool.call.result" not in broken.attributes


def test_uninstrument_restores_the_sdk() -> None:
    from mcp.client.session import ClientSession as Session
    from mcp.server._otel import OpenTelemetryMiddleware

    before = (Session.call_tool, OpenTelemetryMiddleware.__call__)
    instrumentor = MCPInstrumentor()
    instrumentor.instrument()
    assert Session.call_tool is not before[0]
    instrumentor.uninstrument()
    assert (Session.call_tool, OpenTelemetryMiddleware.__call__) == before


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)))


@given(st.lists(_TEXT, min_size=1, max_size=4))
def test_a_text_result_reads_as_its_text(texts: list[str]) -> None:
    result = {"content": [{"type": "text", "text": text} for text in texts], "isError": False}
    assert result_text(result) == "\n".join(texts)


@given(_TEXT, st.dictionaries(_TEXT, st.integers() | _TEXT, max_size=3))
def test_any_other_result_reads_as_its_exact_json(text: str, structure: dict[str, Any]) -> None:
    result = {
        "content": [{"type": "text", "text": text}, {"type": "image", "data": "AA=="}],
        "structuredContent": structure,
    }
    assert json.loads(result_text(result)) == result
