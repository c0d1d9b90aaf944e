"""The why-graph of a run with decisions, in a real browser (headless Chromium): evidence
for and against is drawn apart, and a legend says how.

The run is the refund example's (``examples/refund_agent.py``), reviewed afterwards.  What
is asserted is what the eye uses: supporting edges green and solid, contradicting ones red
and dashed, the one that came after the decision faint, each labelled with its relation
and weight, and a legend above the graph naming all three.  At first, each step folded
into one box, the decisions and hypotheses are drawn in theirs, and the evidence they rest
on is drawn to the step that holds it, for and against.  The screenshots go to
``build/test-artifacts/why-decisions*.png`` for a person to look at.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from otel_prov.view._why_graph import plain_relation
from tests.cli import run_cli
from tests.refund_run import CONVERSATION, review_refund, run_refund_agent
from tests.serving import Served, serving

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"

_EDGES = """
const svg = document.querySelector("svg.why-graph");
if (!svg) { return null; }
const style = (e) => { const s = getComputedStyle(e);
  return { stroke: s.stroke, dashes: s.strokeDasharray, opacity: s.strokeOpacity }; };
return {
  edges: [...svg.querySelectorAll("path.edge")].map((p) => ({
    classes: p.getAttribute("class").split(" "), from: p.dataset.from, to: p.dataset.to,
    ...style(p) })),
  labels: [...svg.querySelectorAll(".edge-label")].map((t) => t.textContent),
  legend: [...document.querySelectorAll(".why-legend-item")].map((i) => i.textContent.trim()),
  nodes: Object.fromEntries(
    [...svg.querySelectorAll("g.node")].map((g) => [g.dataset.id, g.dataset.iri])),
};
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("decisions")
    run_refund_agent(where / "store", cwd=where)
    review_refund(where / "store")
    return where / "store"


@pytest.fixture(scope="module")
def served(store: Path) -> Iterator[Served]:
    with serving("--store", str(store)) as server:
        yield server


def _why(store: Path) -> dict[str, Any]:
    answer = run_cli("why", CONVERSATION, "--store", str(store), "--format", "json")
    assert answer.returncode == 0, answer.stderr
    graph: dict[str, Any] = json.loads(answer.stdout)
    return graph


def test_supports_and_contradicts_are_drawn_apart_with_a_legend(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store)
    evidence = [e for e in graph["edges"] if e["relation"] in ("supportedBy", "contradictedBy")]
    assert {e["relation"] for e in evidence} == {"supportedBy", "contradictedBy"}
    browser.set_window_size(1400, 1000)
    browser.get(served.url + f"/session?id={CONVERSATION}")
    # At first each step is one box, its decisions and hypotheses drawn in it: the
    # evidence they rest on, in a shut step, is drawn to the step, as for and against.
    first: dict[str, Any] = WebDriverWait(browser, 60).until(lambda d: d.execute_script(_EDGES))
    kinds = {
        tuple(c for c in e["classes"] if c in ("supports", "contradicts")) for e in first["edges"]
    }
    assert {("supports",), ("contradicts",)} <= kinds
    decisions = [n["id"] for n in graph["nodes"] if n["type"] in ("Decision", "Hypothesis")]
    assert set(decisions) <= set(first["nodes"].values())
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.find_element(By.CSS_SELECTOR, ".why-figure").screenshot(
        str(ARTIFACTS / "why-decisions-first.png")
    )
    browser.find_element(By.CSS_SELECTOR, "button.why-open-all").click()
    drawn: dict[str, Any] = browser.execute_script(_EDGES)
    iri = drawn["nodes"]
    by_ends = {(iri[e["from"]], iri[e["to"]]): e for e in drawn["edges"]}
    supports = [by_ends[e["from"], e["to"]] for e in evidence if e["relation"] == "supportedBy"]
    against = [by_ends[e["from"], e["to"]] for e in evidence if e["relation"] == "contradictedBy"]
    plain = [
        e
        for e in drawn["edges"]
        if "supports" not in e["classes"] and "contradicts" not in e["classes"]
    ]
    assert supports and against and plain
    assert all("supports" in e["classes"] and e["dashes"] == "none" for e in supports)
    assert all("contradicts" in e["classes"] and e["dashes"] != "none" for e in against)
    colours = (
        {e["stroke"] for e in supports},
        {e["stroke"] for e in against},
        {e["stroke"] for e in plain},
    )
    assert len(colours[0]) == 1 and len(colours[1]) == 1
    assert not (colours[0] & colours[1]) and not ((colours[0] | colours[1]) & colours[2])
    # The evidence that came after the decision is faint; what was there is not.
    late = [by_ends[e["from"], e["to"]] for e in evidence if e.get("considered") is False]
    there = [by_ends[e["from"], e["to"]] for e in evidence if e.get("considered") is True]
    assert late and there
    assert all(float(e["opacity"]) < 1 for e in late)
    assert all(float(e["opacity"]) == 1 for e in there)
    # Each evidence edge is labelled with its relation, in words, and its weight.
    for edge in evidence:
        assert f"{plain_relation(edge['relation'])} {edge['weight']:g}" in drawn["labels"]
    assert [item.split(":")[0] for item in drawn["legend"]] == [
        "supported by",
        "contradicted by",
        "faint",
    ]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(1400, 2400)
    figure = browser.find_element(By.CSS_SELECTOR, ".why-figure")
    browser.execute_script("arguments[0].scrollIntoView()", figure)
    browser.find_element(By.CSS_SELECTOR, "button.why-fit").click()
    figure.screenshot(str(ARTIFACTS / "why-decisions-whole.png"))
    decision = next(
        n["id"] for n in graph["nodes"] if n["type"] == "Decision" and n.get("confidence") == 0.7
    )
    browser.find_element(By.CSS_SELECTOR, "button.why-start").click()
    node = browser.find_element(By.CSS_SELECTOR, f'svg.why-graph g.node[data-iri="{decision}"]')
    # A click as the page takes it: the node may lie outside the first view of the graph.
    browser.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", node
    )
    details = browser.find_element(By.CSS_SELECTOR, ".why-details")
    assert "contradictedBy 0.7" in details.text and "supportedBy 0.6" in details.text
    figure.screenshot(str(ARTIFACTS / "why-decisions.png"))
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
