"""Tenants end to end: ``otel-prov receive --tenants`` fed by the SDK's OTLP exporters with
each team's token, then every read path as each team's reader (``sessions``, ``show``,
``why``, ``diff``, ``summary``, ``verify`` and ``query`` with ``--tenant``; ``serve
--tenants`` with the team's token, its pages and its SPARQL box), hostile queries
included.  A reader sees its own tenant's runs and nothing of the other's."""

from __future__ import annotations

import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.cli import run_cli
from tests.receiver import Receiver, Receivers, run_agent
from tests.serving import Served, serving
from tests.tenant_queries import naming, reading
from tests.test_otlp_proto import GOOD
from tests.test_receive import post, request
from tests.waiting import until

TOKENS = {"team-a": "token-of-team-a", "team-b": "token-of-team-b", "audit": "token-of-audit"}
METRICS_TOKEN = "token-of-the-scraper"
GRAPH = "urn:otel-prov:graph"
SERVICE = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"


def _tenants_file(folder: Path) -> Path:
    path = folder / "tenants.json"
    tenants = {
        "team-a": {"tokens": [TOKENS["team-a"]]},
        "team-b": {"tokens": [TOKENS["team-b"]], "users": ["bob@example.org"]},
        "audit": {"tokens": [TOKENS["audit"]], "reads": ["team-a", "team-b"]},
    }
    path.write_text(json.dumps({"tenants": tenants}))
    return path


def _labelled(receiver: Receiver) -> dict[str, float]:
    sent = urllib.request.Request(
        f"{receiver.http}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    with urllib.request.urlopen(sent, timeout=10) as answer:
        text = answer.read().decode()
    return {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in text.splitlines())
        if not name.startswith("#")
    }


def _session_span(marker: str) -> Span:
    """One agent session of the trace of ``GOOD``, whoever sends it."""
    span = Span()
    span.CopyFrom(GOOD)
    span.attributes.add(key="gen_ai.operation.name").value.string_value = "invoke_agent"
    span.attributes.add(key="otel_prov.question").value.string_value = marker
    # What a span might say to reach another tenant's graph: nothing reads it so.
    for key in ("otel_prov.tenant", "otel_prov.graph", "tenant"):
        span.attributes.add(key=key).value.string_value = "team-b"
    return span


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, dict]]:
    """A store the receiver filled for two teams, signing what it seals: the store, the
    tenants file, and the trace ids each team sent."""
    folder = tmp_path_factory.mktemp("tenants")
    tenants = _tenants_file(folder)
    store = folder / "store"
    assert run_cli("keygen", "--out", str(folder / "keys")).returncode == 0
    receivers = Receivers(folder)
    try:
        receiver = receivers.start(
            "--store", str(store), "--trace-idle", "0.5", "--tenants", str(tenants),
            env={"OTEL_PROV_SIGNING_KEY": str(folder / "keys" / "signing.key"),
                 "OTEL_PROV_RECEIVER_METRICS_TOKEN": METRICS_TOKEN},
        )  # fmt: skip
        sent = {
            "team-a": run_agent(
                "--protocol", "http", "--endpoint", receiver.http, "--sessions", "2",
                env={"OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{TOKENS['team-a']}"},
            )["traces"],
            "team-b": run_agent(
                "--protocol", "grpc", "--endpoint", receiver.grpc, "--service", "svc-b",
                env={"OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{TOKENS['team-b']}"},
            )["traces"],
        }  # fmt: skip
        # One trace id, sent by both teams: two runs, one in each graph, never merged.
        for team in ("team-a", "team-b"):
            status, _, _ = post(
                receiver,
                request(_session_span(f"asked-by-{team}")),
                Authorization=f"Bearer {TOKENS[team]}",
            )
            assert status == 200
        assert post(receiver, request(GOOD))[0] == 401
        assert post(receiver, request(GOOD), Authorization="Bearer nobody")[0] == 401
        until(
            lambda: (
                _labelled(receiver).get(
                    'otel_prov_receiver_sessions_sealed_total{tenant="team-b"}', 0
                )
                >= 2
                and _labelled(receiver).get(
                    'otel_prov_receiver_sessions_sealed_total{tenant="team-a"}', 0
                )
                >= 3
            ),
            "both teams' sessions sealed",
            timeout=60,
        )
        metrics = _labelled(receiver)
        assert metrics['otel_prov_receiver_spans_received_total{tenant="team-b"}'] == 9 + 1
        assert metrics['otel_prov_receiver_spans_received_total{tenant="team-a"}'] == 18 + 1
        assert metrics['otel_prov_receiver_spans_received_total{tenant="audit"}'] == 0
        assert receiver.stop() == 0
        yield store, tenants, sent
    finally:
        receivers.close()


