"""Shared fixtures: an SDK provider with an in-memory exporter, and receiver processes;
and how ``make test`` shares the suite out among pytest-xdist's workers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov.capture import _content
from tests.receiver import Receivers

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler import LoadFileScheduling

# Hypothesis fails an example that runs past 200 ms, and calls the test flaky when the
# replay is quicker: on a loaded CI machine that is a timing, not a property.
settings.register_profile("otel-prov", deadline=None)
settings.load_profile("otel-prov")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """``--dist loadfile`` (``make test``): by file, the conformance suite's files together
    (``tests/scheduling.py``)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.scheduling import FileScheduling

    return FileScheduling(config, log)


ENGINES_LOG = "OTEL_PROV_ENGINES_LOG"
"""Set by ``make test``: the log of the engines' build in the background."""


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """What the engines' build said (``make test`` runs it beside the tests): how long each
    engine took to build, that it was cached, or why it failed."""
    log = os.environ.get(ENGINES_LOG)
    if log is None or hasattr(config, "workerinput") or not Path(log).exists():
        return
    lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    terminalreporter.section(f"engines ({log})")
    for line in lines:
        if line.startswith(("jaeger:", "otelcol:", "fuseki:")):
            terminalreporter.write_line(line)


@pytest.fixture
def memory_provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "test-service"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.fixture(autouse=True)
def _clean_content_switches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with the default capture settings and no configure() override."""
    monkeypatch.delenv("OTEL_PROV_CAPTURE_CONTENT", raising=False)
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    _content.set_override(None)
    yield
    _content.set_override(None)


@pytest.fixture
def receivers(tmp_path: Path) -> Iterator[Receivers]:
    """Starts ``otel-prov receive`` processes; any still running at the end is killed."""
    started = Receivers(tmp_path)
    yield started
    started.close()
