"""The why-graph as a person reads it, in a real browser (headless Chromium).

What is asserted is what the eye uses: an arrowhead on every edge, every edge's relation
written beside it, time running down the page (the question above the steps, the steps
in their order, the answer below them all), a failed call drawn red inside the box of its
step, a distinct excerpt per node, the full text a click away, zoom buttons that zoom, and
the page ``show --format html`` writes drawing all of it from one file with the network
off.  Three runs: the demo, a 50-step run, and one whose question, thought and answer
begin alike.  Screenshots go to ``build/test-artifacts/why-*.png`` for a person to look at.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from benchmarks.workload import session_spans
from tests.builders import make_span, store_runs
from tests.cli import run_cli, write_demo_store
from tests.serving import Served, serving

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
RED = "rgb(198, 40, 40)"
ALIKE = "alike-run"
LONG = "c0"
"""The conversation id of ``session_spans(0, 50)``."""

_DRAWN = """
const svg = document.querySelector("svg.why-graph");
if (!svg) { return null; }
const box = (e) => { const r = e.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; };
const shown = (g) => [...g.querySelectorAll("text")].map((t) => t.textContent);
return {
  nodes: [...svg.querySelectorAll("g.node")].map((g) => ({
    iri: g.dataset.iri, classes: g.getAttribute("class").split(" "),
    box: box(g.querySelector("rect")), role: shown(g)[0], excerpt: shown(g).slice(1).join(" "),
    stroke: getComputedStyle(g.querySelector("rect")).stroke })),
  edges: [...svg.querySelectorAll(".edge")].map((p) => getComputedStyle(p).markerEnd),
  labels: [...svg.querySelectorAll(".edge-label")].map((t) => ({
    text: t.textContent, box: box(t) })),
  markers: [...svg.querySelectorAll("marker")].map((m) => m.id),
  steps: [...svg.querySelectorAll("g.step")].map((g) => ({
    iri: g.dataset.iri, box: box(g.querySelector("rect")) })),
  viewBox: svg.getAttribute("viewBox"),
  figure: box(svg),
};
"""


def _alike_run() -> list:  # type: ignore[type-arg]
    """Question, thought and answer that begin with the same 30 characters."""
    common = "Twice the population of Paris"
    return [
        make_span(
            1, None, name="invoke_agent alike", start_ms=0, end_ms=50, trace_id=0xA11CE,
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name="alike",
            gen_ai__conversation__id=ALIKE, otel_prov__question=f"{common}: how many people?",
            otel_prov__answer=f"{common} is 4.2 million people.",
        ),
        make_span(
            2, 1, name="iteration 1", start_ms=1, end_ms=40, trace_id=0xA11CE,
            otel_prov__iteration__number=1, otel_prov__thought=f"{common} is 2 × 2.1 million.",
            otel_prov__action="final_answer",
        ),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = write_demo_store(tmp_path_factory.mktemp("why-graph"))
    store_runs(path, session_spans(0, iterations=50), _alike_run())
    return path


@pytest.fixture(scope="module")
def served(store: Path) -> Iterator[Served]:
    with serving("--store", str(store)) as server:
        yield server


def _why(store: Path, ident: str) -> dict[str, Any]:
    answer = run_cli("why", ident, "--store", str(store), "--format", "json")
    assert answer.returncode == 0, answer.stderr
    graph: dict[str, Any] = json.loads(answer.stdout)
    return graph


def _drawn(browser: webdriver.Chrome) -> dict[str, Any]:
    found: dict[str, Any] = WebDriverWait(browser, 60).until(lambda d: d.execute_script(_DRAWN))
    return found


def _open(browser: webdriver.Chrome, url: str) -> dict[str, Any]:
    browser.set_window_size(1400, 1000)
    browser.get(url)
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
    return _drawn(browser)


def _shot(browser: webdriver.Chrome, name: str) -> Path:
    """The why-graph's figure alone (its buttons, the graph, a node's details), as a
    person sees it on the page."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"why-{name}.png"
    browser.set_window_size(1400, 2400)  # room for the figure, however far down it is
    figure = browser.find_element(By.CSS_SELECTOR, ".why-figure")
    browser.execute_script("arguments[0].scrollIntoView()", figure)
    figure.screenshot(str(path))
    browser.set_window_size(1400, 1000)
    print(f"screenshot: {path}")
    return path


