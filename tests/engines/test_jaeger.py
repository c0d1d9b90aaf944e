"""Jaeger for real, behind a real Collector: the walk-through of ``docs/jaeger.md``.

Two agents export OTLP to the Collector running ``deploy/otel-collector-loadbalancing.yaml``,
which fans every trace out to Jaeger (``deploy/jaeger.yaml``) and to ``otel-prov receive``:
one of ours (``examples/plain_agent.py`` under ``opentelemetry-instrument``) and a LangChain
agent traced by OpenInference (``tests/conformance/langchain_agent.py``, on the scripted
OpenAI server).  Jaeger's query API then holds every span the store holds of each run,
with the same trace id, span ids, parents and service names, and the trace link that
``show``, ``sessions --format json`` and ``serve`` give for a run leads to that trace in
Jaeger, followed in Chromium from the ``serve`` session page (screenshots under
``build/test-artifacts/``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from tests.browser import chromium
from tests.cli import run_cli
from tests.conformance.openai_server import ScriptedOpenAI
from tests.engine_servers import DEPLOY, Collector, Jaeger, resolver, start_collector, start_jaeger
from tests.instrumented import SPANS_PER_RUN, run_plain_agent
from tests.receiver import ROOT, Receivers
from tests.servers import free_port
from tests.serving import serving
from tests.waiting import until

pytestmark = pytest.mark.integration

ARTIFACTS = ROOT / "build" / "test-artifacts"
PAGE_TIMEOUT = 60.0
SPANS = """
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?span ?parent ?service WHERE {
  ?activity oprov:traceId "%s" ; oprov:spanId ?span .
  FILTER(STRENDS(STR(?activity), CONCAT(":", ?span)))
  OPTIONAL { ?activity oprov:parentSpanId ?parent }
  OPTIONAL { ?activity oprov:serviceName ?service }
}"""
"""Each span's activity (its IRI ends in the span id; a step the mapper derives from a
span, ``...:step``, has the span's id too)."""


