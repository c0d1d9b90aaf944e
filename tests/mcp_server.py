"""A real MCP server process (the SDK's ``MCPServer``) for the cross-process tests.

Run as ``python -m tests.mcp_server stdio|http [--port N] [--store DIR | --endpoint URL]
[--plain]``.  It serves ``get_weather(city)`` and ``broken(city)`` (which raises), over
stdio or over streamable HTTP on 127.0.0.1 (printing ``ready`` once it listens).
Instrumented with ``MCPInstrumentor`` and ``otel_prov.configure`` into its own embedded
store (``--store``) or a SPARQL server (``--endpoint``, its update URL), with no agent
session of its own; ``--plain`` leaves otel-prov out altogether.  Ends when stdin closes
(stdio) or on SIGTERM (HTTP), flushing its provenance first.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer


def serve(transport: str, port: int) -> None:
    server = MCPServer("weather", log_level="WARNING")

    @server.tool()
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"{city}: 18 C, clear"

    @server.tool()
    def broken(city: str) -> str:
        """A tool that always fails."""
        raise ValueError(f"no station near {city}")

    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--store")
    parser.add_argument("--endpoint")
    parser.add_argument("--plain", action="store_true")
    args = parser.parse_args()
    if args.plain:
        serve(args.transport, args.port)
        return
    import otel_prov
    from otel_prov.instrumentation.mcp import MCPInstrumentor

    handle = otel_prov.configure(
        service_name="mcp-weather",
        store=args.store,
        sparql_update_endpoint=args.endpoint,
        otlp=False,
    )
    MCPInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    try:
        serve(args.transport, args.port)
    finally:
        handle.shutdown()


if __name__ == "__main__":
    main()