def _errors(browser: webdriver.Chrome) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _number(label: str) -> int:
    found = re.search(r"\d+", label)
    assert found, label
    return int(found.group())


def _arrows_and_labels(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """An arrowhead on every edge, and every relation written out, one label per edge."""
    assert drawn["markers"], "no arrowhead marker"
    assert len(drawn["edges"]) == len(graph["edges"])
    for marker in drawn["edges"]:
        assert any(f"#{name}" in marker for name in drawn["markers"]), marker
    assert sorted(label["text"] for label in drawn["labels"]) == sorted(
        edge["relation"] for edge in graph["edges"]
    )
    assert all(label["box"][2] > label["box"][0] for label in drawn["labels"])


def _steps(graph: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(
        (n for n in graph["nodes"] if n["type"] == "Iteration"), key=lambda n: _number(n["label"])
    )


def _time_runs_down(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """The question above every step, the steps in order, the answer below everything."""
    top = {node["iri"]: node["box"][1] for node in drawn["nodes"]}
    bottom = {node["iri"]: node["box"][3] for node in drawn["nodes"]}
    steps = _steps(graph)
    (question,) = [node["id"] for node in graph["nodes"] if node["type"] == "Question"]
    assert all(bottom[question] < top[step["id"]] for step in steps)
    tops = [top[step["id"]] for step in steps]
    assert tops == sorted(tops) and len(set(tops)) == len(tops), tops
    root = graph["root"]
    assert all(top[root] > bottom[iri] for iri in top if iri != root)


def _failed_in_step(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """Every step a box, one below the other; a failed call red, inside its step's box."""
    by_iri = {node["iri"]: node for node in drawn["nodes"]}
    boxes = {step["iri"]: step["box"] for step in drawn["steps"]}
    steps = _steps(graph)
    assert set(boxes) == {step["id"] for step in steps}
    ordered = [boxes[step["id"]] for step in steps]
    assert all(a[3] <= b[1] for a, b in itertools.pairwise(ordered))
    holders = {e["from"]: e["to"] for e in graph["edges"] if e["relation"] == "partOf"}
    failed = [node for node in graph["nodes"] if node.get("status") == "error"]
    for node in (node for node in failed if node["type"] != "AgentSession"):
        drawn_node = by_iri[node["id"]]
        assert "failed" in drawn_node["classes"] and drawn_node["stroke"] == RED
        left, up, right, down = drawn_node["box"]
        outer = boxes[holders[node["id"]]]
        assert outer[0] <= left and outer[1] <= up and right <= outer[2] and down <= outer[3]


def _told_apart(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """Each node shows its role first, then an excerpt of its own: nodes whose texts
    differ show different excerpts, whatever their roles."""
    by_iri = {node["iri"]: node for node in drawn["nodes"]}
    texts: dict[str, str] = {}
    for node in graph["nodes"]:
        assert by_iri[node["id"]]["role"] == node["type"]
        seen = texts.setdefault(by_iri[node["id"]]["excerpt"], node["label"])
        assert seen == node["label"], (by_iri[node["id"]]["excerpt"], seen, node["label"])


CHECKS = (_arrows_and_labels, _time_runs_down, _failed_in_step, _told_apart)


def _check_reading(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """What a person reads off the drawing of ``graph`` (``why --format json``)."""
    assert {node["iri"] for node in drawn["nodes"]} == {node["id"] for node in graph["nodes"]}
    for check in CHECKS:
        check(graph, drawn)


def test_the_demo_run_reads_top_down_with_arrows_labels_and_its_failed_call_in_its_step(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "demo-conversation")
    assert any(node.get("status") == "error" for node in graph["nodes"])
    drawn = _open(browser, served.url + "/session?id=demo-conversation")
    _check_reading(graph, drawn)
    _shot(browser, "demo")
    browser.find_element(By.CSS_SELECTOR, "button.why-fit").click()
    _shot(browser, "demo-whole")
    assert _errors(browser) == []


def test_a_click_shows_a_nodes_full_text_and_the_buttons_zoom(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "demo-conversation")
    failed = next(node for node in graph["nodes"] if node.get("status") == "error")
    drawn = _open(browser, served.url + "/session?id=demo-conversation")
    node = f'svg.why-graph g.node[data-iri="{failed["id"]}"]'
    browser.find_element(By.CSS_SELECTOR, node).click()
    details = browser.find_element(By.CSS_SELECTOR, ".why-details")
    assert details.is_displayed()
    for text in (failed["label"], failed["error"], failed["id"], failed["type"]):
        assert text in details.text
    _shot(browser, "demo-details")
    before = [float(v) for v in drawn["viewBox"].split()]
    browser.find_element(By.CSS_SELECTOR, "button.why-zoom-in").click()
    after = [float(v) for v in _drawn(browser)["viewBox"].split()]
    assert after[2] < before[2] and after[3] < before[3]
    browser.find_element(By.CSS_SELECTOR, "button.why-fit").click()
    assert _errors(browser) == []


def test_a_50_step_run_reads_the_same_and_is_shown_from_its_question(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, LONG)
    assert sum(1 for node in graph["nodes"] if node["type"] == "Iteration") == 50
    drawn = _open(browser, served.url + f"/session?id={LONG}")
    _check_reading(graph, drawn)
    # It opens at the start of the run, readable, not shrunk to fit 50 steps in one view.
    (question,) = [n["id"] for n in graph["nodes"] if n["type"] == "Question"]
    figure = drawn["figure"]
    shown = next(node for node in drawn["nodes"] if node["iri"] == question)["box"]
    assert figure[0] <= shown[0] and shown[2] <= figure[2]
    assert figure[1] <= shown[1] and shown[3] <= figure[3]
    assert shown[3] - shown[1] >= 40, "the question is drawn smaller than reading size"
    took = browser.find_element(By.CSS_SELECTOR, "svg.why-graph").get_attribute("data-layout-ms")
    print(f"dagre laid out {len(graph['nodes'])} nodes, {len(graph['edges'])} edges in {took} ms")
    _shot(browser, "50-steps")
    # The wheel scrolls the graph (not the page) down to the first failed call.
    svg = browser.find_element(By.CSS_SELECTOR, "svg.why-graph")
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, 1000).perform()
    assert _drawn(browser)["viewBox"] != drawn["viewBox"]
    _shot(browser, "50-steps-scrolled")
    browser.find_element(By.CSS_SELECTOR, "button.why-fit").click()
    _shot(browser, "50-steps-whole")
    assert _errors(browser) == []


def test_nodes_that_begin_alike_are_told_apart(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, ALIKE)
    drawn = _open(browser, served.url + f"/session?id={ALIKE}")
    _check_reading(graph, drawn)
    _shot(browser, "alike")


def test_the_page_show_writes_draws_the_graph_from_one_file_offline(
    browser: webdriver.Chrome, store: Path, tmp_path: Path
) -> None:
    page = run_cli("show", "demo-conversation", "--store", str(store), "--format", "html")
    assert page.returncode == 0, page.stderr
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page.stdout)
    path = tmp_path / "demo.html"
    path.write_text(page.stdout, encoding="utf-8")
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
    )
    try:
        drawn = _open(browser, path.as_uri())
        _check_reading(_why(store, "demo-conversation"), drawn)
        _shot(browser, "demo-file")
        assert _errors(browser) == []
    finally:
        browser.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