@dataclass
class Stack:
    jaeger: Jaeger
    collector: Collector
    store: Path
    traces: dict[str, str]
    """The service that ran each trace, by trace id."""

    @property
    def link(self) -> str:
        return f"{self.jaeger.ui}/trace/{{trace_id}}"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Jaeger, a receiver into an embedded store, the Collector in front of both; the two
    agents run through it, and the receiver has stored both runs (and stopped)."""
    tmp = tmp_path_factory.mktemp("jaeger")
    receivers = Receivers(tmp)
    jaeger = start_jaeger(tmp)
    collector: Collector | None = None
    try:
        store = tmp / "store"
        receiver = receivers.start("--store", str(store), "--trace-idle", "1")
        http = f"127.0.0.1:{free_port()}"
        collector = start_collector(
            tmp,
            DEPLOY / "otel-collector-loadbalancing.yaml",
            {
                "OTELCOL_OTLP_GRPC_ENDPOINT": f"127.0.0.1:{free_port()}",
                "OTELCOL_OTLP_HTTP_ENDPOINT": http,
                "JAEGER_OTLP_ENDPOINT": jaeger.otlp_grpc,
                # No Tempo here (its licence keeps it out): a port nothing listens on,
                # which the Collector retries on its own queue, beside the others.
                "TEMPO_OTLP_ENDPOINT": f"127.0.0.1:{free_port()}",
                "PROV_RECEIVERS_RESOLVER": resolver(receiver.grpc),
            },
        )
        otlp = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{http}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }
        run_plain_agent("otlp", OTEL_PROV_PROVENANCE="false", **otlp)
        with ScriptedOpenAI() as model:
            openinference = subprocess.run(
                [
                    *(sys.executable, "-m", "tests.conformance.langchain_agent"),
                    *(str(tmp / "agent-store"), "openinference", "run"),
                ],
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
                cwd=ROOT,
                env={**os.environ, **otlp, "OPENAI_BASE_URL": model.base_url},
            )
        assert openinference.returncode == 0, openinference.stderr
        receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 2, timeout=120)
        assert receiver.stop() == 0
        listed = run_cli("sessions", "--store", str(store), "--format", "json")
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)
        traces = {row["trace_id"]: _service_of(store, row["trace_id"]) for row in rows}
        assert sorted(traces.values()) == ["conformance", "plain-agent"]
        yield Stack(jaeger, collector, store, traces)
    finally:
        if collector is not None:
            collector.stop()
        jaeger.stop()
        receivers.close()


def _store_spans(store: Path, trace_id: str) -> set[tuple[str, str, str]]:
    answer = run_cli("query", "--store", str(store), "--format", "json", SPANS % trace_id)
    assert answer.returncode == 0, answer.stderr
    return {
        (row["span"], row.get("parent") or "", row.get("service") or "")
        for row in json.loads(answer.stdout)
    }


def _service_of(store: Path, trace_id: str) -> str:
    (service,) = {service for _, _, service in _store_spans(store, trace_id)}
    return service


def _jaeger_spans(jaeger: Jaeger, trace_id: str) -> set[tuple[str, str, str]]:
    return {
        (span["spanId"], span.get("parentSpanId", ""), span["service"])
        for span in jaeger.trace(trace_id)
    }


def test_jaeger_holds_every_span_the_store_holds_of_each_run(stack: Stack) -> None:
    for trace_id, service in stack.traces.items():
        stored = _store_spans(stack.store, trace_id)
        count = len(stored)
        until(
            lambda trace_id=trace_id, count=count: len(stack.jaeger.trace(trace_id)) >= count,
            f"Jaeger holds the {count} spans of {service}'s trace {trace_id}",
        )
        in_jaeger = _jaeger_spans(stack.jaeger, trace_id)
        assert in_jaeger == stored, service
        assert {span["traceId"] for span in stack.jaeger.trace(trace_id)} == {trace_id}
    ours = next(t for t, service in stack.traces.items() if service == "plain-agent")
    assert len(_store_spans(stack.store, ours)) == SPANS_PER_RUN
    # Jaeger's older HTTP API (the one its UI reads) agrees with API v3.
    for trace_id in stack.traces:
        with urllib.request.urlopen(f"{stack.jaeger.ui}/api/traces/{trace_id}", timeout=10) as r:
            (trace,) = json.load(r)["data"]
        assert {span["spanID"] for span in trace["spans"]} == {
            span for span, _, _ in _store_spans(stack.store, trace_id)
        }


def test_show_and_sessions_give_the_link_to_the_trace_in_jaeger(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", stack.link)
    for trace_id in stack.traces:
        link = stack.link.format(trace_id=trace_id)
        shown = run_cli("show", trace_id, "--store", str(stack.store))
        assert shown.returncode == 0, shown.stderr
        assert link in shown.stdout
        listed = run_cli("sessions", "--store", str(stack.store), "--format", "json")
        (row,) = [row for row in json.loads(listed.stdout) if row["trace_id"] == trace_id]
        assert row["trace_links"] == {"jaeger": link}
        # Jaeger serves its page at the link (its UI route for one trace).
        with urllib.request.urlopen(link, timeout=10) as page:
            assert page.status == 200
            assert "JAEGER_CONFIG" in page.read().decode()


def _shot(driver: webdriver.Chrome, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"jaeger-{name}.png"))


def test_a_user_follows_the_link_from_the_session_page_to_the_trace_in_jaeger(
    stack: Stack,
) -> None:
    trace_id = next(t for t, service in stack.traces.items() if service == "plain-agent")
    env = {"OTEL_PROV_JAEGER_URL": stack.link}
    with serving("--store", str(stack.store), env=env) as served, chromium() as browser:
        wait = WebDriverWait(browser, PAGE_TIMEOUT)
        browser.get(f"{served.url}/")
        row = next(
            row
            for row in browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")
            if trace_id in row.text
        )
        row.find_element(By.TAG_NAME, "a").click()
        wait.until(lambda d: d.current_url.startswith(f"{served.url}/session?id="))
        link = wait.until(
            lambda d: d.find_element(By.CSS_SELECTOR, ".trace-links a[href*='/trace/']")
        )
        assert link.text == "jaeger"
        _shot(browser, "session-page")
        link.click()
        wait.until(lambda d: d.current_url == stack.link.format(trace_id=trace_id))
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        _shot(browser, "trace-page")
        # The page is Jaeger's, configured by its query service for this UI route.
        assert "JAEGER_CONFIG" in browser.page_source
        # What that page loads to draw the trace: the spans, from the same Jaeger.
        browser.get(f"{stack.jaeger.ui}/api/traces/{trace_id}")
        text = browser.find_element(By.TAG_NAME, "body").text
        (trace,) = json.loads(text)["data"]
        assert trace["traceID"] == trace_id
        assert {span["spanID"] for span in trace["spans"]} == {
            span for span, _, _ in _store_spans(stack.store, trace_id)
        }
        _shot(browser, "trace-api")


def test_an_agent_runs_and_keeps_its_provenance_with_the_collector_down(tmp_path: Path) -> None:
    """Nothing listens where the agent exports OTLP (its Collector is down, or not yet
    started): the run completes, the process exits 0, and the provenance it maps in
    process is all there."""
    store = tmp_path / "store"
    run_plain_agent(
        "otlp,prov",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{free_port()}",
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_PROV_STORE=str(store),
    )
    listed = run_cli("sessions", "--store", str(store), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert len(_store_spans(store, row["trace_id"])) == SPANS_PER_RUN


def test_the_walkthrough_is_what_this_test_runs(stack: Stack) -> None:
    """``docs/jaeger.md`` gives these commands: the same files, every variable the test
    sets for Jaeger and the Collector, the same agents and reads."""
    page = (ROOT / "docs" / "jaeger.md").read_text(encoding="utf-8")
    for needed in (
        "--config deploy/jaeger.yaml",
        "--config deploy/otel-collector-loadbalancing.yaml",
        "otel-prov receive --grpc",
        "opentelemetry-instrument python examples/plain_agent.py",
        "python -m tests.conformance.langchain_agent",
        "openinference run",
        "OTEL_PROV_JAEGER_URL='http://127.0.0.1:16686/trace/{trace_id}'",
        "otel-prov sessions --store .otel-prov/store --format json",
        'otel-prov show "$TRACE"',
        "OTEL_PROV_PROVENANCE=false",
        "/api/v3/traces/",
        "otel-prov serve --store",
        *stack.jaeger.env,
        *stack.collector.env,
    ):
        assert needed in page, needed
