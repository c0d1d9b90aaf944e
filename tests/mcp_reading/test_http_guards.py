"""What a request to ``otel-prov mcp --http`` passes before a tool runs, and what the server
does under load and abuse: the Host and Origin checks the MCP specification asks of a
local server, the bearer token, TLS and mutual TLS (a tenant's client certificate), at
most N calls at once, a client that goes away mid-call, a huge or endless query."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.certificates import Authority, Issued
from tests.cli import run_cli
from tests.mcp_reading.client import http_session
from tests.mcp_reading.raw import RawSession
from tests.mcp_reading.store import FAILED, TOKENS, Stored, build_store
from tests.serving import Served, serving

TOKEN = "the-readers-token-1234"
ENDLESS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
"""A query no store answers in seconds here: every triple thrice over."""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return build_store(tmp_path_factory.mktemp("mcp-guards"))


def _mcp(stored: Stored, *args: str) -> contextlib.AbstractContextManager[Served]:
    return serving("--store", str(stored.store), *args, command=("mcp", "--http", "127.0.0.1:0"))


@pytest.fixture(scope="module")
def open_server(stored: Stored) -> Iterator[Served]:
    """No token (loopback), one call at a time, a short time limit for queries."""
    with _mcp(stored, "--max-calls", "1", "--query-timeout", "3",
              "--allowed-origin", "https://app.example") as served:  # fmt: skip
        yield served


def _port(served: Served) -> int:
    return int(served.url.rsplit(":", 1)[1].split("/")[0])


def test_a_host_that_does_not_name_the_server_is_refused(open_server: Served) -> None:
    port = _port(open_server)
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example"):
        refused = RawSession(open_server.url).initialize(host=host)
        assert refused.status_code == 421, (host, refused.text)
        assert "DNS rebinding" in refused.text
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert RawSession(open_server.url).initialize(host=host).status_code == 200, host


def test_a_page_of_another_origin_is_refused_on_every_request(open_server: Served) -> None:
    port = _port(open_server)
    for origin in ("http://evil.example", "null", f"http://localhost:{port + 1}"):
        refused = RawSession(open_server.url).initialize(origin=origin)
        assert refused.status_code == 403, (origin, refused.text)
        stream = requests.get(
            open_server.url,
            headers={"origin": origin, "accept": "text/event-stream"},
            timeout=30,
        )
        assert stream.status_code == 403, origin
    # The browser says the page is another site's: refused whatever the Origin says.
    faked = RawSession(open_server.url).initialize(
        origin=f"http://127.0.0.1:{port}", **{"sec-fetch-site": "cross-site"}
    )
    assert faked.status_code == 403
    for origin in (f"http://127.0.0.1:{port}", "https://app.example", "HTTPS://APP.EXAMPLE/"):
        allowed = RawSession(open_server.url).initialize(origin=origin)
        assert allowed.status_code == 200, (origin, allowed.text)


def test_the_token_file_lets_in_its_token_only(stored: Stored, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with _mcp(stored, "--token-file", str(token_file)) as served:
        assert RawSession(served.url).initialize().status_code == 401
        wrong = RawSession(served.url, {"Authorization": "Bearer nope"}).initialize()
        assert wrong.status_code == 401
        with http_session(served.url, token=TOKEN) as client:
            runs = client.ok("list_runs")["runs"]
            assert FAILED in {run["trace_id"] for run in runs}
        assert TOKEN not in served.stderr() and "nope" not in served.stderr()


def test_at_most_n_calls_at_once_the_next_is_told_to_come_back(open_server: Served) -> None:
    slow = RawSession(open_server.url)
    assert slow.initialize().status_code == 200
    answers: list[dict] = []
    running = threading.Thread(
        target=lambda: answers.append(slow.result("sparql", {"query": ENDLESS}))
    )
    running.start()
    time.sleep(1.0)  # the endless query holds the one place
    other = RawSession(open_server.url)
    assert other.initialize().status_code == 200
    busy = other.result("list_runs", {})
    assert busy["isError"] is True
    assert "1 calls are running, the most this server runs at once" in busy["content"][0]["text"]
    running.join(60)
    (stopped,) = answers
    assert stopped["isError"] is True
    assert "ran past 3 s and was stopped" in stopped["content"][0]["text"]
    assert other.result("list_runs", {})["isError"] is False  # the place is free again


def test_a_client_that_goes_away_mid_call_leaves_the_server_answering(
    open_server: Served,
) -> None:
    session = RawSession(open_server.url)
    assert session.initialize().status_code == 200
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {"name": "sparql", "arguments": {"query": ENDLESS}},
        }
    ).encode()
    port = _port(open_server)
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n"
            b"Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s"
            % (port, (session.session_id or "").encode(), len(body), body)
        )
        time.sleep(0.5)
    # Gone; once its query has run out of time (3 s, once its process has started), the
    # server answers as before.
    after = RawSession(open_server.url)
    assert after.initialize().status_code == 200
    deadline = time.monotonic() + 60
    while after.result("list_runs", {})["isError"]:  # the abandoned call holds the place
        assert time.monotonic() < deadline, "the abandoned call never gave its place back"
        time.sleep(0.5)
    assert open_server.process.poll() is None
    assert "Traceback" not in open_server.stderr()


def test_a_huge_answer_comes_a_page_at_a_time_and_costs_a_page(open_server: Served) -> None:
    session = RawSession(open_server.url)
    assert session.initialize().status_code == 200
    started = time.monotonic()
    page = session.result("sparql", {"query": "SELECT ?a ?c WHERE { ?a ?b ?c . ?d ?e ?f }"})
    assert time.monotonic() - started < 3  # hundreds of thousands of rows, one page read
    data = page["structuredContent"]
    assert page["isError"] is False and len(data["rows"]) == 100 and data["next_cursor"]
    following = session.result(
        "sparql",
        {"query": "SELECT ?a ?c WHERE { ?a ?b ?c . ?d ?e ?f }", "cursor": data["next_cursor"]},
    )
    assert len(following["structuredContent"]["rows"]) == 100
    # Long texts cut to a size a model can take, saying so.
    long = session.result(
        "sparql",
        {"query": 'SELECT ?t WHERE { VALUES ?n { 1 2 3 4 5 6 7 8 9 10 11 12 } '
                  'BIND(CONCAT(STR(?n), REPLACE(STR(?n), ".", "x" )) AS ?u) '
                  'BIND(CONCAT(?u, SUBSTR(STRBEFORE(STR(<urn:x>), "y"), 1)) AS ?v) '
                  'BIND(REPLACE(?v, "^(.*)$", "$1$1$1$1$1$1$1$1$1$1") AS ?w) '
                  'BIND(REPLACE(?w, "^(.*)$", "$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1") AS ?y) '
                  'BIND(REPLACE(?y, "^(.*)$", "$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1'
                  '$1$1$1$1$1$1") AS ?t) }', "limit": 12},
    )  # fmt: skip
    rows = long["structuredContent"]["rows"]
    text = json.dumps(long["structuredContent"])
    assert len(text) <= 40_000 and "more characters]" in rows[0]["t"]
    assert "cut" in long["structuredContent"]


def test_tls_and_a_tenants_client_certificate(stored: Stored, tmp_path: Path) -> None:
    authority = Authority(tmp_path / "ca")
    server: Issued = authority.server()
    team_a = authority.client("team-a")
    intruder = Authority(tmp_path / "other", "another CA").client("intruder")
    tenants = tmp_path / "tenants.json"
    tenants.write_text(
        json.dumps(
            {
                "tenants": {
                    "team-a": {"tokens": [TOKENS["team-a"]], "subjects": ["CN=team-a"]},
                    "team-b": {"tokens": [TOKENS["team-b"]]},
                }
            }
        )
    )
    with _mcp(
        stored, "--tls-cert", str(server.cert), "--tls-key", str(server.key),
        "--client-ca", str(authority.ca), "--tenants", str(tenants),
    ) as served:  # fmt: skip
        assert served.url.startswith("https://127.0.0.1:")
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.post(served.url.replace("https://", "http://"), timeout=10)

        def context(client: Issued | None) -> ssl.SSLContext:
            made = ssl.create_default_context(cafile=str(authority.ca))
            if client is not None:
                made.load_cert_chain(str(client.cert), str(client.key))
            return made

        # The certificate of team-a reads team-a, without a token.
        with http_session(served.url, tls=context(team_a)) as client:
            (run,) = client.ok("list_runs")["runs"]
            assert run["trace_id"] == stored.team_a
        # A token decides over the certificate: team-b's token reads team-b.
        with http_session(served.url, token=TOKENS["team-b"], tls=context(team_a)) as client:
            assert client.ok("list_runs")["runs"][0]["agent"] == "keeper-b"
        for refused in (None, intruder):
            # Refused in the handshake (TLS 1.3: the client may see the connection close).
            with pytest.raises(requests.exceptions.ConnectionError):
                requests.post(
                    served.url,
                    json={},
                    verify=str(authority.ca),
                    cert=None if refused is None else (str(refused.cert), str(refused.key)),
                    timeout=10,
                )
        assert "mcp refused a connection" in served.stderr()


def test_flags_that_secure_http_need_http_and_the_rest_is_checked(
    stored: Stored, tmp_path: Path
) -> None:
    store = ("--store", str(stored.store))
    token = tmp_path / "token"
    token.write_text(TOKEN)
    for args, said in (
        (("--token-file", str(token)), "--token-file secure the HTTP server: give --http"),
        (("--tenants", str(stored.tenants)), "--tenants secure the HTTP server"),
        (("--allowed-origin", "https://x.example"), "--allowed-origin secure the HTTP server"),
        (("--http", "127.0.0.1:0", "--tenants", str(stored.tenants), "--tenant", "team-a"),
         "no --tenant"),
        (("--http", "127.0.0.1:0", "--token-file", str(tmp_path / "none")), "cannot read"),
        (("--http", "nowhere"), "expected HOST:PORT"),
        (("--http", "127.0.0.1:99999"), "port"),
    ):  # fmt: skip
        done = run_cli("mcp", *store, *args)
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
        assert done.stdout == ""


def test_listening_beyond_this_machine_without_a_token_or_tls_is_warned_about(
    stored: Stored,
) -> None:
    with serving(
        "--store", str(stored.store), command=("mcp", "--http", "0.0.0.0:0")
    ) as served:  # fmt: skip
        said = served.stderr()
        assert "anyone who can reach it reads all the provenance" in said
        assert "without TLS" in said
        port = _port(served)
        assert RawSession(f"http://127.0.0.1:{port}/mcp").initialize().status_code == 200
