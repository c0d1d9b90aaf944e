"""An agent of a real framework asks ``otel-prov mcp`` why a run failed: the OpenAI Agents
SDK's agent loop, its own MCP client over stdio, a scripted model
(``tests/mcp_reading/agent_loop.py``).  The agent's run is recorded by otel-prov in its
process, the server's tool calls in the server's (under ``opentelemetry-instrument``),
both into one real SPARQL server, and the MCP calls are joined across the two: each of
the server's calls is part of the agent's call, in the agent's trace, counted once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.mcp_processes import environment, tool_calls
from tests.mcp_reading.store import FAILED, build_store
from tests.servers import start_oxigraph

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _cli_json(endpoint: str, *args: str) -> Any:
    done = run_cli(*args, "--endpoint", endpoint, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_agent_asks_why_a_run_failed_and_its_mcp_calls_join_across_processes(
    tmp_path: Path,
) -> None:
    stored = build_store(tmp_path / "asked")
    server = start_oxigraph(tmp_path / "oxigraph")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.mcp_reading.agent_loop", str(stored.store), FAILED,
             server.update_endpoint],
            cwd=ROOT, env=environment(tmp_path / "work"), capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        answer = json.loads(done.stdout.strip().splitlines()[-1])["answer"]
        # The answer is the server's: the summary's sentence of what failed and why.
        assert "the booking service did not answer" in answer and "failed" in answer
        query = server.query_endpoint
        (run,) = _cli_json(query, "sessions")
        assert (run["agent"], run["service"], run["status"]) == ("investigator", "why-agent", "ok")
        assert (run["tool_calls"], run["failed_calls"]) == (2, 0)  # each MCP call once
        calls = tool_calls(query)
        for tool, arguments in (("why", {"id": FAILED}), ("summarize_run", {"run": FAILED})):
            agents, served = calls[f"why-agent/{tool}"], calls[f"otel-prov-mcp/{tool}"]
            assert served["parent"] == agents["call"], tool  # joined across the processes
            assert served["trace"] == agents["trace"] == run["trace_id"]
            assert json.loads(served["arguments"] or "") == arguments
            assert json.loads(agents["arguments"] or "") == arguments
        summary = json.loads(calls["otel-prov-mcp/summarize_run"]["observation"] or "")
        assert any(answer == sentence["text"] for sentence in summary["sentences"])
        # What the agent's answer rests on: its calls of the server's tools.
        drawn = _cli_json(query, "why", run["trace_id"])
        tools = {node.get("tool") for node in drawn["nodes"] if node["type"] == "ToolCall"}
        assert {"why", "summarize_run"} <= tools
        verified = run_cli("verify", "--all", "--endpoint", query)
        assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        server.stop()
