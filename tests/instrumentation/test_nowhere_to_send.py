"""An instrumentor with nowhere to send its spans says so, once, instead of nothing at all."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARNING = "no otel_prov.ProvSpanProcessor exists in this process"

SCRIPT = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
import otel_prov
from otel_prov.instrumentation.langchain import LangChainInstrumentor
from tests.instrumentation.test_langchain import ask, get_weather, weather_agent

{setup}
LangChainInstrumentor().instrument()
ask(weather_agent(get_weather))
ask(weather_agent(get_weather))
"""


def _run(
    setup: str, cwd: Path, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT.format(setup=setup))],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(cwd),
            "PYTHONPATH": str(ROOT),
            **(environment or {}),
        },
    )


def test_an_instrumentor_alone_warns_once_that_nothing_is_stored(tmp_path: Path) -> None:
    run = _run("trace.set_tracer_provider(TracerProvider())", tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count(WARNING) == 1  # two runs, one warning
    assert "otel_prov.configure()" in run.stderr


def test_with_a_provenance_processor_it_stays_quiet(tmp_path: Path) -> None:
    run = _run("handle = otel_prov.configure()", tmp_path)
    assert run.returncode == 0, run.stderr
    assert WARNING not in run.stderr


def test_an_otlp_only_agent_behind_a_receiver_stays_quiet(tmp_path: Path) -> None:
    run = _run("handle = otel_prov.configure(provenance=False)", tmp_path)
    assert run.returncode == 0, run.stderr
    assert WARNING not in run.stderr


def test_provenance_turned_off_by_its_variable_stays_quiet(tmp_path: Path) -> None:
    """The receiver set-up of docs/receiver.md: spans go out over OTLP (here, under an SDK
    provider of the agent's own, as ``opentelemetry-instrument`` builds it) and a
    Collector-side ``otel-prov receive`` stores the provenance."""
    run = _run(
        "trace.set_tracer_provider(TracerProvider())", tmp_path, {"OTEL_PROV_PROVENANCE": "false"}
    )
    assert run.returncode == 0, run.stderr
    assert WARNING not in run.stderr


def test_the_warning_says_how_to_silence_it_behind_a_receiver(tmp_path: Path) -> None:
    run = _run("trace.set_tracer_provider(TracerProvider())", tmp_path)
    assert "OTEL_PROV_PROVENANCE=false" in run.stderr
