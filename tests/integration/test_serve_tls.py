"""``otel-prov serve --tls-cert --tls-key [--client-ca]``: a real Chromium reads the pages
and runs a query over TLS (trusting the test's certificate by its public key, with
``--ignore-certificate-errors-spki-list``), and under ``--client-ca`` a client without a
certificate of that CA, or a plaintext one, gets nowhere, and the log says why."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from tests.browser import chromium
from tests.certificates import Authority, Issued
from tests.cli import write_demo_store
from tests.serving import serving

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_store(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return Authority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def server(authority: Authority) -> Issued:
    return authority.server()


@pytest.fixture(scope="module")
def browser(server: Issued) -> Iterator[webdriver.Chrome]:
    with chromium(f"--ignore-certificate-errors-spki-list={server.spki_sha256()}") as driver:
        yield driver


def _get(url: str, context: ssl.SSLContext | None) -> int:
    with urllib.request.urlopen(url, timeout=30, context=context) as answer:
        status: int = answer.status
        return status


def test_chromium_reads_the_pages_and_runs_a_query_over_tls(
    store: Path, server: Issued, browser: webdriver.Chrome
) -> None:
    tls = ("--tls-cert", str(server.cert), "--tls-key", str(server.key))
    with serving("--store", str(store), *tls) as served:
        assert served.url.startswith("https://")
        url = served.url.replace("127.0.0.1", "localhost")
        browser.get(url + "/")
        rows = browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")
        assert any("Paris right now" in row.text for row in rows), browser.page_source[:500]
        assert browser.execute_script("return window.isSecureContext") is True
        browser.get(url + "/sparql")
        browser.find_element(By.NAME, "query").clear()  # it starts with a recipe
        browser.find_element(By.NAME, "query").send_keys(
            "SELECT ?tool WHERE { ?c oprov:toolName ?tool } ORDER BY ?tool"
        )
        browser.find_element(By.CSS_SELECTOR, 'button[value="html"]').click()
        WebDriverWait(browser, 60).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "table.results td")
        )
        cells = browser.find_elements(By.CSS_SELECTOR, "table.results td")
        assert "calculator" in [c.text for c in cells]
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            _get(served.url.replace("https://", "http://") + "/", None)
        assert "serve refused a connection: the client spoke plaintext HTTP" in served.stderr()


def test_under_client_ca_only_a_certificate_of_that_ca_gets_in(
    store: Path, authority: Authority, server: Issued, tmp_path: Path
) -> None:
    reader = authority.client("reader-a")
    intruder = Authority(tmp_path / "other", "another CA").client("intruder")
    tls = ("--tls-cert", str(server.cert), "--tls-key", str(server.key))
    with serving("--store", str(store), *tls, "--client-ca", str(authority.ca)) as served:
        url = served.url.replace("127.0.0.1", "localhost") + "/"

        def context(client: Issued | None) -> ssl.SSLContext:
            made = ssl.create_default_context(cafile=str(authority.ca))
            if client is not None:
                made.load_cert_chain(client.cert, client.key)
            return made

        assert _get(url, context(reader)) == 200
        for client in (None, intruder):
            with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
                _get(url, context(client))
        log = served.stderr()
    assert "serve refused a connection: the client showed no certificate (--client-ca)" in log
    assert "serve refused a connection: the client's certificate is not signed by" in log


def test_listening_beyond_this_machine_without_tls_is_warned_about(
    store: Path, server: Issued
) -> None:
    with serving("--store", str(store), "--host", "0.0.0.0") as served:
        _get(served.url + "/", None)
        assert "listening on 0.0.0.0 without TLS" in served.stderr()
    tls = ("--tls-cert", str(server.cert), "--tls-key", str(server.key))
    with serving("--store", str(store), "--host", "0.0.0.0", *tls) as served:
        assert "without TLS" not in served.stderr()
