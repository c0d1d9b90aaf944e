"""An agent whose run never ends, a step every 0.3 s, run by the streaming tests as a
real process and then killed.

``python -m tests.streaming_agent store STORE [SIGNING_KEY]``: provenance in process,
streamed (``stream=True``).  ``python -m tests.streaming_agent otlp URL [STEPS]``: spans
only, each sent over OTLP/HTTP as it ends, to an ``otel-prov receive``; with ``STEPS``,
the run ends after them once a line comes on its input.  Prints ``step N``
after each step.
"""

from __future__ import annotations

import sys
import time

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_prov


def _provider(mode: str, where: str, key: str | None) -> TracerProvider:
    if mode == "store":
        handle = otel_prov.configure(store=where, set_global=False, stream=True, signing_key=key)
        return handle.tracer_provider
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"{where.rstrip('/')}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def main(mode: str, where: str, extra: str | None) -> None:
    """``extra``: the signing key (``store``), or the steps before the run ends (``otlp``:
    it waits for a line on its input first)."""
    provider = _provider(mode, where, extra if mode == "store" else None)
    steps = int(extra) if mode == "otlp" and extra else 1000
    with otel_prov.agent_session("researcher", question="what?", tracer_provider=provider):
        for number in range(1, steps + 1):
            step = otel_prov.iteration(number, thought=f"step {number}", tracer_provider=provider)
            call = otel_prov.tool_call("lookup", arguments={"n": number}, tracer_provider=provider)
            with step, call:
                otel_prov.set_observation(f"found {number}")
            print(f"step {number} {time.time_ns()}", flush=True)
            time.sleep(0.3)
        if steps < 1000:
            sys.stdin.readline()
            otel_prov.set_answer("done")
    provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
