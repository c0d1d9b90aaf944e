"""``otel-prov mcp`` over stdio as a client launches it: stdout carries protocol messages
and nothing else (a stray print, a write to descriptor 1, a warning, all go to stderr),
and what a client may send (a line that is no JSON, an unknown method, a lone surrogate,
a huge argument) is answered without ending the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_reading.raw import PROTOCOL
from tests.mcp_reading.store import FAILED, Stored, build_store

ROOT = Path(__file__).resolve().parents[2]

NOISY = """
import os, sys, warnings
import otel_prov.mcp_server._tools as tools
from otel_prov.cli import main

shown = tools.Tools.list_runs

def list_runs(self, *args, **kwargs):
    print("a stray print")
    os.write(1, b"a stray write to descriptor 1\\n")
    warnings.warn("a stray warning")
    return shown(self, *args, **kwargs)

tools.Tools.list_runs = list_runs
sys.exit(main(sys.argv[1:]))
"""
"""The server with a tool that writes to stdout every way a library might."""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return build_store(tmp_path_factory.mktemp("mcp-stdio"))


def _message(number: int, method: str, params: dict[str, Any] | None = None) -> str:
    sent: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
    if params is not None:
        sent["params"] = params
    return json.dumps(sent)


def _call(number: int, tool: str, arguments: dict[str, Any]) -> str:
    return _message(number, "tools/call", {"name": tool, "arguments": arguments})


def _converse(
    command: list[str], lines: list[str], unanswered: frozenset[int] = frozenset()
) -> tuple[list[dict[str, Any]], str]:
    """Send ``lines`` to the server's stdin one by one, each request's answer awaited as
    a client awaits it (but those of ``unanswered`` ids), then close stdin; every line of
    its stdout (each must be a JSON-RPC message) and its stderr."""
    start = [
        _message(0, "initialize", {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    messages: list[dict[str, Any]] = []
    try:
        for line in [*start, *lines]:
            process.stdin.write(line + "\n")
            process.stdin.flush()
            try:
                awaited = json.loads(line).get("id")
            except ValueError:
                awaited = None
            if awaited in unanswered:
                awaited = None
            while awaited is not None and awaited not in {m.get("id") for m in messages}:
                said = process.stdout.readline()
                assert said, "the server ended"
                message = json.loads(said)  # a line that is not JSON fails here
                assert message["jsonrpc"] == "2.0", said
                messages.append(message)
        rest, stderr = process.communicate(timeout=60)  # closes stdin: the server ends
    finally:
        if process.poll() is None:
            process.kill()
    for said in rest.splitlines():
        messages.append(json.loads(said))
    assert process.returncode == 0, stderr
    return messages, stderr


def _answers(messages: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {message["id"]: message for message in messages if "id" in message}


def test_stdout_carries_protocol_messages_only(stored: Stored) -> None:
    command = [sys.executable, "-c", NOISY, "mcp", "--store", str(stored.store)]
    messages, stderr = _converse(command, [_call(1, "list_runs", {}), _call(2, "list_runs", {})])
    answers = _answers(messages)
    assert set(answers) == {0, 1, 2}
    for number in (1, 2):
        assert answers[number]["result"]["isError"] is False
        assert len(answers[number]["result"]["structuredContent"]["runs"]) == 3
    for stray in ("a stray print", "a stray write to descriptor 1", "a stray warning"):
        assert stray in stderr


def test_whatever_a_client_sends_the_server_answers_and_goes_on(stored: Stored) -> None:
    command = [sys.executable, "-m", "otel_prov", "mcp", "--store", str(stored.store)]
    lone = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "show_run", ' \
        '"arguments": {"run": "\\ud800 a lone surrogate"}}}'  # fmt: skip
    lines = [
        "this is not JSON",
        _message(1, "no/such/method"),
        _call(2, "show_run", {"run": "x" * 100_000}),
        lone,
        _call(4, "list_runs", {"agent": "\u0000\u2028", "text": "'\"} }"}),
        _call(5, "sparql", {"query": "SELECT * WHERE { ?s ?p ?o } " + "#" * 200_000}),
        _call(6, "show_run", {"run": FAILED}),
    ]
    # The SDK's stdio transport drops a message its JSON parser refuses, unanswered: a
    # lone surrogate is no Unicode text.
    messages, stderr = _converse(command, lines, unanswered=frozenset({3}))
    answers = _answers(messages)
    assert answers[1]["error"]["code"] == -32601  # method not found
    assert answers[2]["result"]["isError"] is True  # longer than a run id can be
    assert "2000" in answers[2]["result"]["content"][0]["text"]
    assert 3 not in answers or "error" in answers[3] or answers[3]["result"]["isError"]
    assert answers[4]["result"]["structuredContent"]["runs"] == []
    assert answers[5]["result"]["isError"] is True  # longer than a query may be
    shown = answers[6]["result"]["structuredContent"]["run"]
    assert shown["question"] == "Book a table for two at 8pm."
    assert "Traceback" not in stderr
