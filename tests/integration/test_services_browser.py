"""The services around the agent, the timeline's axis and the backend's link, as a person
sees them in Chromium on ``otel-prov serve`` (screenshots in ``build/test-artifacts/``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.builders import TRACE, store_runs
from tests.integration.test_serve_browser import ARTIFACTS, _errors, _shot
from tests.serving import Served, serving
from tests.test_downstream import AGENT, FRONTEND, PHOENIX, RESEARCH, crossing_run, framed_run

pytestmark = pytest.mark.integration

FRAMED = 0xF4A3ED
"""The trace of :func:`framed_run`: the crossing run started by a web front end's request."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    framed = [dataclasses.replace(span, trace_id=FRAMED) for span in framed_run()]
    store = store_runs(tmp_path_factory.mktemp("services") / "store", crossing_run(), framed)
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
        "caused GET (agent-service) FAILED 404: HTTP status 404, 12 ms"
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


def _bars(browser: webdriver.Chrome) -> list[dict[str, object]]:
    """Each timeline row as drawn: its classes, label, the label's left edge, its top and
    the fill of its bar."""
    found: list[dict[str, object]] = browser.execute_script("""
        return [...document.querySelectorAll("svg.timeline g.bar")].map((g) => ({
          classes: g.getAttribute("class").split(" "),
          label: g.querySelector("text").textContent,
          left: g.querySelector("text").getBoundingClientRect().left,
          top: g.querySelector("rect").getBoundingClientRect().top,
          fill: getComputedStyle(g.querySelector("rect")).fill,
          tip: g.querySelector("title").textContent }));
    """)
    return found


def test_the_timeline_draws_the_spans_around_the_run_of_every_service(
    served: Served,
    browser: webdriver.Chrome,
) -> None:
    """The front end's request, the agent service's server span holding the run, a cache
    read directly under a step, the research service's spans: each where it sits in the
    trace, coloured by its service, with a legend; and the why-graph's Arguments nodes,
    stored without a value, read as not recorded instead of as their IRI."""
    browser.get(served.url + f"/session?id={FRAMED:032x}")
    bars = _bars(browser)
    labels = [bar["label"] for bar in bars]
    assert labels[:5] == [
        f"GET /ask · {FRONTEND}", f"POST /agent · {FRONTEND}", f"POST /agent · {AGENT}",
        "session outer", "iteration 1",
    ]  # fmt: skip
    assert labels[-1] == f"render answer · {FRONTEND}"
    server, session = bars[2], bars[3]
    assert "failed" in server["classes"] and "FAILED 503: HTTP status 503" in str(server["tip"])
    assert float(server["left"]) < float(session["left"])  # the run is drawn inside it
    assert float(server["top"]) < float(session["top"])
    cache = bars[labels.index(f"GET cache · {AGENT}")]
    assert float(cache["left"]) > float(bars[4]["left"])  # under iteration 1
    fills: dict[str, set[object]] = {}
    for bar in bars:
        if "span" in bar["classes"] and "failed" not in bar["classes"]:
            fills.setdefault(str(bar["label"]).rpartition(" · ")[2], set()).add(bar["fill"])
    assert sorted(fills) == sorted([AGENT, FRONTEND, RESEARCH])
    assert all(len(each) == 1 for each in fills.values())
    assert len(set.union(*fills.values())) == 3  # a colour per service
    legend = browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.legend > g")
    assert [g.text for g in legend] == [FRONTEND, AGENT, RESEARCH]
    for entry in legend:
        swatch = entry.find_element(By.TAG_NAME, "rect").value_of_css_property("fill")
        assert {swatch} == fills[entry.text]
    timeline = browser.find_element(By.CSS_SELECTOR, "svg.timeline")
    browser.execute_script("arguments[0].scrollIntoView()", timeline)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    timeline.screenshot(str(ARTIFACTS / "serve-timeline-trace.png"))

    browser.find_element(By.CSS_SELECTOR, "button.why-open-all").click()
    nodes: list[list[str]] = browser.execute_script("""
        return [...document.querySelectorAll("svg.why-graph g.node")].map(
          (g) => [...g.querySelectorAll("text")].map((t) => t.textContent));
    """)
    excerpts = sorted(" ".join(texts[1:]) for texts in nodes if texts[0] == "Arguments")
    assert excerpts == ["for lookup (not recorded)", "for research (not recorded)"]
    assert not [texts for texts in nodes if any("urn:" in text for text in texts)]
    _shot(browser, "cross-service-trace")
    assert _errors(browser) == []
