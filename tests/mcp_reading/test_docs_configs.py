"""The clients' configurations docs/mcp.md gives work as written: each is JSON, each stdio
one starts a server the official client initializes and lists the tools of (its store
path pointed at a real store), and each HTTP one names the ``/mcp`` URL and a bearer
token."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from otel_prov.mcp_server._server import TOOLS
from tests.cli import write_demo_store
from tests.mcp_reading.client import stdio_session

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
_JSON = re.compile(r"^```json\n(.*?)^```", re.S | re.M)


def _configs() -> list[dict[str, Any]]:
    return [json.loads(block) for block in _JSON.findall(PAGE.read_text(encoding="utf-8"))]


def _servers(config: dict[str, Any]) -> dict[str, Any]:
    found = config.get("mcpServers") or config.get("servers")
    assert isinstance(found, dict) and set(found) == {"otel-prov"}, config
    return dict(found["otel-prov"])


def test_the_page_gives_stdio_and_http_configurations() -> None:
    servers = [_servers(config) for config in _configs()]
    assert len([s for s in servers if "command" in s]) == 3  # Claude Desktop, VS Code, Cursor
    assert len([s for s in servers if "url" in s]) == 2  # VS Code, Cursor
    for server in servers:
        if "url" in server:
            assert server["url"] == "http://127.0.0.1:8765/mcp"
            assert server["headers"]["Authorization"].startswith("Bearer ")


@pytest.mark.parametrize("number", range(3))
def test_each_stdio_configuration_starts_the_server(tmp_path: Path, number: int) -> None:
    server = [_servers(c) for c in _configs() if "command" in _servers(c)][number]
    assert server["command"] == "otel-prov"
    store = write_demo_store(tmp_path)
    args = [str(store) if arg.endswith("/.otel-prov/store") else arg for arg in server["args"]]
    assert args[0] == "mcp" and str(store) in args
    with stdio_session(*args[1:]) as client:
        listed = client.run(client.session.list_tools()).tools
        assert [tool.name for tool in listed] == list(TOOLS)
        assert len(client.ok("list_runs")["runs"]) == 1
