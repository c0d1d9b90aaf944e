"""The refund example (``examples/refund_agent.py``) run as a user runs it, into a store
of the test's, and the reviewer's revision of its decision with ``otel-prov review``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "refund_agent.py"
CONVERSATION = "refund-1042"
REVIEW = (
    "--node",
    "d1",
    "--by",
    "alice@example.com",
    "--name",
    "Alice Martin",
    "--text",
    "Refund half: the parcel may have been stolen after delivery",
    "--reason",
    "the customer's message of 3 May was not considered",
)
"""The review docs/decisions.md shows."""


def run_refund_agent(store: Path, *, cwd: Path) -> str:
    """Run the example into ``store``; what it printed."""
    env = {**os.environ, "OTEL_PROV_STORE": str(store)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    ran = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def review_refund(store: Path) -> None:
    """Alice's revision of the run's decision, as docs/decisions.md gives it."""
    reviewed = run_cli("review", CONVERSATION, *REVIEW, "--store", str(store))
    assert reviewed.returncode == 0, reviewed.stderr
