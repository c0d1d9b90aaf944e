"""An agent process that knows nothing of otel-prov: the OpenTelemetry SDK, its OTLP
exporters and spans with the GenAI (and ``otel_prov.*``) attributes, nothing else.

Run as ``python -m tests.otlp_agent --protocol grpc|http --endpoint E --service S``;
``--sessions N`` agent runs of ``--steps`` iterations each, every run its own trace,
``--pause`` seconds apart (a stream that lasts, for a fault in the middle of it).
With ``--research URL`` each run's first tool call asks a service over HTTP (and its
second asks the service for a path it does not have: a 404)
(``tests.otlp_service``), propagating the trace context in ``traceparent``.
``--endpoint`` may list several receivers, comma-separated: spans then go through the
:class:`LoadBalancingExporterStandIn`.  With ``--hold FILE`` each run stops before its last
step, its spans so far exported, says so on a line (``{"held": trace id}``) and waits for
FILE to be there: a long tool call, or a wait for a person, between a run's first steps
and its end.  Prints one JSON line: the trace ids it ran.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

TOOLS = ("search", "fetch", "calculator")


def spans_per_session(steps: int) -> int:
    """The session, an iteration and a model call per step, a tool call per step but the
    last (the final answer)."""
    return 1 + 2 * steps + steps - 1


def exporter(protocol: str, endpoints: str) -> SpanExporter:
    """An OTLP exporter to ``endpoints``; to several (comma-separated), through the
    :class:`LoadBalancingExporterStandIn`."""
    backends: list[SpanExporter] = [
        GrpcExporter(endpoint=endpoint, insecure=True)
        if protocol == "grpc"
        else HttpExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")
        for endpoint in endpoints.split(",")
    ]
    return backends[0] if len(backends) == 1 else LoadBalancingExporterStandIn(backends)


class LoadBalancingExporterStandIn(SpanExporter):
    """What the Collector's ``loadbalancing`` exporter does with ``routing_key: traceID``:
    every span of a trace goes to the same backend, picked by hashing the trace id, so
    that one receiver sees each trace whole even when it comes from several processes."""

    def __init__(self, backends: Sequence[SpanExporter]) -> None:
        self._backends = list(backends)

    def _pick(self, trace_id: int) -> SpanExporter:
        digest = hashlib.sha256(trace_id.to_bytes(16, "big")).digest()
        return self._backends[int.from_bytes(digest[:8], "big") % len(self._backends)]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        routed: dict[int, list[ReadableSpan]] = {}
        for span in spans:
            backend = self._pick(span.context.trace_id if span.context else 0)
            routed.setdefault(id(backend), []).append(span)
        results = [
            backend.export(routed[id(backend)])
            for backend in self._backends
            if id(backend) in routed
        ]
        ok = all(result is SpanExportResult.SUCCESS for result in results)
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        for backend in self._backends:
            backend.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return all(backend.force_flush(timeout_millis) for backend in self._backends)


def run_session(
    tracer: Tracer,
    agent: str,
    question: str,
    steps: int,
    research: str | None,
    hold: Callable[[int], None] | None = None,
) -> int:
    """One agent run (a ReAct loop: model call, then a tool call, per step); its trace id.
    ``hold`` is called with it before the last step."""
    with tracer.start_as_current_span(
        f"invoke_agent {agent}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": f"conversation-{question}",
            "otel_prov.question": question,
        },
    ) as session:
        observation = ""
        for number in range(1, steps + 1):
            final = number == steps
            if final and hold is not None:
                hold(session.get_span_context().trace_id)
            tool = "final_answer" if final else TOOLS[number % len(TOOLS)]
            arguments = json.dumps({"query": f"{question} step {number}"})
            with tracer.start_as_current_span(
                f"iteration {number}",
                attributes={
                    "otel_prov.iteration.number": number,
                    "otel_prov.thought": f"step {number}: use {tool}",
                    "otel_prov.action": tool,
                    "otel_prov.arguments": arguments,
                },
            ) as iteration:
                with tracer.start_as_current_span(
                    "chat model-x",
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "model-x",
                        "gen_ai.provider.name": "example",
                        "gen_ai.usage.input_tokens": 100 + number,
                        "gen_ai.usage.output_tokens": 20,
                    },
                ):
                    pass
                if final:
                    session.set_attribute("otel_prov.answer", f"answer to {question}")
                    continue
                with tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": f"call-{number}",
                        "gen_ai.tool.call.arguments": arguments,
                    },
                ) as call:
                    if research is not None and number == 1:
                        observation = ask(tracer, research, question)
                    elif research is not None and number == 2:  # a path the service lacks
                        observation = ask(tracer, research.rsplit("/", 1)[0] + "/missing", question)
                    else:
                        observation = f"{tool} result {number}"
                    call.set_attribute("gen_ai.tool.call.result", observation)
                    call.set_status(Status(StatusCode.OK))
                iteration.set_attribute("otel_prov.observation", observation)
        return session.get_span_context().trace_id


def ask(tracer: Tracer, url: str, question: str) -> str:
    """An HTTP request to another service, as an instrumented HTTP client makes it."""
    with tracer.start_as_current_span(
        "POST",
        kind=SpanKind.CLIENT,
        attributes={"http.request.method": "POST", "url.full": url},
    ) as client:
        headers = {"Content-Type": "application/json"}
        propagate.inject(headers)
        request = urllib.request.Request(
            url, data=json.dumps({"question": question}).encode(), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                client.set_attribute("http.response.status_code", response.status)
                answer: str = json.loads(response.read())["answer"]
                return answer
        except urllib.error.HTTPError as exc:  # the span's status left unset, as many do
            client.set_attribute("http.response.status_code", exc.code)
            return f"HTTP {exc.code}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=("grpc", "http"), required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--service", default="agent-service")
    parser.add_argument("--agent", default="planner")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--research")
    parser.add_argument("--hold", type=Path)
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    provider = TracerProvider(resource=Resource.create({"service.name": args.service}))
    provider.add_span_processor(
        BatchSpanProcessor(exporter(args.protocol, args.endpoint), schedule_delay_millis=200)
    )
    tracer = provider.get_tracer("tests.otlp_agent")

    def hold(trace_id: int) -> None:
        assert provider.force_flush(), "the steps so far were not exported"
        print(json.dumps({"held": f"{trace_id:032x}"}), flush=True)
        while not args.hold.exists():
            time.sleep(0.05)

    held = hold if args.hold else None
    traces = []
    for i in range(args.sessions):
        traces.append(
            run_session(tracer, args.agent, f"{args.service} q{i}", args.steps, args.research, held)
        )
        time.sleep(args.pause)
    flushed = provider.force_flush()
    provider.shutdown()
    print(json.dumps({"traces": [f"{t:032x}" for t in traces], "flushed": flushed}), flush=True)
    sys.exit(0 if flushed else 1)


if __name__ == "__main__":
    main()
