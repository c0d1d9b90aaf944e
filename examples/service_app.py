"""An agent inside a web service, calling another service: one trace across all three.

    pip install 'otel-prov[examples]'     # FastAPI, uvicorn and their instrumentations
    python examples/service_app.py        # agent service on 127.0.0.1:8000, weather on :8001
    curl -X POST localhost:8000/ask -H 'content-type: application/json' \\
         -d '{"question": "What is the temperature in Rome right now, in Fahrenheit?"}'
    otel-prov show <trace_id from the answer>

``--host``, ``--port`` and ``--weather-port`` change where they listen (``--port 0`` picks
free ports; the addresses are printed).  The agent service's request span (FastAPI/ASGI
instrumentation) contains the agent session; the weather tool calls the weather service
with ``requests`` (instrumented), so the W3C trace context travels with the call and the
weather service's spans join the same trace.  Both services record into the same
provenance processor, and both export OTLP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set.  In
the provenance graph the session is ``oprov:partOf`` the request's ``oprov:Span``, the
outgoing HTTP call is part of the tool call, the weather service's request is part of
that call, and each service is an ``oprov:Service`` agent.  ``deploy/`` runs this with a
Collector, Jaeger and Tempo.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from typing import Any

import requests
import uvicorn
from fastapi import FastAPI, HTTPException
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanContext, get_current_span
from pydantic import BaseModel

import otel_prov
from otel_prov.demo import DEMO_QUESTION, WeatherTools, run_demo_agent


class HttpWeatherTools(WeatherTools):
    """The demo's tools, with the weather fetched from the weather service over HTTP."""

    def __init__(self, weather_url: str) -> None:
        super().__init__()
        self._url = weather_url

    def get_weather(self, city: str) -> str:
        response = requests.get(f"{self._url}/weather", params={"city": city}, timeout=5)
        response.raise_for_status()
        report = response.json()
        return f"{report['city']}: {report['celsius']} °C, {report['sky']}"


def weather_app() -> FastAPI:
    """A weather service that fails its first request (so the agent shows a recovery)."""
    app = FastAPI(title="weather-service")
    calls = {"count": 0}

    @app.get("/weather")
    def weather(city: str) -> dict[str, Any]:
        calls["count"] += 1
        if calls["count"] == 1:
            raise HTTPException(status_code=503, detail="weather backend warming up")
        return {"city": city, "celsius": 18, "sky": "light rain"}

    return app


class Ask(BaseModel):
    question: str = DEMO_QUESTION
    conversation_id: str = "service-conversation"


def agent_app(weather_url: str, tracer_provider: TracerProvider | None = None) -> FastAPI:
    """``POST /ask``; a conversation's next turn links to its previous session (a span link)."""
    app = FastAPI(title="agent-service")
    last_turn: dict[str, SpanContext] = {}

    @app.post("/ask")
    def ask(body: Ask) -> dict[str, str]:
        previous = last_turn.get(body.conversation_id)
        answer = run_demo_agent(
            body.question,
            conversation_id=body.conversation_id,
            tracer_provider=tracer_provider,
            tools=HttpWeatherTools(weather_url),
            follows=[previous] if previous else [],
            on_session=lambda span: last_turn.__setitem__(
                body.conversation_id, span.get_span_context()
            ),
        )
        # The request's trace: what `otel-prov show` and Jaeger take.
        trace_id = f"{get_current_span().get_span_context().trace_id:032x}"
        _logger.info("answered in trace %s", trace_id)
        return {"answer": answer, "trace_id": trace_id}

    return app


def _serve(app: FastAPI, host: str, port: int, name: str) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        threading.Event().wait(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    print(f"{name} listening on http://{host}:{bound}", flush=True)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="agent service port (8000)")
    parser.add_argument("--weather-port", type=int, default=8001, help="weather port (8001)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    handle = otel_prov.configure(service_name=os.environ.get("OTEL_SERVICE_NAME", "agent-service"))
    # The weather service: its own resource, OTLP when configured, and the agent's
    # provenance processor, which joins its spans to the agent's trace.
    weather_handle = otel_prov.configure(
        service_name="weather-service", provenance=False, set_global=False
    )
    if handle.processor is not None:
        weather_handle.tracer_provider.add_span_processor(handle.processor)
    weather = weather_app()
    FastAPIInstrumentor.instrument_app(weather, tracer_provider=weather_handle.tracer_provider)
    weather_server = _serve(weather, args.host, args.weather_port, "weather-service")
    weather_port = weather_server.servers[0].sockets[0].getsockname()[1]
    app = agent_app(f"http://127.0.0.1:{weather_port}")
    FastAPIInstrumentor.instrument_app(app)
    RequestsInstrumentor().instrument()
    agent_server = _serve(app, args.host, args.port, "agent-service")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        stop.wait()
    finally:
        agent_server.should_exit = weather_server.should_exit = True
        weather_handle.shutdown()
        handle.shutdown()


_logger = logging.getLogger("service_app")

if __name__ == "__main__":
    main()
