"""``otel-prov serve`` in a real browser: Debian's Chromium, headless, driven by selenium
through Debian's chromedriver (``make servers`` installs both).

A user opens the list, clicks into the demo run and sees the failed call and its error;
a run whose every field holds markup and script shows it as text, and no script of it
runs; the console stays free of errors (a blocked inline script would be a CSP error
there).  A page of another site cannot have the browser run a query.  Screenshots go
to ``build/test-artifacts/``.
"""

from __future__ import annotations

import contextlib
import html
import http.server
import json
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from otel_prov.demo import DEMO_QUESTION
from tests.builders import make_span, store_runs
from tests.cli import run_cli
from tests.serving import Served, counting_target, serving

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
PAGE_TIMEOUT = 60.0
"""Generous: a loaded machine may take seconds to answer and draw a page."""

HOSTILE = [
    "<script>window.pwned = 'script'</script>",
    "<img src=x onerror=\"window.pwned='img'\">",
    '"><svg onload="window.pwned=\'svg\'"></svg>',
    "</style><script>window.pwned='style'</script>",
    "javascript:window.pwned='link'",
    "]]><!-- <b>bold</b> &amp; &lt;",
]
MARKER = "hostile-run"


def _hostile_run() -> list:  # type: ignore[type-arg]
    text = " ".join(HOSTILE)
    return [
        make_span(
            1, None, name="invoke_agent x", start_ms=0, end_ms=50, trace_id=0xBAD,
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name=HOSTILE[0],
            gen_ai__conversation__id=MARKER, otel_prov__question=text, otel_prov__answer=text,
        ),
        make_span(
            2, 1, name="iteration 1", start_ms=1, end_ms=40, trace_id=0xBAD,
            otel_prov__iteration__number=1, otel_prov__thought=HOSTILE[1],
            otel_prov__action=HOSTILE[2], otel_prov__arguments=HOSTILE[3],
        ),
        make_span(
            3, 2, name="execute_tool x", start_ms=2, end_ms=30, trace_id=0xBAD,
            status="error", message=HOSTILE[4], gen_ai__operation__name="execute_tool",
            gen_ai__tool__name=HOSTILE[5], gen_ai__tool__call__id=HOSTILE[0],
            error__type=HOSTILE[1],
        ),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browser") / "store"


@pytest.fixture(scope="module")
def served(store: Path) -> Iterator[Served]:
    assert run_cli("demo", "--store", str(store)).returncode == 0
    store_runs(store, _hostile_run())
    with serving("--store", str(store)) as server:
        yield server


def _follow(driver: webdriver.Chrome, element: WebElement) -> None:
    """Click a link or a submit button and wait for the page it leads to.

    A click can return before the navigation it starts is under way (a form posts from a
    task of its own), so the next ``find_element`` could still search the old page."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    wait = WebDriverWait(driver, PAGE_TIMEOUT)
    wait.until(expected_conditions.staleness_of(old))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def _errors(driver: webdriver.Chrome) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _shot(driver: webdriver.Chrome, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(int(height), 600), 8000))
    driver.save_screenshot(str(ARTIFACTS / f"serve-{name}.png"))


def test_a_user_clicks_from_the_list_into_the_demo_run_and_sees_the_failed_call(
    served: Served, browser: webdriver.Chrome
) -> None:
    browser.get(served.url + "/")
    _shot(browser, "sessions")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")
    assert len(rows) == 2
    demo = next(row for row in rows if "Paris right now" in row.text)
    # The demo carried on past its timed-out call: ok, with one failed call beside it.
    assert (
        demo.find_element(By.CSS_SELECTOR, ".status-ok").value_of_css_property("color")
        == "rgba(46, 125, 50, 1)"
    )
    assert [c.text for c in demo.find_elements(By.CSS_SELECTOR, "td.number")][2] == "1"

    _follow(browser, demo.find_element(By.TAG_NAME, "a"))
    assert browser.current_url.startswith(served.url + "/session?id=")
    failed = browser.find_element(By.CSS_SELECTOR, ".tool-call.failed")
    assert failed.is_displayed()
    assert "FAILED" in failed.text and "TimeoutError" in failed.text
    assert "weather service did not answer for Paris" in failed.text
    bars = browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.bar")
    calls = browser.find_elements(By.CSS_SELECTOR, ".call")
    steps = browser.find_elements(By.CSS_SELECTOR, "section.iteration")
    assert len(bars) == 1 + len(steps) + len(calls) == 12
    # The timed-out call only: the run itself carried on.
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.bar.failed")) == 1
    _shot(browser, "demo-session")
    assert _errors(browser) == []


def _text_height(driver: webdriver.Chrome, cell: WebElement) -> float:
    """The height of the text in ``cell`` (the cell itself is as high as its row)."""
    return float(driver.execute_script(
        "const r = document.createRange(); r.selectNodeContents(arguments[0]);"
        "return r.getBoundingClientRect().height;", cell,
    ))  # fmt: skip


def test_the_question_column_reads_as_lines_of_text_not_a_narrow_strip(
    served: Served, browser: webdriver.Chrome
) -> None:
    """The question takes a readable width beside the 32-digit trace ids: one or two lines,
    cut with an ellipsis, the whole question on hover."""
    browser.get(served.url + "/")
    cells = browser.find_elements(By.CSS_SELECTOR, "table.sessions td.question")
    demo = next(cell for cell in cells if "Paris right now" in cell.text)
    line = float(browser.execute_script(
        "return parseFloat(getComputedStyle(arguments[0]).lineHeight)", demo
    ))  # fmt: skip
    assert demo.rect["width"] >= 250 and _text_height(browser, demo) <= 2.5 * line
    assert demo.get_attribute("title") == demo.text  # short enough to be shown whole
    hostile = next(cell for cell in cells if "window.pwned" in cell.text)
    assert _text_height(browser, hostile) <= 3.5 * line and hostile.text.endswith("…")
    assert hostile.get_attribute("title") == " ".join(HOSTILE)
    _shot(browser, "sessions")
    assert _errors(browser) == []


def test_the_why_graph_draws_a_node_per_activity_and_entity_of_why_and_focuses_on_click(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    """The SVG is the graph ``otel-prov why`` gives, every step opened: one node for each
    of its nodes, the failed weather call marked, and a click on a node focuses it."""
    answer = run_cli("why", "demo-conversation", "--store", str(store), "--format", "json")
    assert answer.returncode == 0, answer.stderr
    graph = json.loads(answer.stdout)
    kinds = ("AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Activity")
    activities = [n for n in graph["nodes"] if n["type"] in kinds]
    browser.get(served.url + "/")
    row = next(
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")
        if "Paris right now" in r.text
    )
    _follow(browser, row.find_element(By.TAG_NAME, "a"))
    browser.find_element(By.CSS_SELECTOR, "button.why-open-all").click()
    nodes = browser.find_elements(By.CSS_SELECTOR, "svg.why-graph g.node")
    assert len(nodes) == len(graph["nodes"])
    drawn = browser.find_elements(By.CSS_SELECTOR, "svg.why-graph g.node.activity")
    assert len(activities) >= 3 and len(drawn) == len(activities)
    failed = browser.find_elements(By.CSS_SELECTOR, "svg.why-graph g.node.failed")
    assert len(failed) == len([n for n in graph["nodes"] if n.get("status") == "error"]) >= 1
    failed[0].click()
    assert "focus" in (failed[0].get_attribute("class") or "").split()
    _shot(browser, "demo-why-graph")
    assert _errors(browser) == []


def test_hostile_values_show_as_text_and_no_script_of_theirs_runs(
    served: Served, browser: webdriver.Chrome
) -> None:
    for path in ("/", f"/session?id={MARKER}", f"/?q={MARKER}", f"/diff?a={MARKER}&b={MARKER}"):
        browser.get(served.url + path)
        assert browser.execute_script("return window.pwned === undefined"), path
        assert browser.find_elements(By.CSS_SELECTOR, "body img, body script") == [], path
        assert _errors(browser) == [], path
    browser.get(served.url + f"/session?id={MARKER}")
    shown = browser.find_element(By.TAG_NAME, "body").text
    for text in HOSTILE:
        assert text in shown
    _shot(browser, "hostile-session")
    browser.get(served.url + "/sparql")
    box = browser.find_element(By.NAME, "query")
    box.clear()  # it starts with the first recipe
    box.send_keys("SELECT ?q WHERE { ?s oprov:sessionId \"hostile-run\" ; prov:used ?e . "
                  "?e a oprov:Question ; prov:value ?q }")  # fmt: skip
    _follow(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="html"]'))
    cell = browser.find_element(By.CSS_SELECTOR, "table.results td")
    assert cell.text == " ".join(HOSTILE)
    assert browser.execute_script("return window.pwned === undefined")
    _shot(browser, "sparql")
    assert _errors(browser) == []


def test_the_diff_page_marks_the_first_divergence_the_read_api_finds(
    served: Served, browser: webdriver.Chrome, store: Path
) -> None:
    """The demo run against the hostile one: the page names the step and field where
    they first part ways, as ``otel-prov diff`` does (here their questions), and marks
    that step (or the question, agent, status or answer) in both columns, and nothing
    else."""
    answer = run_cli("diff", "demo-conversation", MARKER, "--store", str(store), "--format", "json")
    first = json.loads(answer.stdout)["first_divergence"]
    assert first is not None, answer.stdout
    browser.get(served.url + f"/diff?a=demo-conversation&b={MARKER}")
    summary = browser.find_element(By.ID, "first-divergence")
    where = (
        f"the {first['field']}"
        if first["iteration"] is None
        else f"iteration {first['iteration']}, "
    )
    assert f"First divergence: {where}" in summary.text
    if first["iteration"] is not None:
        assert first["field"] in summary.text
    marked = browser.find_elements(By.CSS_SELECTOR, ".side .diverges")
    assert len(marked) == 2
    for element in marked:
        assert element.get_attribute("data-field") == first["field"]
        assert element.is_displayed()
        if first["iteration"] is not None:
            heading = element.find_element(By.TAG_NAME, "h3").text
            assert heading.startswith(f"Iteration {first['iteration']} ")
            assert "first divergence" in heading
    assert browser.execute_script("return window.pwned === undefined")
    _shot(browser, "diff")
    assert _errors(browser) == []
    browser.get(served.url + "/diff?a=demo-conversation&b=demo-conversation")
    assert "No divergence" in browser.find_element(By.ID, "first-divergence").text
    assert browser.find_elements(By.CSS_SELECTOR, ".diverges") == []
    assert first == {
        "iteration": None,
        "field": "question",
        "a": DEMO_QUESTION,
        "b": " ".join(HOSTILE),
    }


@contextlib.contextmanager
def foreign_site(page: str) -> Iterator[int]:
    """Another origin on this machine (a port of its own) that serves ``page`` at ``/``."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _attack(url: str, query: str) -> str:
    """A page that makes the browser ask ``url`` to run ``query`` three ways no site can
    be stopped from: an image, a no-cors fetch and a form posted to it."""
    sparql = html.escape(f"{url}/sparql?" + urllib.parse.urlencode({"query": query}))
    body = json.dumps(urllib.parse.urlencode({"query": query}))
    return f"""<!doctype html><html><body>
<img src="{sparql}" onload="window.img = 'loaded'" onerror="window.img = 'failed'">
<script>
fetch("{url}/sparql", {{method: "POST", mode: "no-cors", body: {body},
  headers: {{"content-type": "application/x-www-form-urlencoded"}}}})
  .then(() => {{ window.posted = "answered"; }}, () => {{ window.posted = "failed"; }});
</script>
<form method="post" action="{html.escape(url)}/sparql">
<input type="hidden" name="query" value="{html.escape(query)}">
<button id="go" type="submit">win a prize</button></form>
</body></html>"""


@pytest.mark.usefixtures("served")  # it fills the store
def test_a_page_of_another_site_cannot_make_the_browser_run_a_query(
    store: Path, browser: webdriver.Chrome
) -> None:
    """SERVICE is allowed here for the counting endpoint, so that only the cross-site
    checks stand between the foreign page and a query that would reach it: the image
    (GET), the fetch and the form (POST from another origin) must run nothing, and the
    server's own SPARQL box, posting the same query, does reach the endpoint."""
    with (
        counting_target() as target,
        serving("--store", str(store), "--allow-service", target.url) as server,
    ):
        query = f"SELECT * WHERE {{ ?c oprov:toolName ?t . SERVICE <{target.url}> {{ ?s ?p ?o }} }}"
        with foreign_site(_attack(server.url, query)) as port:
            # Another port of this host (same site), then another host name (cross-site).
            for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
                browser.get(origin + "/")
                wait = WebDriverWait(browser, PAGE_TIMEOUT)
                wait.until(lambda d: d.execute_script("return window.img && window.posted"))
                assert browser.execute_script("return window.img") == "failed"  # a 405 page
                _follow(browser, browser.find_element(By.ID, "go"))
                assert browser.current_url == server.url + "/sparql"
                assert "refused" in browser.find_element(By.TAG_NAME, "body").text
                assert target.requests == [], origin
        _shot(browser, "cross-site-refused")
        browser.get(server.url + "/sparql")
        browser.find_element(By.NAME, "query").clear()  # it starts with a recipe
        browser.find_element(By.NAME, "query").send_keys(query)
        _follow(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="html"]'))
        assert target.requests, browser.find_element(By.TAG_NAME, "body").text
        # The refusals (and the endpoint's 500) are errors in the console, as they should be.
        refused = _errors(browser)
        assert any("status of 403" in e for e in refused), refused


def _lan_address() -> str | None:
    """An address of this machine other than loopback (where the default route leaves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.mark.usefixtures("served")  # it fills the store
def test_the_sparql_box_runs_over_plain_http_to_a_lan_address(
    store: Path, browser: webdriver.Chrome
) -> None:
    """Over plain HTTP to an address other than loopback the page is no secure context,
    and Chromium sends no Sec-Fetch-Site: the box's POST shows it is ours by its Origin."""
    address = _lan_address()
    if address is None:
        pytest.skip("this machine has no address but loopback to reach serve by")
    with serving("--store", str(store), "--host", "0.0.0.0") as server:
        url = server.url.replace("0.0.0.0", address)
        browser.get(url + "/sparql")
        browser.find_element(By.NAME, "query").clear()  # it starts with a recipe
        browser.find_element(By.NAME, "query").send_keys(
            "SELECT ?tool WHERE { ?c oprov:toolName ?tool } ORDER BY ?tool"
        )
        _follow(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="html"]'))
        cells = browser.find_elements(By.CSS_SELECTOR, "table.results td")
        assert "calculator" in [c.text for c in cells], browser.page_source[-500:]
        assert _errors(browser) == []


def test_a_user_picks_a_recipe_of_the_docs_and_runs_it(
    served: Served, browser: webdriver.Chrome
) -> None:
    """The box starts with the first recipe; picking another puts it in the box (app.js),
    and Run answers it."""
    from selenium.webdriver.support.ui import Select

    from otel_prov.read._recipes import RECIPES

    browser.get(served.url + "/sparql")
    box = browser.find_element(By.CSS_SELECTOR, "textarea[name=query]")
    assert box.get_property("value") == RECIPES[0].text
    picker = Select(browser.find_element(By.ID, "recipes"))
    assert [option.text for option in picker.options][1:] == [r.title for r in RECIPES]
    assert picker.first_selected_option.text == RECIPES[0].title
    picker.select_by_index(2)
    assert box.get_property("value") == RECIPES[1].text
    _follow(browser, browser.find_element(By.CSS_SELECTOR, "button[value=html]"))
    # The answer's page names the recipe its box holds.
    chosen = Select(browser.find_element(By.ID, "recipes")).first_selected_option
    assert chosen.text == RECIPES[1].title
    assert browser.find_element(By.CSS_SELECTOR, "table.results thead").text.split() == [
        "session", "started", "trace",
    ]  # fmt: skip
    _shot(browser, "sparql-recipe")
    assert _errors(browser) == []
