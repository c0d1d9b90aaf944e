"""What every agent module of the suite does around its run: provenance in process, the
instrumentation on, the run, the spans flushed, the answer printed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import otel_prov


def play(
    store: str, run: Callable[[], str], instrument: Callable[[Any], None] | None = None
) -> int:
    """Run ``run`` (which returns the agent's answer) under ``otel_prov.configure(store=...)``
    and nothing else of ours, ``instrument`` first given the provider it installed (a
    framework that traces itself needs none: it writes to the global one); 0 once the
    spans are flushed and the answer printed."""
    handle = otel_prov.configure(store=store, service_name="conformance")
    if instrument is not None:
        instrument(handle.tracer_provider)
    answer = run()
    handle.shutdown()
    print(answer)
    return 0