def _cli(store: Path, tenant: str | None, *args: str) -> tuple[int, str]:
    chosen = ("--tenant", tenant) if tenant else ()
    done = run_cli(*args[:1], "--store", str(store), *chosen, *args[1:])
    return done.returncode, done.stdout + done.stderr


def _trace_ids(store: Path, tenant: str | None) -> set[str]:
    code, out = _cli(store, tenant, "sessions", "--format", "json", "--limit", "100")
    return {row["trace_id"] for row in json.loads(out)} if code == 0 else set()


def _hex(trace: int | str) -> str:
    return trace if isinstance(trace, str) else f"{trace:032x}"


def test_each_team_reads_its_own_runs_through_every_command(stored: tuple) -> None:
    store, _, sent = stored
    good = GOOD.trace_id.hex()
    a = {_hex(t) for t in sent["team-a"]} | {good}
    b = {_hex(t) for t in sent["team-b"]} | {good}
    assert _trace_ids(store, "team-a") == a
    assert _trace_ids(store, "team-b") == b
    assert _trace_ids(store, None) == set()  # no run outside the tenants' graphs
    only_b = _hex(sent["team-b"][0])
    for command in ("show", "why", "summary"):
        code, out = _cli(store, "team-a", command, only_b)
        assert code == 1, (command, out)
        code, _ = _cli(store, "team-b", command, only_b)
        assert code == 0, command
    only_a = _hex(sent["team-a"][0])
    assert _cli(store, "team-a", "diff", only_a, only_b)[0] == 1
    assert _cli(store, "team-a", "diff", only_a, _hex(sent["team-a"][1]))[0] in (0, 1)
    # The shared trace id: each team's run says what that team asked.
    code, out = _cli(store, "team-a", "show", good)
    assert code == 0 and "asked-by-team-a" in out and "asked-by-team-b" not in out
    trusted = str(store.parent / "keys" / "signing.pub")
    for tenant in ("team-a", "team-b"):
        # Each tenant's receiver keeps a chain of its own, in its graph, to the checkpoint
        # it left at shutdown: complete and signed when read from that graph alone.
        code, out = _cli(store, tenant, "verify", "--all", "--trust", trusted)
        assert code == 0, out
        code, out = _cli(store, tenant, "query", "--format", "json",
                         "SELECT (COUNT(*) AS ?n) WHERE { ?c a oprov:Checkpoint }")  # fmt: skip
        assert code == 0 and json.loads(out)[0]["n"] >= 1, out


B = f"{GRAPH}/tenants/team-b"


def test_queries_of_a_team_cannot_get_out_of_its_graph(stored: tuple) -> None:
    store, _, sent = stored
    only_b = _hex(sent["team-b"][0])
    for name, text in reading(B, only_b).items():
        code, out = _cli(store, "team-a", "query", "--format", "json", text)
        assert code in (0, 1), (name, out)
        assert "asked-by-team-b" not in out and only_b not in out, name
        assert "/tenants/team-b" not in out, name
    for name, text in naming(B).items():
        code, out = _cli(store, "team-a", "query", "--format", "json", text)
        assert code == 2 and "is refused" in out, (name, out)
    code, out = _cli(store, "team-a", "query", "--format", "json", reading(B, "")["graph ?g"])
    assert code == 0 and "asked-by-team-a" in out
    code, out = _cli(
        store, "team-a", "query", "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }"
    )
    assert code == 2 and "SERVICE" in out


