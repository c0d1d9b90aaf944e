"""A service another agent calls over HTTP, running an agent of its own: the OpenTelemetry
SDK and its OTLP/HTTP (protobuf) exporter only, nothing of otel-prov.

Run as ``python -m tests.otlp_service --endpoint URL --service NAME``; it prints the port
it listens on (127.0.0.1), answers ``POST /run`` (``{"question"}``) with ``{"answer"}``
(any other path with a 404)
under a server span that continues the caller's ``traceparent``, and exports its spans
to the receiver at ``--endpoint`` (several, comma-separated: routed by trace id, as
``tests.otlp_agent`` does).  SIGTERM flushes and exits.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType

from opentelemetry import propagate
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Tracer

from tests.otlp_agent import exporter, run_session


def handler(tracer: Tracer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            context = propagate.extract({k.lower(): v for k, v in self.headers.items()})
            if self.path != "/run":
                with tracer.start_as_current_span(
                    f"POST {self.path}",
                    context=context,
                    kind=SpanKind.SERVER,
                    attributes={"http.request.method": "POST", "url.path": self.path},
                ) as server:
                    server.set_attribute("http.response.status_code", 404)
                self.send_error(404)
                return
            with tracer.start_as_current_span(
                "POST /run",
                context=context,
                kind=SpanKind.SERVER,
                attributes={"http.request.method": "POST", "url.path": "/run"},
            ) as server:
                run_session(tracer, "researcher", question["question"], 2, None)
                server.set_attribute("http.response.status_code", 200)
            body = json.dumps({"answer": f"research on {question['question']}"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--service", default="research-service")
    args = parser.parse_args()
    provider = TracerProvider(resource=Resource.create({"service.name": args.service}))
    provider.add_span_processor(
        BatchSpanProcessor(exporter("http", args.endpoint), schedule_delay_millis=200)
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(provider.get_tracer(__name__)))

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    provider.shutdown()


if __name__ == "__main__":
    main()
