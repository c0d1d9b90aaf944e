"""The examples run as written and their provenance reads back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_runs_and_is_shown(tmp_path: Path) -> None:
    env = {**os.environ, "OTEL_PROV_STORE": str(tmp_path / "store")}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")],
        check=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    shown = subprocess.run(
        [sys.executable, "-m", "otel_prov", "show", "quickstart", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    (view,) = json.loads(shown.stdout)
    (step,) = view["iterations"]
    (call,) = step["tool_calls"]
    assert call["name"] == "get_weather" and call["observation"] == "Paris: 18 °C"
    assert json.loads(call["arguments"]) == {"city": "Paris"}
    assert view["answer"] == "18 °C in Paris." and step["thought"] == "I need the weather."
