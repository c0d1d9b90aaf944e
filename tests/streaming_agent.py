"""An agent whose run goes on a step every 0.3 s, run by the streaming tests as a real
process (and killed, or told to end).

``python -m tests.streaming_agent store STORE STEPS [SIGNING_KEY]``: provenance in
process, streamed (``stream=True``).  ``python -m tests.streaming_agent otlp URL STEPS``:
spans only, each sent over OTLP/HTTP as it ends, to an ``otel-prov receive``.  After
``STEPS`` steps (0: never) the run ends once a line comes on its input.  Prints
``step N <time ns>`` after each step; ``STREAMING_AGENT_PAUSE``: seconds between steps.
"""

from __future__ import annotations

import os
import sys
import time

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_prov


def _provider(mode: str, where: str, key: str | None) -> TracerProvider:
    if mode == "store":
        handle = otel_prov.configure(
            store=where, set_global=False, stream=True, signing_key=key, wal_dir=f"{where}-wal"
        )
        return handle.tracer_provider
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"{where.rstrip('/')}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def main(mode: str, where: str, steps: int, key: str | None) -> None:
    """``steps``: after them the run ends, once a line comes on the input; 0: never."""
    provider = _provider(mode, where, key)
    with otel_prov.agent_session("researcher", question="what?", tracer_provider=provider):
        for number in range(1, (steps or 1000) + 1):
            step = otel_prov.iteration(number, thought=f"step {number}", tracer_provider=provider)
            call = otel_prov.tool_call("lookup", arguments={"n": number}, tracer_provider=provider)
            with step, call:
                otel_prov.set_observation(f"found {number}")
            print(f"step {number} {time.time_ns()}", flush=True)
            time.sleep(float(os.environ.get("STREAMING_AGENT_PAUSE", "0.3")))
        sys.stdin.readline()
        otel_prov.set_answer("done")
    provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
