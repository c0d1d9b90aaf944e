"""Real SPARQL servers and a real browser for the integration tests, started here and
stopped afterwards."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.servers import SparqlServer, start_oxigraph, start_virtuoso

SERVERS = {"oxigraph": start_oxigraph, "virtuoso": start_virtuoso}
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SparqlServer]:
    """A fresh server of each kind, on its own data directory."""
    started = SERVERS[request.param](tmp_path)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """Debian's Chromium, headless, driven by selenium through Debian's chromedriver
    (``make servers`` installs both); its console is kept for the tests to read."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("chromium and chromedriver are missing: run make servers")
    profile = tempfile.mkdtemp(prefix="otel-prov-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1000",
    ):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
