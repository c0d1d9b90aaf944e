"""Run examples/plain_agent.py under opentelemetry-instrument, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPANS_PER_RUN = 12
"""The demo session, its 4 iterations, 4 model calls and 3 tool calls."""


def run_plain_agent(traces_exporter: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """The unmodified script with ``OTEL_TRACES_EXPORTER`` and other variables; must succeed."""
    env = {
        **os.environ,
        "OTEL_TRACES_EXPORTER": traces_exporter,
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "plain-agent",
        **variables,
    }
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    run = subprocess.run(
        [str(instrument), sys.executable, str(ROOT / "examples" / "plain_agent.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run
