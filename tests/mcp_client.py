"""A real MCP client process: an agent session whose tool calls go to ``tests.mcp_server``.

Run as ``python -m tests.mcp_client stdio|http [--url URL] [--server-store DIR |
--server-endpoint URL] [--server-plain] [--store DIR | --endpoint URL]``.  Over stdio it
launches the server itself (``StdioServerParameters``), passing the ``--server-*``
options on.  One session, ``weather-agent``, calls ``get_weather`` then ``broken`` in two
iterations, through an instrumented ``ClientSession``; it prints one JSON line: the trace
id and, per call, the result text and whether it was an error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace

import otel_prov
from otel_prov.instrumentation.mcp import MCPInstrumentor

CALLS = (("get_weather", {"city": "Paris"}), ("broken", {"city": "Atlantis"}))


@asynccontextmanager
async def connect(args: argparse.Namespace) -> AsyncIterator[ClientSession]:
    if args.transport == "http":
        transport = streamable_http_client(args.url)
    else:
        server = ["-m", "tests.mcp_server", "stdio"]
        server += ["--plain"] if args.server_plain else []
        server += ["--store", args.server_store] if args.server_store else []
        server += ["--endpoint", args.server_endpoint] if args.server_endpoint else []
        parameters = StdioServerParameters(
            command=sys.executable, args=server, env=dict(os.environ), cwd=Path.cwd()
        )
        transport = stdio_client(parameters)
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, number: int) -> dict[str, Any]:
    name, arguments = CALLS[number - 1]
    with otel_prov.iteration(number, action=name, arguments=json.dumps(arguments)):
        result = await session.call_tool(name, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        otel_prov.set_observation(text)
    return {"tool": name, "text": text, "error": result.is_error}


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    async with connect(args) as session:
        return [await call(session, number) for number in (1, 2)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--url")
    parser.add_argument("--store")
    parser.add_argument("--endpoint")
    parser.add_argument("--server-store")
    parser.add_argument("--server-endpoint")
    parser.add_argument("--server-plain", action="store_true")
    args = parser.parse_args()
    handle = otel_prov.configure(
        service_name="mcp-agent", store=args.store, sparql_update_endpoint=args.endpoint, otlp=False
    )
    MCPInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    with otel_prov.agent_session("weather-agent", question="Weather in Paris?") as session:
        calls = asyncio.run(run(args))
        otel_prov.set_answer("18 C in Paris.", span=session)
    trace_id = f"{trace.format_trace_id(session.get_span_context().trace_id)}"
    handle.shutdown()
    print(json.dumps({"trace_id": trace_id, "calls": calls}))


if __name__ == "__main__":
    main()
