"""MCP's streamable HTTP spoken by hand (``requests``), for what the SDK's client does not
let a test do: send any header (``Host``, ``Origin``, another reader's session id), see
the HTTP status of a refusal, and stop reading halfway."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import requests

__all__ = ["PROTOCOL", "RawSession", "answer_of"]

PROTOCOL = "2025-06-18"
_ids = itertools.count(1)


def answer_of(response: requests.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer, sent as JSON or as one event of a stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json())
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if "id" in message:
                return dict(message)
    raise AssertionError(f"no answer in {response.text[:500]!r}")


@dataclass
class RawSession:
    url: str
    """``http://host:port/mcp``."""
    headers: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None

    def post(self, message: dict[str, Any], **headers: str) -> requests.Response:
        sent = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL,
            **self.headers,
            **headers,
        }
        if self.session_id is not None:
            sent["mcp-session-id"] = self.session_id
        return requests.post(self.url, json=message, headers=sent, timeout=120)

    def initialize(self, **headers: str) -> requests.Response:
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": next(_ids),
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
            **headers,
        )
        if response.status_code == 200:
            self.session_id = response.headers.get("mcp-session-id")
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
        return response

    def call(self, tool: str, arguments: dict[str, Any], **headers: str) -> requests.Response:
        return self.post(
            {
                "jsonrpc": "2.0",
                "id": next(_ids),
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            },
            **headers,
        )

    def result(self, tool: str, arguments: dict[str, Any], **headers: str) -> dict[str, Any]:
        """The result of a call that the server let in (its HTTP status 200)."""
        response = self.call(tool, arguments, **headers)
        assert response.status_code == 200, (response.status_code, response.text[:300])
        message = answer_of(response)
        assert "result" in message, message
        return dict(message["result"])
