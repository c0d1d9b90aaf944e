"""An agent script with no OpenTelemetry set-up at all: run it under opentelemetry-instrument.

    # provenance only, on this machine (no Collector needed):
    OTEL_TRACES_EXPORTER=prov OTEL_SERVICE_NAME=plain-agent \\
        opentelemetry-instrument python examples/plain_agent.py

    # and the same spans to an OTLP receiver (a Collector, Jaeger, Phoenix...) on :4318:
    OTEL_TRACES_EXPORTER=otlp,prov OTEL_SERVICE_NAME=plain-agent \\
        opentelemetry-instrument python examples/plain_agent.py

The spans go to the OTLP backend and, as provenance, to the embedded store (or to
OTEL_PROV_SPARQL_UPDATE_ENDPOINT); `otel-prov show plain-agent-run` shows the session.
"""

from otel_prov.demo import run_demo_agent

if __name__ == "__main__":
    print(run_demo_agent(conversation_id="plain-agent-run"))
