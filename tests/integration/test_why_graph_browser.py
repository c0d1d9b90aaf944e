"""The why-graph as a person reads it, in a real browser (headless Chromium), at the sizes
people run: the demo, a conversation of three turns (and of eight and twenty), a 50-step
and a 200-step run, a run that failed before it answered, and one whose question,
thought and answer begin alike.

What is asserted is what the eye uses.  At first: this run alone, its earlier turns a
box each (the older ones in one fold), each step one box saying what it thought and
what each call returned or how it failed (red), the middle of a long run folded; so the
number of nodes drawn at first does not grow with the earlier turns, nor with the run.
Time runs down one column: the earlier turns, the question, the session, each step in
its order, the answer.  Every edge has an arrowhead and a label in words; the PROV term
is in a node's details.  Text is drawn at a size a person reads (at first, and with
"whole graph").  A click opens a step, a turn or a fold, and folds it again; "open every
step" draws every node of ``why --format json``.  The page ``show --format html`` writes
draws all of it from one file with the network off.  Screenshots go to
``build/test-artifacts/why-*.png`` for a person to look at.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from otel_prov.view._why_folds import KEEP_TURNS
from otel_prov.view._why_graph import plain_relation
from tests.builders import make_span, store_runs
from tests.cli import run_cli, write_demo_store
from tests.serving import Served, serving

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "test-artifacts"
RED = "rgb(198, 40, 40)"
ALIKE = "alike-run"
READABLE_PX = 10.0
"""The smallest text a person reads on screen without leaning in, in CSS pixels."""

_DRAWN = """
const figures = [...document.querySelectorAll(".why-figure")];
const figure = figures[figures.length - 1];
const svg = figure && figure.querySelector("svg.why-graph");
if (!svg || !svg.querySelector("g.node")) { return null; }
const box = (e) => { const r = e.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; };
const texts = (g) => [...g.querySelectorAll("text")];
const line = svg.querySelector("g.node text.line");
const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return {
  nodes: [...svg.querySelectorAll("g.node")].map((g) => ({
    id: g.dataset.id, iri: g.dataset.iri, group: g.dataset.group,
    classes: g.getAttribute("class").split(" "), box: box(g.querySelector("rect")),
    role: texts(g)[0].textContent.replace(/\\s*\\u25b8$/, ""),
    lines: texts(g).slice(1).map((t) => t.textContent),
    red: texts(g).slice(1).map((t) => t.classList.contains("error")),
    stroke: getComputedStyle(g.querySelector("rect")).stroke })),
  edges: [...svg.querySelectorAll("path.edge")].map((p) => ({
    from: p.dataset.from, to: p.dataset.to, marker: getComputedStyle(p).markerEnd,
    classes: p.getAttribute("class").split(" ") })),
  labels: [...svg.querySelectorAll(".edge-label")].map((t) => ({
    text: t.textContent, box: box(t) })),
  markers: [...svg.querySelectorAll("marker")].map((m) => m.id),
  boxes: [...svg.querySelectorAll("g.step, g.turn")].map((g) => ({
    group: g.dataset.group, iri: g.dataset.iri, kind: g.getAttribute("class"),
    label: (g.querySelector("text.box-label") || {}).textContent || "",
    box: box(g.querySelector("rect")) })),
  viewBox: svg.getAttribute("viewBox"),
  figure: box(svg),
  textPx: parseFloat(getComputedStyle(line).fontSize) * scale,
  layoutMs: Number(svg.dataset.layoutMs),
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


def _agent(store: Path, kind: str, size: int) -> None:
    """A real agent process writes a run of ``tests.why_runs`` into ``store``."""
    ran = subprocess.run(
        [sys.executable, "-m", "tests.why_runs", str(store), kind, str(size)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = write_demo_store(tmp_path_factory.mktemp("why-graph"))
    for kind, size in (
        ("conversation", 3), ("conversation", 8), ("conversation", 20),
        ("steps", 50), ("steps", 200), ("failed", 2),
    ):  # fmt: skip
        _agent(path, kind, size)
    store_runs(path, _alike_run())
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
    """What the newest run's figure of the page draws now."""
    found: dict[str, Any] = WebDriverWait(browser, 60).until(lambda d: d.execute_script(_DRAWN))
    return found


def _open(browser: webdriver.Chrome, url: str) -> dict[str, Any]:
    browser.set_window_size(1400, 1000)
    browser.get(url)
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
    return _drawn(browser)


def _figure(browser: webdriver.Chrome) -> Any:
    return browser.find_elements(By.CSS_SELECTOR, ".why-figure")[-1]


def _press(browser: webdriver.Chrome, button: str) -> dict[str, Any]:
    _figure(browser).find_element(By.CSS_SELECTOR, f"button.{button}").click()
    return _drawn(browser)


def _click(browser: webdriver.Chrome, node_id: str) -> dict[str, Any]:
    """A click on a node as the page takes it, wherever it lies in the view."""
    node = _figure(browser).find_element(By.CSS_SELECTOR, f'g.node[data-id="{node_id}"]')
    browser.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", node
    )
    return _drawn(browser)


def _shot(browser: webdriver.Chrome, name: str) -> Path:
    """The newest run's why-graph figure alone (its buttons, the graph, a node's details),
    as a person sees it on the page."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"why-{name}.png"
    browser.set_window_size(1400, 2400)  # room for the figure, however far down it is
    figure = _figure(browser)
    browser.execute_script("arguments[0].scrollIntoView()", figure)
    figure.screenshot(str(path))
    browser.set_window_size(1400, 1000)
    print(f"screenshot: {path}")
    return path


def _counts(run: str, graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """What ``why`` holds and what the page draws of it, for the report (``-s``)."""
    print(
        f"{run}: why has {len(graph['nodes'])} nodes, {len(graph['edges'])} edges; drawn "
        f"{len(drawn['nodes'])} nodes, {len(drawn['edges'])} edges, laid out in "
        f"{drawn['layoutMs']} ms"
    )


def _errors(browser: webdriver.Chrome) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _by_role(drawn: dict[str, Any], pattern: str) -> list[dict[str, Any]]:
    return [node for node in drawn["nodes"] if re.fullmatch(pattern, node["role"])]


def _arrows_and_words(drawn: dict[str, Any]) -> None:
    """An arrowhead on every edge and a label beside each, in words: no PROV term."""
    assert drawn["markers"] and drawn["edges"]
    for edge in drawn["edges"]:
        assert any(f"#{name}" in edge["marker"] for name in drawn["markers"]), edge
    assert len(drawn["labels"]) == len(drawn["edges"])
    for label in drawn["labels"]:
        assert label["text"] and not re.search(r"[a-z][A-Z]", label["text"]), label
        assert label["box"][2] > label["box"][0]


def _column(nodes: list[dict[str, Any]]) -> None:
    """``nodes`` one below the other, in this order, in one column (centres within 2 px)."""
    for upper, lower in itertools.pairwise(nodes):
        assert upper["box"][3] < lower["box"][1], (upper["role"], lower["role"])
    centres = [(node["box"][0] + node["box"][2]) / 2 for node in nodes]
    assert max(centres) - min(centres) <= 2, list(zip(nodes, centres, strict=True))


def _one_run_reads_down(drawn: dict[str, Any], steps: int) -> list[dict[str, Any]]:
    """Question, session, the steps shown, the answer: one column, time running down;
    the shut steps and folds in their order.  The spine, top first."""
    (question,) = _by_role(drawn, "Question")
    (session,) = _by_role(drawn, "Session")
    shut = _by_role(drawn, rf"(Step \d+ of {steps}|Steps \d+–\d+)")
    (answer,) = _by_role(drawn, "Answer")
    numbers = [int(re.findall(r"\d+", node["role"])[0]) for node in shut]
    assert numbers == sorted(numbers)
    spine = [question, session, *sorted(shut, key=lambda n: n["box"][1]), answer]
    _column(spine)
    return spine


def _readable(drawn: dict[str, Any]) -> None:
    assert drawn["textPx"] >= READABLE_PX, f"text drawn at {drawn['textPx']:.1f} px"


def test_the_demo_run_is_a_column_of_steps_each_saying_what_it_did(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "demo-conversation")
    drawn = _open(browser, served.url + "/session?id=demo-conversation")
    _counts("demo", graph, drawn)
    assert [node["role"] for node in drawn["nodes"]].count("Question") == 1
    assert len(drawn["nodes"]) == 7  # question, session, four steps, answer
    spine = _one_run_reads_down(drawn, 4)
    _arrows_and_words(drawn)
    _readable(drawn)
    # The step that failed says how, in red, and what it tried; the others what they got.
    first, second, third, fourth = spine[2:6]
    assert first["lines"][-1].startswith("get_weather FAILED TimeoutError")
    assert first["red"][-1] and first["stroke"] == RED and not any(second["red"])
    assert second["lines"][-1] == "get_weather → Paris: 18 °C, light rain"
    assert third["lines"][-1] == "calculator → 64.4"
    assert fourth["lines"] == ["I have everything I need."]
    labels = {label["text"] for label in drawn["labels"]}
    assert {"used", "produced by", "answered from", "follows, used"} <= labels
    _shot(browser, "demo")
    whole = _press(browser, "why-fit")
    _readable(whole)
    _shot(browser, "demo-whole")
    assert _errors(browser) == []


def test_a_click_opens_a_step_with_its_calls_inside_and_folds_it_again(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "demo-conversation")
    failed = next(node for node in graph["nodes"] if node.get("status") == "error")
    drawn = _open(browser, served.url + "/session?id=demo-conversation")
    (step,) = _by_role(drawn, "Step 1 of 4")
    opened = _click(browser, step["id"])
    (box,) = [box for box in opened["boxes"] if box["group"] == step["group"]]
    call = next(node for node in opened["nodes"] if node["iri"] == failed["id"])
    assert "failed" in call["classes"] and call["stroke"] == RED and call["role"] == "Tool call"
    left, up, right, down = call["box"]
    assert box["box"][0] <= left and box["box"][1] <= up
    assert right <= box["box"][2] and down <= box["box"][3]
    assert len(opened["nodes"]) == len(drawn["nodes"]) + 3  # its thought, arguments, call
    # Its details: all of its text, its class and each relation's PROV term.
    details = _figure(browser).find_element(By.CSS_SELECTOR, ".why-details")
    assert details.is_displayed() and "Iteration" in details.text
    _shot(browser, "demo-step-open")
    chosen = _click(browser, call["id"])
    for text in (failed["label"], failed["error"], failed["id"], "ToolCall", "(partOf)"):
        assert text in details.text, text
    assert "used (used) → Arguments" in details.text
    _shot(browser, "demo-details")
    (head,) = [node for node in chosen["nodes"] if node["iri"] == step["iri"]]
    folded = _click(browser, head["id"])
    assert len(folded["nodes"]) == len(drawn["nodes"])
    # The zoom buttons zoom.
    before = [float(v) for v in folded["viewBox"].split()]
    after = [float(v) for v in _press(browser, "why-zoom-in")["viewBox"].split()]
    assert after[2] < before[2] and after[3] < before[3]
    assert _errors(browser) == []


def _check_every_node(graph: dict[str, Any], drawn: dict[str, Any]) -> None:
    """Every step opened: each node of ``graph`` (``why --format json``) drawn once, named
    in words, each step a box, one below the other, a failed call inside its step's box,
    red; each relation labelled in words."""
    assert sorted(n["iri"] for n in drawn["nodes"]) == sorted(n["id"] for n in graph["nodes"])
    kinds = {node["id"]: node["type"] for node in graph["nodes"]}
    for node in drawn["nodes"]:
        words = {"AgentSession": "Session", "ToolCall": "Tool call", "ModelCall": "Model call"}
        expected = words.get(kinds[node["iri"]], kinds[node["iri"]])
        assert node["role"] == expected or kinds[node["iri"]] == "Iteration", node
    boxes = {box["iri"]: box["box"] for box in drawn["boxes"] if box["kind"] == "step"}
    steps = [n["id"] for n in graph["nodes"] if n["type"] == "Iteration"]
    assert set(boxes) == set(steps)
    tops = sorted(boxes.values(), key=lambda b: b[1])
    assert all(a[3] <= b[1] for a, b in itertools.pairwise(tops))
    holders = {e["from"]: e["to"] for e in graph["edges"] if e["relation"] == "partOf"}
    by_iri = {node["iri"]: node for node in drawn["nodes"]}
    for node in graph["nodes"]:
        if node.get("status") == "error" and node["type"] != "AgentSession":
            drawn_node = by_iri[node["id"]]
            assert "failed" in drawn_node["classes"] and drawn_node["stroke"] == RED
            outer = boxes[holders[node["id"]]]
            left, up, right, down = drawn_node["box"]
            assert outer[0] <= left and outer[1] <= up and right <= outer[2] and down <= outer[3]
    said = sorted(label["text"] for label in drawn["labels"])
    kinds_of = {n["id"]: n["type"] for n in graph["nodes"]}
    meant = sorted(
        plain_relation(e["relation"], kinds_of[e["from"]], kinds_of[e["to"]])
        for e in graph["edges"]
        if not (e["relation"] == "partOf" and kinds_of[e["from"]] == "Iteration")
    )
    assert said == meant


def test_every_step_opened_draws_every_node_of_why(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "demo-conversation")
    _open(browser, served.url + "/session?id=demo-conversation")
    drawn = _press(browser, "why-open-all")
    _check_every_node(graph, drawn)
    _arrows_and_words(drawn)
    _shot(browser, "demo-open")
    back = _press(browser, "why-fold-all")
    assert len(back["nodes"]) == 7
    assert _errors(browser) == []


def test_a_conversation_of_three_turns_reads_down_one_column_each_turn_named(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "chat-3")
    drawn = _open(browser, served.url + "/session?id=chat-3")
    _counts("3 turns of 3 steps", graph, drawn)
    turns = _by_role(drawn, r"Turn \d of 3")
    assert [node["role"] for node in turns] == ["Turn 1 of 3", "Turn 2 of 3"]
    # Each earlier turn says what it asked (told apart) and answered.
    assert "(turn 1)" in " ".join(turns[0]["lines"]) and "(turn 2)" in " ".join(turns[1]["lines"])
    assert all(node["lines"][-1].startswith("→ It is 18 °C") for node in turns)
    (this,) = [box for box in drawn["boxes"] if box["kind"] == "turn"]
    assert this["label"] == "Turn 3 of 3: this run"
    spine = _one_run_reads_down(drawn, 3)
    _column([*sorted(turns, key=lambda n: n["box"][1]), *spine])
    # This run's nodes in its box, below the turns before it.
    assert all(
        this["box"][1] <= node["box"][1] and node["box"][3] <= this["box"][3] for node in spine
    )
    assert turns[-1]["box"][3] < this["box"][1]
    # Each turn follows the one before, along the left side (laid out, it pulled the
    # turns off this run's column).
    sides = [e for e in drawn["edges"] if "side" in e["classes"]]
    assert [(e["from"], e["to"]) for e in sides] == [
        (turns[1]["id"], turns[0]["id"]), (spine[1]["id"], turns[1]["id"])
    ]  # fmt: skip
    assert len(drawn["nodes"]) == 6 + KEEP_TURNS
    _arrows_and_words(drawn)
    _readable(drawn)
    _shot(browser, "conversation-3")
    _readable(_press(browser, "why-fit"))
    _shot(browser, "conversation-3-whole")
    # A click opens the turn before: its nodes in a box of its own, named.
    opened = _click(browser, turns[1]["id"])
    named = sorted(
        (box for box in opened["boxes"] if box["kind"] == "turn"), key=lambda b: b["box"][1]
    )
    labels = [box["label"] for box in named]
    assert labels == ["Turn 2 of 3", "Turn 3 of 3: this run"]
    assert len(opened["nodes"]) == len(drawn["nodes"]) + 5  # its question, steps and answer
    _shot(browser, "conversation-3-turn-2")
    assert _errors(browser) == []


def test_what_is_drawn_at_first_does_not_grow_with_the_earlier_turns(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    counts = {}
    for turns in (3, 8, 20):
        drawn = _open(browser, served.url + f"/session?id=chat-{turns}")
        counts[turns] = len(drawn["nodes"])
        graph = _why(store, f"chat-{turns}")
        _counts(f"{turns} turns", graph, drawn)
        _one_run_reads_down(drawn, 3)
        _readable(drawn)
    assert counts[8] == counts[20] == 6 + KEEP_TURNS + 1  # the older turns in one fold
    assert counts[3] <= counts[8]
    (fold,) = _by_role(drawn, r"Turns \d+–\d+")
    assert fold["role"] == "Turns 1–17" and fold["lines"][0].startswith("17 earlier turns")
    _shot(browser, "conversation-20")
    opened = _click(browser, fold["id"])
    assert len(opened["nodes"]) == counts[20] + 10  # ten turns, a fold for the other seven
    assert _by_role(opened, r"Turns \d+–\d+")[0]["role"] == "Turns 1–7"
    assert _errors(browser) == []


def test_a_50_step_run_opens_at_its_question_its_middle_folded(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "steps-50")
    assert sum(1 for node in graph["nodes"] if node["type"] == "Iteration") == 50
    drawn = _open(browser, served.url + "/session?id=steps-50")
    _counts("50 steps", graph, drawn)
    spine = _one_run_reads_down(drawn, 50)
    assert [node["role"] for node in spine[2:-1]] == [
        "Step 1 of 50", "Step 2 of 50", "Step 3 of 50", "Steps 4–47",
        "Step 48 of 50", "Step 49 of 50", "Step 50 of 50",
    ]  # fmt: skip
    _arrows_and_words(drawn)
    _readable(drawn)
    # It opens at the start of the run, at reading size.
    figure, question = drawn["figure"], spine[0]["box"]
    assert figure[0] <= question[0] and question[2] <= figure[2]
    assert figure[1] <= question[1] and question[3] <= figure[3]
    _shot(browser, "50-steps")
    whole = _press(browser, "why-fit")
    _readable(whole)
    _shot(browser, "50-steps-whole")
    # A click on the fold opens ten steps; the rest stay folded.
    (fold,) = _by_role(whole, r"Steps \d+–\d+")
    opened = _click(browser, fold["id"])
    assert len(opened["nodes"]) == len(drawn["nodes"]) + 10
    assert [node["role"] for node in _by_role(opened, r"Steps \d+–\d+")] == ["Steps 14–47"]
    _one_run_reads_down(opened, 50)
    _shot(browser, "50-steps-fold-opened")
    # The wheel scrolls the graph (not the page).
    svg = _figure(browser).find_element(By.CSS_SELECTOR, "svg.why-graph")
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, 600).perform()
    assert _drawn(browser)["viewBox"] != opened["viewBox"]
    assert _errors(browser) == []


def test_a_200_step_run_draws_as_much_at_first_and_all_of_it_on_asking(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, "steps-200")
    drawn = _open(browser, served.url + "/session?id=steps-200")
    _counts("200 steps", graph, drawn)
    assert len(drawn["nodes"]) == 10  # as for 50 steps: it does not grow with the run
    spine = _one_run_reads_down(drawn, 200)
    assert spine[5]["role"] == "Steps 4–197"
    _readable(drawn)
    _shot(browser, "200-steps")
    _readable(_press(browser, "why-fit"))
    _shot(browser, "200-steps-whole")
    everything = _press(browser, "why-open-all")
    _counts("200 steps, every step opened", graph, everything)
    assert len(everything["nodes"]) == len(graph["nodes"])
    _readable(_press(browser, "why-start"))
    _shot(browser, "200-steps-open")
    assert _errors(browser) == []


def test_a_run_that_failed_before_answering_hangs_its_steps_below_its_session(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    """Issue 45, point 9: its question sat beside the session, a looping edge between."""
    drawn = _open(browser, served.url + "/session?id=quota")
    (question,) = _by_role(drawn, "Question")
    (session,) = _by_role(drawn, "Session")
    steps = _by_role(drawn, r"Step \d of 2")
    _column([question, session, *steps])
    assert "failed" in session["classes"] and session["lines"][-1].startswith("FAILED Runtime")
    assert not [e for e in drawn["edges"] if "far" in e["classes"]]
    assert steps[1]["lines"] == ["look up 2", "lookup → found 2"]  # its last call too
    _arrows_and_words(drawn)
    _shot(browser, "failed")
    assert _errors(browser) == []


def test_nodes_that_begin_alike_are_told_apart(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    graph = _why(store, ALIKE)
    _open(browser, served.url + f"/session?id={ALIKE}")
    drawn = _press(browser, "why-open-all")
    _check_every_node(graph, drawn)
    by_iri = {node["iri"]: node for node in drawn["nodes"]}
    texts: dict[str, str] = {}
    for node in graph["nodes"]:
        seen = texts.setdefault(" ".join(by_iri[node["id"]]["lines"]), node["label"])
        assert seen == node["label"], (by_iri[node["id"]]["lines"], seen, node["label"])
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
        _one_run_reads_down(drawn, 4)
        _check_every_node(_why(store, "demo-conversation"), _press(browser, "why-open-all"))
        _shot(browser, "demo-file")
        assert _errors(browser) == []
    finally:
        browser.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
