"""What a user of Langfuse, Phoenix or Jaeger looks for in the web view, in a real browser
(headless Chromium), over stores real agents write (issue 45, points 7 and 8):

- the login page styled as every page is;
- the tenant being read named on every page, a switch among those the reader may read,
  and an auditor (a reader of several tenants, none its own) asked which to read first
  instead of landing on one tenant's runs;
- how long each run took in the list, and two runs picked from the list to compare;
- ``serve`` started before any store exists: the list says there are no runs yet and
  shows them as they arrive, without a reload;
- a run still going says how long it has been running, where the page said "(never)".

Screenshots go to ``build/test-artifacts/serve-*.png`` for a person to look at.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from tests.cli import run_cli
from tests.serving import serving

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "test-artifacts"
TOKENS = {"team-a": "token-of-team-a", "team-b": "token-of-team-b", "audit": "token-of-audit"}


def _demo(store: Path, tenant: str) -> None:
    """The demo agent, run as a user runs it, into ``tenant``'s graph of ``store``."""
    done = run_cli("demo", "--store", str(store), "--tenant", tenant)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def tenants_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("pages")
    store = folder / "store"
    for tenant in ("team-a", "team-a", "team-b"):
        _demo(store, tenant)
    tenants = folder / "tenants.json"
    tenants.write_text(
        json.dumps(
            {
                "tenants": {
                    "team-a": {"tokens": [TOKENS["team-a"]]},
                    "team-b": {"tokens": [TOKENS["team-b"]]},
                    "audit": {"tokens": [TOKENS["audit"]], "reads": ["team-a", "team-b"]},
                }
            }
        )
    )
    return store, tenants


def _shot(browser: webdriver.Chrome, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"serve-{name}.png"
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")


def _follow(browser: webdriver.Chrome, element: WebElement) -> None:
    """Click a link or a button and wait for the page it leads to."""
    old = browser.find_element(By.TAG_NAME, "html")
    element.click()
    wait = WebDriverWait(browser, 60)
    wait.until(expected_conditions.staleness_of(old))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def _errors(browser: webdriver.Chrome) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _named(browser: webdriver.Chrome) -> str:
    """The tenant the page says it reads."""
    return browser.find_element(By.CSS_SELECTOR, "nav .tenant-name").text


def _rows(browser: webdriver.Chrome) -> list[WebElement]:
    return browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")


def test_an_auditor_logs_in_picks_a_tenant_and_every_page_names_the_one_read(
    browser: webdriver.Chrome, tenants_store: tuple[Path, Path]
) -> None:
    store, tenants = tenants_store
    browser.set_window_size(1400, 900)
    with serving("--store", str(store), "--tenants", str(tenants)) as served:
        url = served.url.replace("127.0.0.1", "localhost")  # a Secure cookie over http
        browser.get(url + "/")
        assert browser.current_url.startswith(url + "/login?next=")
        # The login page has the pages' style: a card, a labelled field, a filled button.
        card = browser.find_element(By.CSS_SELECTOR, "main.login")
        assert card.value_of_css_property("border-radius") == "8px"
        button = card.find_element(By.CSS_SELECTOR, "button[type=submit]")
        assert button.value_of_css_property("background-color") == "rgba(57, 73, 171, 1)"
        assert not browser.find_elements(By.TAG_NAME, "nav")  # nothing to go to yet
        _shot(browser, "login")
        browser.find_element(By.NAME, "token").send_keys(TOKENS["audit"])
        _follow(browser, button)
        # An auditor: asked which tenant to read, each with its newest run.
        assert browser.find_element(By.TAG_NAME, "h1").text == "Pick a tenant"
        choices = browser.find_elements(By.CSS_SELECTOR, "table.tenants tbody tr")
        assert [row.find_element(By.TAG_NAME, "a").text for row in choices] == [
            "team-a", "team-b",
        ]  # fmt: skip
        assert all("Paris right now" in row.text and "ok" in row.text for row in choices)
        _shot(browser, "tenants")
        _follow(browser, choices[1].find_element(By.TAG_NAME, "a"))
        assert _named(browser) == "team-b" and len(_rows(browser)) == 1
        switch = Select(browser.find_element(By.ID, "tenant-switch"))
        assert [o.text for o in switch.options] == ["team-a", "team-b"]
        assert switch.first_selected_option.text == "team-b"
        _shot(browser, "tenant-b")
        # Picking another tenant reads its runs (the page's script submits the switch).
        old = browser.find_element(By.TAG_NAME, "html")
        switch.select_by_visible_text("team-a")
        WebDriverWait(browser, 60).until(expected_conditions.staleness_of(old))
        assert _named(browser) == "team-a" and len(_rows(browser)) == 2
        assert "tenant=team-a" in browser.current_url
        # Every page of team-a's says so: a run's, the diff, the SPARQL box.
        _follow(browser, _rows(browser)[0].find_element(By.TAG_NAME, "a"))
        assert _named(browser) == "team-a" and "team-a" in browser.title
        for link in ("Diff", "SPARQL"):
            _follow(browser, browser.find_element(By.LINK_TEXT, link))
            assert _named(browser) == "team-a", link
        _shot(browser, "tenant-a-sparql")
        assert _errors(browser) == []


def test_a_teams_reader_sees_its_tenant_named_with_nothing_to_switch_to(
    browser: webdriver.Chrome, tenants_store: tuple[Path, Path]
) -> None:
    store, tenants = tenants_store
    with serving("--store", str(store), "--tenants", str(tenants)) as served:
        url = served.url.replace("127.0.0.1", "localhost")
        browser.delete_all_cookies()
        browser.get(url + "/")
        browser.find_element(By.NAME, "token").send_keys(TOKENS["team-b"])
        _follow(browser, browser.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        assert _named(browser) == "team-b" and len(_rows(browser)) == 1
        assert not browser.find_elements(By.ID, "tenant-switch")


def test_the_list_says_how_long_each_run_took_and_two_picked_are_compared(
    browser: webdriver.Chrome, tenants_store: tuple[Path, Path]
) -> None:
    store, _ = tenants_store
    browser.set_window_size(1400, 900)
    with serving("--store", str(store), "--tenant", "team-a") as served:
        browser.get(served.url + "/")
        assert _named(browser) == "team-a"
        head = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "table.sessions th")]
        assert head[:3] == ["diff", "started", "took"]
        took = [row.find_element(By.CSS_SELECTOR, "td.took").text for row in _rows(browser)]
        assert len(took) == 2 and all(re.fullmatch(r"\d+(\.\d+)? (µs|ms|s)", t) for t in took)
        for row in _rows(browser):
            row.find_element(By.CSS_SELECTOR, "input[name=run]").click()
        _shot(browser, "list-picked")
        _follow(browser, browser.find_element(By.XPATH, "//button[.='Compare the two picked']"))
        assert browser.find_element(By.TAG_NAME, "h1").text == "Two sessions side by side"
        assert len(browser.find_elements(By.CSS_SELECTOR, ".columns .side article.run")) == 2
        compared = browser.find_element(By.ID, "first-divergence").text
        assert "Compared:" in compared
        _shot(browser, "diff-picked")
        assert _errors(browser) == []
        # One picked is not two: the page says so (400, which the console reports).
        browser.get(served.url + "/")
        _rows(browser)[0].find_element(By.CSS_SELECTOR, "input[name=run]").click()
        _follow(browser, browser.find_element(By.XPATH, "//button[.='Compare the two picked']"))
        message = browser.find_element(By.CSS_SELECTOR, ".error-message").text
        assert message == "pick two runs in the list to compare them (1 picked)"
        assert all("status of 400" in error for error in _errors(browser))


