"""Real SPARQL servers and a real browser for the integration tests, started here and
stopped afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver

from tests.browser import chromium
from tests.servers import SparqlServer, start_fuseki, start_oxigraph, start_virtuoso

SERVERS = {"fuseki": start_fuseki, "oxigraph": start_oxigraph, "virtuoso": start_virtuoso}


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
    """Debian's Chromium, headless (``tests/browser.py``); its console is kept for the
    tests to read."""
    with chromium() as driver:
        yield driver
