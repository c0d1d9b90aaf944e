"""The shared script's two tools served by a real MCP server process, over stdio.

``python -m tests.conformance.mcp_weather`` serves ``get_weather`` (which answers) and
``get_forecast`` (which fails) of tests/self_traced/scenario.py with the MCP SDK's
``MCPServer``, untraced: the conformance suite reads what the agent's side records.  The
failure is a ``ToolError``, the SDK's way of sending its text to the client (any other
exception reaches the client as ``Error executing tool get_forecast``, its message
withheld).  It ends when stdin closes.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tests.self_traced import scenario


def get_forecast(city: str, days: int) -> str:
    """The forecast for a city, ``days`` ahead."""
    try:
        return scenario.get_forecast(city, days)
    except scenario.ForecastUnavailableError as error:
        raise ToolError(str(error)) from error


def main() -> None:
    server = MCPServer(scenario.AGENT, log_level="WARNING")
    server.tool()(scenario.get_weather)
    server.tool()(get_forecast)
    server.run("stdio")


if __name__ == "__main__":
    main()
