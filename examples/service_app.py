"""An agent inside a web service, calling another service: one trace across all three.

    python examples/service_app.py        # agent service on :8000, weather service on :8001
    curl -X POST localhost:8000/ask -H 'content-type: application/json' \\
         -d '{"question": "What is the temperature in Paris right now, in Fahrenheit?"}'

The agent service's request span (FastAPI/ASGI instrumentation) contains the agent
session; the weather tool calls the weather service with ``requests`` (instrumented), so
the W3C trace context travels with the call and the weather service's spans join the
same trace.  In the provenance graph the session is ``oprov:partOf`` the request's
``oprov:Span``, the outgoing HTTP call is part of the tool call, and each service is an
``oprov:Service`` agent.  ``deploy/`` runs this with a Collector, Jaeger and Tempo.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import requests
import uvicorn
from fastapi import FastAPI, HTTPException
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanContext
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
        return {"answer": answer}

    return app


def main() -> None:
    handle = otel_prov.configure(service_name=os.environ.get("OTEL_SERVICE_NAME", "agent-service"))
    weather_provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    weather = weather_app()
    FastAPIInstrumentor.instrument_app(weather, tracer_provider=weather_provider)
    threading.Thread(
        target=uvicorn.run, args=(weather,), kwargs={"host": "0.0.0.0", "port": 8001}, daemon=True
    ).start()
    app = agent_app("http://127.0.0.1:8001")
    FastAPIInstrumentor.instrument_app(app)
    RequestsInstrumentor().instrument()
    try:
        uvicorn.run(app, host="0.0.0.0", port=8000)
    finally:
        handle.shutdown()


if __name__ == "__main__":
    main()
