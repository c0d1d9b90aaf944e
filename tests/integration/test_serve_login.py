"""``otel-prov serve --token-file`` and ``--trusted-proxy-header``: no page or endpoint
answers a reader who has not authenticated.  A real Chromium logs in through the form
(over TLS, the cookie being ``Secure``); scripts send the bearer token."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from tests.browser import chromium
from tests.certificates import Authority, Issued
from tests.cli import run_cli, write_demo_store
from tests.serving import serving

pytestmark = pytest.mark.integration

SECRET = "reader-s3cr3t-token"
QUERY = "SELECT ?tool WHERE { ?c oprov:toolName ?tool } ORDER BY ?tool"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_store(tmp_path_factory.mktemp("login"))


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text(SECRET + "\n")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Issued:
    return Authority(tmp_path_factory.mktemp("ca")).server()


@pytest.fixture(scope="module")
def browser(server: Issued) -> Iterator[webdriver.Chrome]:
    with chromium(f"--ignore-certificate-errors-spki-list={server.spki_sha256()}") as driver:
        yield driver


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _ask(
    url: str, headers: dict[str, str] | None = None, data: bytes | None = None
) -> tuple[int, dict[str, str], str]:
    opener = urllib.request.build_opener(_NoRedirect)
    sent = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(sent, timeout=30) as answer:
            return answer.status, dict(answer.headers.items()), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers.items()), exc.read().decode()


def test_every_page_and_endpoint_needs_the_token_and_it_is_never_logged(
    store: Path, token_file: Path
) -> None:
    with serving("--store", str(store), "--token-file", str(token_file)) as served:
        bearer = {"Authorization": f"Bearer {SECRET}"}
        query = urllib.parse.urlencode({"query": QUERY, "format": "json"}).encode()
        for path in ("/", "/sparql", "/diff", "/session?id=x", "/static/app.js"):
            status, headers, _ = _ask(served.url + path)
            assert status == 401 and headers["www-authenticate"].startswith("Bearer"), path
            assert _ask(served.url + path, {"Authorization": "Bearer wrong"})[0] == 401
        assert _ask(served.url + "/sparql", data=query)[0] == 401
        status, _, body = _ask(served.url + "/sparql", bearer, query)
        assert status == 200 and "calculator" in body
        assert _ask(served.url + "/", bearer)[0] == 200
        status, headers, _ = _ask(served.url + "/diff?a=1", {"Accept": "text/html"})
        assert status == 303 and headers["location"] == "/login?next=%2Fdiff%3Fa%3D1"
        wrong = urllib.parse.urlencode({"token": "guess", "next": "/"}).encode()
        assert _ask(served.url + "/login", data=wrong)[0] == 401
        right = urllib.parse.urlencode({"token": SECRET, "next": "//evil.example/"}).encode()
        status, headers, _ = _ask(served.url + "/login", data=right)
        assert status == 303 and headers["location"] == "/"  # never to another site
        cookie = headers["set-cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie and SECRET not in cookie
        assert _ask(served.url + "/", {"Cookie": cookie.split(";")[0]})[0] == 200
        assert _ask(served.url + "/", {"Cookie": "otel_prov_session=forged"})[0] == 401
        log = served.stderr()
    assert "a login with a wrong token" in log
    assert SECRET not in log and "guess" not in log


def test_chromium_logs_in_through_the_form_over_tls_and_reads_the_runs(
    store: Path, token_file: Path, server: Issued, browser: webdriver.Chrome
) -> None:
    tls = ("--tls-cert", str(server.cert), "--tls-key", str(server.key))
    with serving("--store", str(store), "--token-file", str(token_file), *tls) as served:
        url = served.url.replace("127.0.0.1", "localhost")
        browser.get(url + "/sparql")
        assert browser.current_url.startswith(url + "/login?next=")
        browser.find_element(By.NAME, "token").send_keys(SECRET)
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 60).until(lambda d: d.current_url == url + "/sparql")
        (cookie,) = browser.get_cookies()
        assert cookie["secure"] and cookie["httpOnly"] and SECRET not in cookie["value"]
        assert browser.execute_script("return document.cookie") == ""  # HttpOnly
        browser.find_element(By.NAME, "query").clear()  # it starts with a recipe
        browser.find_element(By.NAME, "query").send_keys(QUERY)
        browser.find_element(By.CSS_SELECTOR, 'button[value="html"]').click()
        WebDriverWait(browser, 60).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "table.results td")
        )
        cells = browser.find_elements(By.CSS_SELECTOR, "table.results td")
        assert "calculator" in [c.text for c in cells]
        browser.get(url + "/")
        assert "Paris right now" in browser.page_source
        assert SECRET not in served.stderr()


def test_behind_an_authenticating_proxy_a_request_without_its_header_is_refused(
    store: Path,
) -> None:
    with serving("--store", str(store), "--trusted-proxy-header", "X-Forwarded-User") as served:
        status, _, body = _ask(served.url + "/")
        assert status == 401 and "no X-Forwarded-User header" in body
        assert _ask(served.url + "/", {"X-Forwarded-User": "alice@example.org"})[0] == 200


def test_token_file_and_proxy_header_are_one_or_the_other(store: Path, token_file: Path) -> None:
    done = run_cli(
        "serve", "--store", str(store), "--token-file", str(token_file),
        "--trusted-proxy-header", "X-User",
    )  # fmt: skip
    assert done.returncode == 2 and "not allowed with argument" in done.stderr
