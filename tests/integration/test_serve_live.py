"""Issue 30.1: the web view's page of a run still open follows it without a reload, in
real Chromium, over a store a real agent process streams its steps into."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By

from otel_prov.read import open_store
from tests.serving import serving

ROOT = Path(__file__).resolve().parent.parent.parent


def _wait(check: object, timeout: float, what: str) -> None:
    began = time.monotonic()
    while not check():  # type: ignore[operator]
        assert time.monotonic() - began < timeout, what
        time.sleep(0.1)


def _console(browser: webdriver.Chrome) -> str:
    """The browser's console and the start of the runs' markup, for a failure message."""
    markup = browser.execute_script("return document.getElementById('runs').outerHTML")
    return f"{browser.get_log('browser')} {str(markup)[:300]}"


def _first_step(browser: webdriver.Chrome) -> object:
    """The head of the why-graph's first step, shut or open (None before it is drawn)."""
    return browser.execute_script(
        """return [...document.querySelectorAll("svg.why-graph g.node")].find(
             (g) => g.querySelector("text.role").textContent.startsWith("Step 1 of")) || null;"""
    )


def _open_steps(browser: webdriver.Chrome) -> int:
    return len(browser.find_elements(By.CSS_SELECTOR, "svg.why-graph g.step"))


def test_the_page_of_an_open_run_shows_new_steps_and_the_end_without_a_reload(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    agent = subprocess.Popen(
        [sys.executable, "-m", "tests.streaming_agent", "store", str(store), "12"],
        env={**os.environ, "STREAMING_AGENT_PAUSE": "1.5"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert agent.stdout is not None and agent.stdin is not None
        agent.stdout.readline()

        def first_run() -> str | None:
            runs = open_store(store).sessions().sessions
            return runs[0].id if runs else None

        _wait(lambda: first_run() is not None, 10, "the run is not in the store")
        with serving("--store", str(store)) as served:
            url = f"{served.url}/session?{urllib.parse.urlencode({'id': first_run()})}"
            browser.get(url)
            browser.execute_script("window.sameDocument = true;")

            def iterations() -> int:
                return len(browser.find_elements(By.CSS_SELECTOR, "section.iteration"))

            shown = iterations()
            assert "running" in browser.find_element(By.TAG_NAME, "body").text
            # A step the reader opened in the why-graph stays open as the page follows.
            _wait(lambda: _first_step(browser) is not None, 15, "no step drawn")
            head = _first_step(browser)
            browser.execute_script(
                "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", head
            )
            _wait(lambda: _open_steps(browser) == 1, 15, "the step did not open")
            no_new = f"no new step after {shown}"
            _wait(lambda: iterations() > shown, 15, f"{no_new}: {_console(browser)}")
            _wait(lambda: _first_step(browser) is not None, 15, "no step drawn again")
            assert _open_steps(browser) == 1, "the opened step was folded by the update"
            _wait(lambda: iterations() == 12, 30, "not every step shown")
            agent.stdin.write("end\n")
            agent.stdin.flush()
            assert agent.wait(timeout=60) == 0
            _wait(
                lambda: "done" in browser.find_element(By.TAG_NAME, "body").text,
                15,
                "the answer is not shown",
            )
            assert browser.execute_script("return window.sameDocument === true;")
            assert (
                browser.execute_script(
                    "return document.getElementById('runs').hasAttribute('data-live');"
                )
                is False
            )
            errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
            assert errors == []
    finally:
        agent.kill()
