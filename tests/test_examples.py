"""The examples run as written and their provenance reads back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import requests

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_runs_and_is_shown(tmp_path: Path) -> None:
    env = {**os.environ, "OTEL_PROV_STORE": str(tmp_path / "store")}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")],
        check=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert f"provenance stored in the embedded store at {tmp_path / 'store'}" in ran.stdout
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


def test_the_service_example_runs_as_written_and_both_services_are_in_the_provenance(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "OTEL_PROV_STORE": str(tmp_path / "store")}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    service = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "service_app.py"), "--port", "0", "--weather-port", "0"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert service.stdout is not None
        urls = {}
        for line in service.stdout:
            name, _, url = line.strip().partition(" listening on ")
            urls[name] = url
            if "agent-service" in urls:
                break
        assert urls["agent-service"].startswith("http://127.0.0.1:")  # local by default
        reply = requests.post(
            f"{urls['agent-service']}/ask",
            json={"question": "How warm is it in Rome right now?"},
            timeout=60,
        ).json()
        assert reply["answer"] == "It is 18 °C in Rome, with light rain."
    finally:
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=60) == 0
    shown = subprocess.run(
        [sys.executable, "-m", "otel_prov", "show", reply["trace_id"], "--format", "turtle"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert 'oprov:serviceName "weather-service"' in shown
    assert 'oprov:serviceName "agent-service"' in shown