def test_serve_before_any_store_then_runs_show_as_they_arrive_and_run_for_so_long(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    browser.set_window_size(1400, 900)
    with serving("--store", str(store)) as served:
        browser.get(served.url + "/")
        waiting = browser.find_element(By.CSS_SELECTOR, ".waiting").text
        assert waiting.startswith("No runs yet") and str(store) in waiting
        _shot(browser, "no-store-yet")
        browser.execute_script("window.sameDocument = true;")
        agent = subprocess.Popen(
            [sys.executable, "-m", "tests.streaming_agent", "store", str(store), "0"],
            env={**os.environ, "STREAMING_AGENT_PAUSE": "0.5"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        try:
            # The run shows in the list without a reload, still running, for so long.
            WebDriverWait(browser, 60).until(
                lambda d: len(_rows(d)) == 1 and "running" in _rows(d)[0].text
            )
            assert browser.execute_script("return window.sameDocument === true")
            assert not browser.find_elements(By.CSS_SELECTOR, ".waiting")
            assert (
                _rows(browser)[0].find_element(By.CSS_SELECTOR, "td.took").text.endswith(" so far")
            )
            _shot(browser, "runs-arrive")
            _follow(browser, _rows(browser)[0].find_element(By.TAG_NAME, "a"))
            ended = browser.find_element(By.XPATH, "//dt[.='ended']/following-sibling::dd[1]").text
            assert re.fullmatch(r"not yet: running for \d+(\.\d+)? (ms|s|min)", ended), ended
            assert "(never)" not in browser.find_element(By.TAG_NAME, "body").text
            _shot(browser, "running-for")
        finally:
            agent.kill()
            agent.wait(timeout=30)
        assert _errors(browser) == []
