"""The services around the agent, the timeline's axis and the backend's link, as a person
sees them in Chromium on ``otel-prov serve`` (screenshots in ``build/test-artifacts/``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.builders import TRACE, store_runs
from tests.integration.test_serve_browser import _errors, _shot
from tests.serving import Served, serving
from tests.test_downstream import PHOENIX, crossing_run

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = store_runs(tmp_path_factory.mktemp("services") / "store", crossing_run())
    env = {"OTEL_PROV_TRACE_URL": PHOENIX, "OTEL_PROV_TRACE_LABEL": "Phoenix"}
    with serving("--store", str(store), env=env) as server:
        yield server


def test_the_session_page_shows_the_services_the_calls_reached(
    served: Served,
    browser: webdriver.Chrome,
) -> None:
    browser.get(served.url + f"/session?id={TRACE:032x}")
    calls = browser.find_elements(By.CSS_SELECTOR, "div.tool-call")
    lookup, research = calls
    failed = lookup.find_element(By.CSS_SELECTOR, ".caused.failed")
    assert failed.is_displayed() and failed.text == (
        "caused GET (agent-service) FAILED 404: HTTP status 404, 12.0 ms"
    )
    assert failed.find_element(By.TAG_NAME, "code").value_of_css_property("color") == (
        "rgba(198, 40, 40, 1)"
    )
    caused = research.find_elements(By.CSS_SELECTOR, ".downstream .caused")
    assert [c.text.split(" (")[0] for c in caused] == [
        "caused POST", "caused POST /run", "caused SELECT papers", "caused session researcher",
    ]  # fmt: skip
    lefts = [c.location["x"] for c in caused]
    assert lefts[0] < lefts[1] < lefts[2] == lefts[3]  # indented by depth

    # The timeline: an axis over the bars, the spans of both services, Phoenix's link.
    ticks = browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.axis text")
    assert [t.text for t in ticks][:2] == ["0 ms", "20 ms"] and len(ticks) >= 5
    axis_bottom = max(t.rect["y"] + t.rect["height"] for t in ticks)
    bars = browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.bar")
    assert min(b.rect["y"] for b in bars) >= axis_bottom
    spans = browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.bar.span")
    labels = [s.find_element(By.TAG_NAME, "text").text for s in spans]
    assert labels == [
        "GET · agent-service", "POST · agent-service", "POST /run · research-service",
        "SELECT papers · research-service",
    ]  # fmt: skip
    colours = {
        s.find_element(By.TAG_NAME, "rect").value_of_css_property("fill")
        for s in spans
        if "failed" not in (s.get_attribute("class") or "")
    }
    assert len(colours) == 2  # one per service
    link = browser.find_element(By.CSS_SELECTOR, "p.trace-links a")
    assert link.text == "Phoenix"
    assert link.get_attribute("href") == PHOENIX.replace("{trace_id}", f"{TRACE:032x}")
    assert "jaeger" not in browser.find_element(By.TAG_NAME, "body").text.lower()
    _shot(browser, "cross-service-session")
    assert _errors(browser) == []
