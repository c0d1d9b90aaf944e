"""``otel-prov serve`` over a real embedded store, asked over HTTP as a browser asks.

Each test starts the command as a user does (a process on a free port) over the demo's
store, or over a store of generated runs for paging.
"""

from __future__ import annotations

import html
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyoxigraph
import pytest
import requests

from benchmarks.bench_reads import build_store
from tests.cli import run_cli, write_demo_store
from tests.serving import TARGET_BODY, Served, counting_target, serving

JAEGER = "http://jaeger.local/trace/{trace_id}"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_store(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def served(demo_store: Path) -> Iterator[Served]:
    with serving(
        "--store", str(demo_store), "--query-timeout", "2",
        env={"OTEL_PROV_JAEGER_URL": JAEGER},
    ) as server:  # fmt: skip
        yield server


def _session_links(html: str) -> list[str]:
    return [urllib.parse.unquote(m) for m in re.findall(r'href="/session\?id=([^"]+)"', html)]


def test_it_prints_its_url_and_every_answer_carries_the_security_headers(served: Served) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", served.url)
    for path in (
        "/",
        "/sparql",
        "/diff",
        "/nothing-here",
        "/static/app.js",
        "/static/dagre.min.js",
    ):
        answer = requests.get(served.url + path, timeout=30)
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy, path
        assert "unsafe-inline" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert "warning" not in served.stderr()


def test_the_list_links_the_demo_run_and_its_page_shows_the_failure(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = requests.get(served.url + "/", timeout=30)
    assert listing.status_code == 200
    assert "What is the temperature in Paris right now, in Fahrenheit?" in listing.text
    # The demo carried on past its timed-out call: ok, its failed call counted beside it.
    assert 'class="status-ok"' in listing.text
    # Its service, beside its agent; a time a person reads, the exact one on hover; the
    # failed call marked.
    (row,) = re.findall(r"<tbody>\n<tr>(.*?)</tr>", listing.text, re.S)
    cells = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    # A box to pick it for the diff, when it started, how long it took, its agent, its service.
    assert 'type="checkbox" name="run"' in row and cells[0] == ""
    assert cells[3:5] == ["weather-assistant", "otel-prov-demo"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", cells[1]), cells[1]
    assert re.fullmatch(r"\d+(\.\d+)? (µs|ms|s)", cells[2]), cells[2]
    assert "<th>took</th>" in listing.text
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="[^"]+Z">', row)
    assert '<td class="number failed-count">1</td>' in row
    assert "<th>service</th>" in listing.text
    (run,) = _session_links(listing.text)
    page = requests.get(served.url + "/session", params={"id": run}, timeout=30)
    assert page.status_code == 200
    assert "FAILED" in page.text and "TimeoutError" in page.text
    assert 'class="timeline"' in page.text
    assert 'href="http://jaeger.local/trace/' in page.text
    assert page.text.count('class="bar ') == 1 + 4 + 4 + 3  # session, steps, model, tool calls
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", JAEGER)
    standalone = run_cli("show", run, "--store", str(served_store(served)), "--format", "html")
    # The same page: the file lacks only the navigation, the downloads, the script and
    # the box the script refreshes while a run is still going on.
    served_body = re.sub(r'<p class="downloads">.*?</p>\n', "", page.text.split("<nav>")[1])
    served_body = re.sub(
        r'<div id="runs"[^>]*>(.*)</div></body>', r"\1</body>", served_body, flags=re.S
    )
    assert standalone.stdout.split("<body>\n")[1] in served_body


def served_store(served: Served) -> str:
    args = served.process.args
    assert isinstance(args, list)
    return str(args[args.index("--store") + 1])


def test_raw_rdf_downloads_as_turtle_and_json_ld(served: Served) -> None:
    demo = {"id": "demo-conversation"}
    turtle = requests.get(served.url + "/session.ttl", params=demo, timeout=30)
    assert turtle.headers["content-type"].startswith("text/turtle")
    assert "attachment" in turtle.headers["content-disposition"]
    triples = list(pyoxigraph.parse(turtle.content, pyoxigraph.RdfFormat.TURTLE))
    jsonld = requests.get(served.url + "/session.jsonld", params=demo, timeout=30)
    parsed = list(pyoxigraph.parse(jsonld.content, pyoxigraph.RdfFormat.JSON_LD))
    assert len(triples) == len(parsed) > 100
    missing = requests.get(served.url + "/session.ttl", params={"id": "no"}, timeout=30)
    assert missing.status_code == 404


def test_filters_and_search_narrow_the_list_and_bad_values_are_named(served: Served) -> None:
    def runs(**params: str) -> list[str]:
        answer = requests.get(served.url + "/", params=params, timeout=30)
        assert answer.status_code == 200, answer.text
        return _session_links(answer.text)

    assert len(runs(agent="weather-assistant", status="ok", q="FAHRENHEIT")) == 1
    assert runs(agent="someone-else") == []
    assert runs(status="error") == []
    assert runs(q="no such words") == []
    assert len(runs(since="2000-01-01", until="2999-01-01T00:00")) == 1
    assert runs(until="2000-01-01") == []
    for params, named in (
        ({"status": "great"}, "status"),
        ({"since": "yesterday"}, "since"),
        ({"cursor": "not-a-cursor"}, "cursor"),
    ):
        answer = requests.get(served.url + "/", params=params, timeout=30)
        assert answer.status_code == 400 and named in answer.text, params
    assert requests.get(served.url + "/session", timeout=30).status_code == 400
    assert requests.get(served.url + "/session", params={"id": "x"}, timeout=30).status_code == 404


def test_the_app_only_reads(served: Served, demo_store: Path) -> None:
    assert requests.post(served.url + "/", timeout=30).status_code == 405
    assert requests.delete(served.url + "/session?id=x", timeout=30).status_code == 405
    for update in (
        "DROP ALL",
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#>\nCLEAR DEFAULT",
        'INSERT DATA { <urn:a> <urn:b> "c" }',
        "# a comment\nDELETE WHERE { ?s ?p ?o }",
    ):
        answer = requests.post(served.url + "/sparql", data={"query": update}, timeout=30)
        assert answer.status_code == 400, update
        assert "never sent" in answer.text
    assert len(_session_links(requests.get(served.url + "/", timeout=30).text)) == 1


def test_a_query_calling_service_is_refused_and_its_endpoint_gets_no_request(
    served: Served,
) -> None:
    """SERVICE would have the server (or its store) send requests to any host, and show
    what it answered: refused with 400, naming SERVICE, wherever the query puts it."""
    with counting_target() as target:
        for query in (
            f"SELECT * WHERE {{ ?c oprov:toolName ?t . SERVICE <{target.url}> {{ ?s ?p ?o }} }}",
            f"select * {{ {{ select ?s {{ service silent <{target.url}> {{ ?s ?p ?o }} }} }} }}",
            f"SELECT * {{ VALUES ?e {{ <{target.url}> }} ?c oprov:toolName ?t SERVICE ?e {{ }} }}",
        ):
            answer = requests.post(served.url + "/sparql", data={"query": query}, timeout=60)
            assert answer.status_code == 400, (query, answer.text)
            assert "SERVICE" in answer.text and "is refused" in answer.text
            assert TARGET_BODY not in answer.text
        assert target.requests == []


def test_the_query_box_offers_the_recipes_of_the_docs(served: Served) -> None:
    """Each recipe of docs/sparql.md, by its title, the box holding the first; picking
    one (app.js) fills the box: tests/integration/test_serve_browser.py."""
    page = requests.get(served.url + "/sparql", timeout=30).text
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sparql.md").read_text()
    blocks = [block.split("```", 1)[0] for block in docs.split("```sparql\n")[1:]]
    offered = [html.unescape(v) for v in re.findall(r'<option value="([^"]+)"', page, re.S)]
    assert len(blocks) >= 2 and offered == blocks
    (box,) = re.findall(r'<textarea name="query"[^>]*>(.*?)</textarea>', page, re.S)
    assert html.unescape(box) == blocks[0]
    for block in blocks:
        title = block.splitlines()[0].removeprefix("# ")
        assert f">{html.escape(title, quote=False)}</option>" in page
        ran = requests.post(served.url + "/sparql", data={"query": block}, timeout=30)
        assert ran.status_code == 200 and 'class="error-message"' not in ran.text, block


def test_sparql_answers_as_a_table_csv_and_json(served: Served) -> None:
    query = (
        "SELECT ?tool ?status WHERE { ?c oprov:toolName ?tool ; oprov:status ?status } "
        "ORDER BY ?tool ?status"
    )
    page = requests.post(served.url + "/sparql", data={"query": query}, timeout=30)
    assert page.status_code == 200
    assert page.text.count("<tr>") == 1 + 3  # header and three tool calls
    csv = requests.post(served.url + "/sparql", data={"query": query, "format": "csv"}, timeout=30)
    assert csv.text.splitlines() == [
        "tool,status", "calculator,ok", "get_weather,error", "get_weather,ok",
    ]  # fmt: skip
    rows = requests.post(
        served.url + "/sparql", data={"query": query, "format": "json"}, timeout=30
    ).json()
    assert rows[1] == {"tool": "get_weather", "status": "error"}
    counted = requests.post(
        served.url + "/sparql",
        data={"query": "SELECT (COUNT(*) AS ?n) WHERE { ?c a oprov:ToolCall }", "format": "json"},
        timeout=30,
    ).json()
    assert counted == [{"n": 3}]  # a number, not "3"
    bad = requests.post(
        served.url + "/sparql", data={"query": "SELECT ?x WHERE { ?x nope:y ?z }"}, timeout=30
    )
    assert bad.status_code == 400 and "nope:" in bad.text


def test_a_query_runs_by_post_only_and_only_from_a_page_of_this_server(served: Served) -> None:
    """A link or an image anywhere sends a GET; a form or a no-cors fetch on another site
    sends a POST the browser marks as theirs (Sec-Fetch-Site, or Origin)."""
    query = "SELECT ?tool WHERE { ?c oprov:toolName ?tool } ORDER BY ?tool LIMIT 1"
    shown = requests.get(served.url + "/sparql", params={"query": query}, timeout=30)
    assert shown.status_code == 405 and shown.headers["allow"] == "POST"
    assert "Run button" in shown.text and "calculator" not in shown.text
    assert "oprov:toolName" in shown.text  # the form holds it, for the user to run
    ours = served.url
    for headers, status in (
        ({"sec-fetch-site": "cross-site"}, 403),
        ({"sec-fetch-site": "same-site", "origin": ours}, 403),  # another port of this host
        ({"origin": "http://attacker.example"}, 403),
        ({"origin": "null"}, 403),
        ({"origin": ours.replace("127.0.0.1", "localhost")}, 403),
        ({"sec-fetch-site": "same-origin", "origin": ours}, 200),
        ({"sec-fetch-site": "none"}, 200),  # typed by the user
        ({"origin": ours}, 200),  # a browser without Sec-Fetch-Site, on this page
        ({}, 200),  # no browser: curl, a script
    ):
        answer = requests.post(
            served.url + "/sparql", data={"query": query}, headers=headers, timeout=30
        )
        assert answer.status_code == status, (headers, answer.text)
        assert ("calculator" in answer.text) == (status == 200), headers
        if status == 403:
            assert "another site" in answer.text


def test_a_long_query_is_stopped_at_its_time(served: Served) -> None:
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    answer = requests.post(served.url + "/sparql", data={"query": endless}, timeout=60)
    assert answer.status_code == 504
    assert "ran past 2 s and was stopped" in answer.text
    # ...and the server still answers at once
    assert requests.get(served.url + "/", timeout=5).status_code == 200


ENDLESS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


def _query_children(pid: int) -> int:
    """How many query processes the server ``pid`` has running now (read from /proc)."""
    running = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:  # it ended while we looked
            continue
        if int(fields[1]) == pid and b"otel_prov.view._query_process" in cmdline:
            running += 1
    return running


def _flood(server: Served, requests_sent: int) -> tuple[list[requests.Response], int, float]:
    """``requests_sent`` endless queries at once: their answers, the most query processes
    seen at one time, and how long it all took."""
    most, done = 0, threading.Event()

    def watch() -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, _query_children(server.process.pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    begin = time.monotonic()
    try:
        with ThreadPoolExecutor(requests_sent) as pool:
            answers = list(
                pool.map(
                    lambda _: requests.post(
                        server.url + "/sparql", data={"query": ENDLESS}, timeout=120
                    ),
                    range(requests_sent),
                )
            )
    finally:
        done.set()
        watcher.join()
    return answers, most, time.monotonic() - begin


def test_runaway_queries_start_at_most_two_processes_and_the_rest_get_503(
    demo_store: Path,
) -> None:
    """30 runaway queries started 30 query processes at once, each holding a core until
    its time was up.  At most two run (``--max-queries``); the others are told to come
    back (503, Retry-After) at once, and the pages still answer."""
    with serving("--store", str(demo_store), "--query-timeout", "3") as server:
        answers, most, took = _flood(server, 12)
        statuses = sorted(answer.status_code for answer in answers)
        assert most <= 2 and statuses == [503] * 10 + [504] * 2, (most, statuses)
        busy = next(answer for answer in answers if answer.status_code == 503)
        assert busy.headers["retry-after"] == "3" and "--max-queries" in busy.text
        assert took < 60, took
        assert requests.get(server.url + "/", timeout=10).status_code == 200
    with serving("--store", str(demo_store), "--query-timeout", "2", "--max-queries", "1") as one:
        answers, most, _ = _flood(one, 4)
        assert most <= 1 and sorted(a.status_code for a in answers) == [503] * 3 + [504]


def test_two_sessions_side_by_side(served: Served) -> None:
    both = requests.get(
        served.url + "/diff",
        params={"a": "demo-conversation", "b": "demo-conversation"},
        timeout=30,
    )
    assert both.status_code == 200 and both.text.count('<article class="run">') == 2
    missing = requests.get(
        served.url + "/diff", params={"a": "demo-conversation", "b": "x"}, timeout=30
    )
    assert missing.status_code == 404 and "&#39;x&#39;" in missing.text


def test_paging_goes_through_every_run_once(tmp_path: Path) -> None:
    build_store(tmp_path / "store", 120)
    with serving("--store", str(tmp_path / "store")) as server:
        seen: list[str] = []
        url: str | None = server.url + "/"
        while url is not None:
            page = requests.get(url, timeout=30).text
            seen += _session_links(page)
            older = re.search(r'<a href="([^"]+)" rel="next">', page)
            url = server.url + older.group(1).replace("&amp;", "&") if older else None
        assert len(seen) == len(set(seen)) == 120
        first = requests.get(server.url + "/", timeout=30).text
        assert len(_session_links(first)) == 50


def _raw_get(url: str, host: str | None, path: str = "/") -> tuple[int, str]:
    """``GET path`` sent by hand to the server at ``url``, with ``host`` as its Host header
    (none at all for None), as a page whose name was rebound to this address sends it."""
    address = urllib.parse.urlsplit(url)
    assert address.hostname is not None and address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
        header = "" if host is None else f"Host: {host}\r\n"
        version = "HTTP/1.0" if host is None else "HTTP/1.1"
        sock.sendall(f"GET {path} {version}\r\n{header}Connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.decode("utf-8", errors="replace").partition("\r\n\r\n")
    return int(head.split()[1]), body


DEMO_QUESTION = "What is the temperature in Paris right now"


def test_a_host_header_naming_another_host_is_refused(served: Served) -> None:
    """DNS rebinding: a page of attacker.example whose name now resolves to 127.0.0.1
    reaches the server with ``Host: attacker.example``; it must get nothing of the store."""
    port = urllib.parse.urlsplit(served.url).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
        status, body = _raw_get(served.url, host)
        assert status == 200 and DEMO_QUESTION in body, host
    for host in (f"attacker.example:{port}", "attacker.example", f"127.0.0.1.nip.io:{port}"):
        for path in ("/", "/session.ttl?id=demo-conversation", "/sparql"):
            status, body = _raw_get(served.url, host, path)
            assert status == 421, (host, path, status)
            assert "Paris" not in body and "--allowed-host" in body, body
    status, body = _raw_get(served.url, None)
    assert status == 400 and "Paris" not in body


def test_allowed_host_names_another_host_and_a_wildcard_bind_takes_addresses(
    demo_store: Path,
) -> None:
    with serving("--store", str(demo_store), "--allowed-host", "prov.example.org") as server:
        assert _raw_get(server.url, "prov.example.org:8080")[0] == 200
        assert _raw_get(server.url, "PROV.example.org.")[0] == 200
        assert _raw_get(server.url, "attacker.example")[0] == 421
    with serving("--store", str(demo_store), "--host", "0.0.0.0") as server:
        # Every address of the machine is served; an address cannot be rebound, a name can.
        assert _raw_get(server.url, "192.0.2.7:8080")[0] == 200
        assert _raw_get(server.url, "[2001:db8::1]:8080")[0] == 200
        assert _raw_get(server.url, "localhost")[0] == 200
        assert _raw_get(server.url, "attacker.example")[0] == 421


def test_listening_beyond_this_machine_is_warned_about(demo_store: Path) -> None:
    with serving("--store", str(demo_store), "--host", "0.0.0.0") as server:
        assert requests.get(server.url + "/", timeout=30).status_code == 200
        assert "warning: listening on 0.0.0.0" in server.stderr()


def test_a_file_in_place_of_the_store_or_a_bad_port_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "store").write_text("not a store")
    there = run_cli("serve", "--store", str(tmp_path / "store"), "--port", "0")
    assert there.returncode == 2 and "is a file, not a provenance store" in there.stderr
    bad = run_cli("serve", "--port", "70000")
    assert bad.returncode == 2 and "port" in bad.stderr


def test_serve_started_before_its_store_shows_the_runs_once_an_agent_writes_them(
    tmp_path: Path,
) -> None:
    """Issue 45, point 8: ``serve`` failed when the embedded store did not exist yet."""
    store = tmp_path / "not-yet" / "store"
    with serving("--store", str(store)) as server:
        assert f"no store at {store} yet" in server.stderr()
        listing = requests.get(server.url + "/", timeout=30)
        assert listing.status_code == 200 and "No runs yet" in listing.text
        assert str(store) in listing.text and 'data-live="/sessions/state?' in listing.text
        state = requests.get(server.url + "/sessions/state", timeout=30).json()
        assert state == {"follow": True, "waiting": True, "runs": []}
        missing = requests.get(server.url + "/session", params={"id": "x"}, timeout=30)
        assert missing.status_code == 404 and "no runs yet" in missing.text
        assert run_cli("demo", "--store", str(store)).returncode == 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = requests.get(server.url + "/sessions/state", timeout=30).json()
            if state["runs"]:
                break
            time.sleep(0.5)
        assert not state["waiting"] and len(state["runs"]) == 1
        (run,) = _session_links(requests.get(server.url + "/", timeout=30).text)
        assert requests.get(server.url + "/session", params={"id": run}, timeout=30).ok


def test_runs_an_agent_writes_while_it_serves_show_up(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert run_cli("demo", "--store", str(store)).returncode == 0
    with serving("--store", str(store)) as server:
        assert len(_session_links(requests.get(server.url + "/", timeout=30).text)) == 1
        assert run_cli("demo", "--store", str(store)).returncode == 0  # writes beside the reader
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            runs = _session_links(requests.get(server.url + "/", timeout=30).text)
            if len(runs) == 2:
                break
            time.sleep(0.5)
        assert len(runs) == 2
