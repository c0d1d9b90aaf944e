"""Record the fixtures of ``bench_third_party``: one scripted run's spans, per instrumentation.

``python -m benchmarks.record_third_party`` runs the conformance suite's script (one tool
answers, one raises, the model answers; ``tests/self_traced/scenario.py``) on the
scripted OpenAI-compatible server of ``tests/conformance/openai_server.py``, once under
each instrumentation of :data:`RUNS`, each in a process of its own (an instrumentor
patches its framework for the process), and writes what the SDK's OTLP exporter would
send (the protobuf request, as ``otel-prov receive`` gets it) to
``benchmarks/fixtures/<run>.pb``.  The runs of :data:`SCENARIO_RUNS` are conformance
scenarios whose frameworks live in side venvs: each runs as the suite runs it (its agent
module, in its venv), its OTLP export going to a local receiver of this module's that
keeps the requests, merged into one.  ``python -m benchmarks.record_third_party NAME...``
records only those.  Run it again when an instrumentation's pin changes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

_GENAI_LATEST = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}


def _openai_agents(instrumentation: str) -> Callable[[TracerProvider], None]:
    """The script as an OpenAI Agents SDK agent (Chat Completions), under ``instrumentation``:
    ``otel-prov`` (ours) or a third party's, as the conformance suite instruments it."""

    def run(provider: TracerProvider) -> None:
        from tests.conformance import openai_agents_agent as agent

        if instrumentation == "otel-prov":
            from agents.tracing import set_trace_processors

            from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor

            ours = OpenAIAgentsInstrumentor()
            ours.instrument(tracer_provider=provider)
            set_trace_processors([ours.processor])  # no export to OpenAI's tracing service
        else:
            agent.instrument(instrumentation, provider)
        asyncio.run(agent.run(agent.build("chat"), "run"))

    return run


def _genai_client(provider: TracerProvider) -> None:
    """The script as a hand-written loop on the ``openai`` client, under the official GenAI
    packages with the newest conventions and content on spans."""
    from openai import OpenAI

    from tests.conformance import openai_client_agent as agent

    tracing = agent.Tracing("genai", provider)
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key")
    with tracing.agent() as answered:
        answered(agent.chat_loop(client, tracing, stream=False))


RUNS: dict[str, tuple[Callable[[TracerProvider], None], dict[str, str]]] = {
    "otel-prov-openai-agents": (_openai_agents("otel-prov"), {}),
    "openinference-openai-agents": (_openai_agents("openinference"), {}),
    "openllmetry-openai-agents": (_openai_agents("openllmetry"), {}),
    "genai-openai-v2-latest": (_genai_client, _GENAI_LATEST),
}
"""Fixture name -> the run, and the environment its instrumentation reads at import."""


SCENARIO_RUNS = {
    "openinference-dspy": "openinference-dspy-react",
    "openinference-haystack": "openinference-haystack-agent",
    "autogen-agentchat": "autogen-agentchat",
    "autogen-agentchat-openllmetry": "autogen-agentchat-openllmetry",
    "agent-framework": "agent-framework",
    "semantic-kernel": "semantic-kernel",
    "openinference-agno": "openinference-agno",
    "openinference-litellm": "openinference-litellm-run",
    "openllmetry-crewai": "openllmetry-crewai",
    "ag2": "ag2",
    "openinference-beeai": "openinference-beeai",
}
"""Fixture name -> the conformance scenario (``tests/conformance/test_conformance.py``) it
records."""


class _Requests(BaseHTTPRequestHandler):
    """Keeps the body of every OTLP/HTTP trace request (``POST /v1/traces``)."""

    bodies: ClassVar[list[bytes]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/v1/traces"):
            self.bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def record_scenario(name: str) -> None:
    """Run scenario ``SCENARIO_RUNS[name]``'s agent as the suite does and write the spans it
    exported to fixture ``name``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from tests.conformance.openai_server import ScriptedOpenAI
    from tests.conformance.test_conformance import SCENARIOS
    from tests.side_venv import installed

    (scenario,) = [s for s in SCENARIOS if s.name == SCENARIO_RUNS[name]]
    python = installed(*scenario.venv) if scenario.venv else Path(sys.executable)
    _Requests.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Requests)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as directory, ScriptedOpenAI() as model:
            subprocess.run(
                [str(python), "-m", f"tests.conformance.{scenario.module}",
                 str(Path(directory) / "store"), *scenario.arguments],
                cwd=directory,
                check=True,
                capture_output=True,
                timeout=300,
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": directory,
                    "PYTHONPATH": str(ROOT),
                    "OPENAI_BASE_URL": model.base_url,
                    "OPENAI_API_KEY": "not-a-key",
                    "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_port}",
                    **scenario.environment,
                },
            )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    merged = ExportTraceServiceRequest()
    for body in _Requests.bodies:
        merged.MergeFromString(body)
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / f"{name}.pb").write_bytes(merged.SerializeToString())


def record(name: str) -> None:
    """Run ``name`` in this process and write its spans to its fixture."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "conformance"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    RUNS[name][0](provider)
    provider.shutdown()
    request = encode_spans(exporter.get_finished_spans()).SerializeToString()
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / f"{name}.pb").write_bytes(request)


def main(argv: list[str]) -> int:
    if argv and argv[0] in RUNS:
        record(*argv)  # in the process the loop below starts for it
        return 0
    for name in argv or SCENARIO_RUNS:
        record_scenario(name)
        print(f"wrote {FIXTURES / name}.pb")
    if argv:
        return 0
    from tests.conformance.openai_server import ScriptedOpenAI

    for name, (_, environment) in RUNS.items():
        with ScriptedOpenAI() as model:
            subprocess.run(
                [sys.executable, "-m", "benchmarks.record_third_party", name],
                cwd=ROOT,
                check=True,
                env={
                    **os.environ,
                    "PYTHONPATH": str(ROOT),
                    "OPENAI_BASE_URL": model.base_url,
                    "OPENAI_API_KEY": "not-a-key",
                    **environment,
                },
            )
        print(f"wrote {FIXTURES / name}.pb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