def _get(served: Served, path: str, token: str | None, **params: str) -> tuple[int, str]:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    sent = urllib.request.Request(served.url + path + query, headers=headers)
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _sparql(served: Served, token: str, text: str, **params: str) -> tuple[int, str]:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    sent = urllib.request.Request(
        served.url + "/sparql" + query,
        data=urllib.parse.urlencode({"query": text, "format": "json"}).encode(),
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(sent, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_serve_shows_each_reader_its_tenants_only(stored: tuple) -> None:
    store, tenants, sent = stored
    only_a, only_b = _hex(sent["team-a"][0]), _hex(sent["team-b"][0])
    with serving("--store", str(store), "--tenants", str(tenants)) as served:
        assert _get(served, "/", None)[0] == 401
        status, page = _get(served, "/", TOKENS["team-a"])
        assert status == 200 and "asked-by-team-a" in page and "asked-by-team-b" not in page
        # What the list polls to follow the store holds its own runs only.
        status, state = _get(served, "/sessions/state", TOKENS["team-a"])
        runs = [run[0] for run in json.loads(state)["runs"]]
        assert status == 200 and any(only_a in run for run in runs)
        assert not any(only_b in run for run in runs)
        assert _get(served, "/session", TOKENS["team-a"], id=only_a)[0] == 200
        assert _get(served, "/session", TOKENS["team-a"], id=only_b)[0] == 404
        assert _get(served, "/session.ttl", TOKENS["team-a"], id=only_b)[0] == 404
        status, page = _get(served, "/diff", TOKENS["team-a"], a=only_a, b=only_b)
        assert status == 404 and "asked-by-team-b" not in page
        assert _get(served, "/", TOKENS["team-a"], tenant="team-b")[0] == 403
        for path in ("/session.jsonld", "/session/state"):
            status, answer = _get(served, path, TOKENS["team-a"], id=only_b)
            assert status == 404 and "asked-by-team-b" not in answer, path
        for path in PAGES:  # another tenant, by name: refused on every page
            status, answer = _get(served, path, TOKENS["team-a"], id=only_b, tenant="team-b")
            assert status == 403 and "asked-by-team-b" not in answer, path
        status, answer = _sparql(
            served, TOKENS["team-a"], reading(B, "")["default"], tenant="team-b"
        )
        assert status == 403 and "asked-by-team-b" not in answer
        _sparql_confined(served, TOKENS["team-a"], only_b)
        status, _ = _sparql(
            served,
            TOKENS["team-a"],
            "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
        )
        assert status == 400
        # The auditor reads both, one at a time.
        status, page = _get(served, "/", TOKENS["audit"], tenant="team-b")
        assert status == 200 and "asked-by-team-b" in page and "asked-by-team-a" not in page
        # Its links and forms keep the tenant it reads: none falls back to team-a's.
        links = [
            html.unescape(link)
            for link in re.findall(r'href="(/[^"]*)"', page)
            if not link.startswith("/static/")
        ]
        assert links and all("tenant=team-b" in link for link in links), links
        assert '<input type="hidden" name="tenant" value="team-b">' in page
        found = next(link for link in links if link.startswith("/session?"))
        status, page = _get(served, found, TOKENS["audit"])  # team-b's run: 404 in team-a's
        assert status == 200, found
        assert 'href="/session.ttl?id=' in page and "tenant=team-b" in page
        status, page = _get(served, "/sparql", TOKENS["audit"], tenant="team-b")
        assert 'action="/sparql?tenant=team-b"' in page
        status, answer = _sparql(
            served, TOKENS["audit"], reading(B, "")["default"], tenant="team-a"
        )
        assert "asked-by-team-a" in answer and "asked-by-team-b" not in answer
        log = served.stderr()
    assert not any(token in log for token in TOKENS.values())


PAGES = (
    "/", "/sessions/state", "/session", "/session/state", "/session.ttl", "/session.jsonld",
    "/diff", "/sparql",
)  # fmt: skip


def _sparql_confined(served: Served, token: str, only_b: str) -> None:
    """The SPARQL page answers team-a's reader nothing of team-b's graph, nor of any
    other graph (the store holds no run outside the tenants' graphs): each hostile query
    runs on team-a's graph alone, and one naming team-b's graph is refused."""
    for name, text in reading(B, only_b).items():
        status, answer = _sparql(served, token, text)
        assert status == 200, (name, answer)
        assert "asked-by-team-b" not in answer and only_b not in answer, name
        assert "/tenants/team-b" not in answer, name
    for name, text in naming(B).items():
        status, answer = _sparql(served, token, text)
        assert status == 400 and "is refused" in answer, (name, answer)
        assert "asked-by-team-b" not in answer, name
    status, answer = _sparql(served, token, reading(B, "")["graph ?g"])
    graphs = {row["g"] for row in json.loads(answer)}
    assert status == 200 and graphs == {f"{GRAPH}/tenants/team-a"}, answer


def test_serve_for_one_tenant_confines_its_queries_as_tenants_does(
    stored: tuple, tmp_path: Path
) -> None:
    """``serve --tenant team-a --token-file F``, as the two teams' deployment runs it: its
    pages and its SPARQL page read team-a's graph alone, as a reader of ``--tenants``."""
    store, _, sent = stored
    only_a, only_b = _hex(sent["team-a"][0]), _hex(sent["team-b"][0])
    token = tmp_path / "token"
    token.write_text(TOKENS["team-a"])
    with serving("--store", str(store), "--tenant", "team-a", "--token-file", str(token)) as served:
        status, page = _get(served, "/", TOKENS["team-a"])
        assert status == 200 and "asked-by-team-a" in page and "asked-by-team-b" not in page
        # What the list polls to follow the store holds its own runs only.
        status, state = _get(served, "/sessions/state", TOKENS["team-a"])
        runs = [run[0] for run in json.loads(state)["runs"]]
        assert status == 200 and any(only_a in run for run in runs)
        assert not any(only_b in run for run in runs)
        assert _get(served, "/session", TOKENS["team-a"], id=only_a)[0] == 200
        assert _get(served, "/session", TOKENS["team-a"], id=only_b)[0] == 404
        for path in ("/session.ttl", "/session.jsonld", "/session/state"):
            status, answer = _get(served, path, TOKENS["team-a"], id=only_b)
            assert status == 404 and "asked-by-team-b" not in answer, path
        # No tenants file: ?tenant= names nothing, the reader's graph stays team-a's.
        status, page = _get(served, "/", TOKENS["team-a"], tenant="team-b")
        assert status == 200 and "asked-by-team-b" not in page and "asked-by-team-a" in page
        status, answer = _sparql(
            served, TOKENS["team-a"], reading(B, "")["graph ?g"], tenant="team-b"
        )
        assert status == 200 and {row["g"] for row in json.loads(answer)} == {
            f"{GRAPH}/tenants/team-a"
        }
        _sparql_confined(served, TOKENS["team-a"], only_b)


def test_behind_a_proxy_the_user_picks_the_tenant(stored: tuple) -> None:
    store, tenants, _ = stored
    with serving(
        "--store", str(store), "--tenants", str(tenants), "--trusted-proxy-header", "X-User"
    ) as served:
        sent = urllib.request.Request(served.url + "/", headers={"X-User": "bob@example.org"})
        with urllib.request.urlopen(sent, timeout=60) as answer:
            page = answer.read().decode()
        assert "asked-by-team-b" in page and "asked-by-team-a" not in page
        sent = urllib.request.Request(served.url + "/", headers={"X-User": "mallory"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(sent, timeout=60)
        assert refused.value.code == 403


def test_in_process_configure_writes_into_the_tenants_graph(tmp_path: Path) -> None:
    code = (
        "import otel_prov\n"
        f"handle = otel_prov.configure(store={str(tmp_path / 'store')!r}, tenant='team-a', "
        "set_global=False)\n"
        "tracer = handle.tracer_provider.get_tracer('t')\n"
        "with tracer.start_as_current_span('invoke_agent x', attributes={"
        "'gen_ai.operation.name': 'invoke_agent', 'otel_prov.question': 'in-process'}):\n"
        "    pass\n"
        "handle.shutdown()\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    store = tmp_path / "store"
    assert len(_trace_ids(store, "team-a")) == 1
    assert _trace_ids(store, None) == set()
    assert re.search("in-process", _cli(store, "team-a", "sessions")[1])
