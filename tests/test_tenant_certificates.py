"""Tenants by client certificate: a tenants file maps a certificate's subject to a tenant
(``"subjects": ["CN=team-a"]``).  Under mutual TLS, ``receive`` puts what a client of
that certificate sends, without any token, into that tenant's graph (the SDK's own OTLP
exporters, over gRPC and HTTP), whatever its spans say; ``serve`` lets that reader in
without a token; a certificate of the right CA that is no tenant's is refused, and the
log says so."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

from otel_prov._tenants import Tenants
from otel_prov._tls import canonical_subject, subject_of
from tests.certificates import Authority
from tests.cli import run_cli
from tests.receiver import Receivers, run_agent
from tests.serving import serving
from tests.test_receive import EXPORT, request
from tests.test_receive_tls import _client_context, _sdk_env
from tests.test_tenants import _session_span


def _tenants(folder: Path) -> Path:
    path = folder / "tenants.json"
    table = {
        "team-a": {"subjects": ["CN=team-a"]},
        "team-b": {"tokens": ["token-of-team-b"], "subjects": ["cn = team-b, O=Example"]},
    }
    path.write_text(json.dumps({"tenants": table}))
    return path


def _trace_ids(store: Path, tenant: str) -> set[str]:
    done = run_cli("sessions", "--store", str(store), "--tenant", tenant, "--format", "json")
    assert done.returncode in (0, 1), done.stderr  # 1: none
    return {row["trace_id"] for row in json.loads(done.stdout)}


def _hex(trace: int | str) -> str:
    return trace if isinstance(trace, str) else f"{trace:032x}"


def test_subjects_are_compared_in_one_spelling() -> None:
    assert canonical_subject("cn = team-b, O=Example") == "CN=team-b,O=Example"
    assert canonical_subject("commonName=a\\,b+OU=x") == canonical_subject("OU=x+CN=a\\2Cb")
    assert canonical_subject("CN=a\\,b") == "CN=a\\,b"
    # Python's getpeercert() lists the RDNs as the certificate has them, root first.
    peer = {"subject": ((("organizationName", "Example"),), (("commonName", "team-b"),))}
    assert subject_of(peer) == "CN=team-b,O=Example"
    tenants = Tenants.of({"team-b": {"subjects": ["CN=team-b,O=Example"]}})
    found = tenants.by_subject("CN=team-b,O=Example")
    assert found is not None and found.name == "team-b"
    assert tenants.by_subject("CN=team-b") is None
    for bad in ("team-b", "CN=", "=x", "CN=a,"):
        with pytest.raises(ValueError, match="subject"):
            Tenants.of({"t": {"subjects": [bad]}})
    with pytest.raises(ValueError, match="another tenant"):
        Tenants.of({"t": {"subjects": ["CN=x"]}, "u": {"subjects": ["cn=x"]}})


def _post(url: str, body: bytes, context: ssl.SSLContext) -> int:
    sent = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    try:
        with urllib.request.urlopen(sent, timeout=30, context=context) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_receive_takes_the_tenant_from_the_client_certificate(
    receivers: Receivers, tmp_path: Path
) -> None:
    ca = Authority(tmp_path / "ca")
    server, team_a, stranger = ca.server(), ca.client("team-a"), ca.client("stranger")
    store = tmp_path / "store"
    receiver = receivers.start(
        "--store", str(store), "--trace-idle", "0.5", "--tenants", str(_tenants(tmp_path)),
        "--tls-cert", str(server.cert), "--tls-key", str(server.key), "--client-ca", str(ca.ca),
    )  # fmt: skip
    receiver.http = receiver.http.replace("127.0.0.1", "localhost")
    receiver.tls = _client_context(ca.ca, team_a)
    grpc_url = f"https://localhost:{receiver.grpc.rpartition(':')[2]}"
    sent = [
        *run_agent("--protocol", "grpc", "--endpoint", grpc_url, env=_sdk_env(ca.ca, team_a))[
            "traces"
        ],
        *run_agent("--protocol", "http", "--endpoint", receiver.http, env=_sdk_env(ca.ca, team_a))[
            "traces"
        ],
    ]
    # A span naming another tenant in every way it might: still team-a's, by its certificate.
    marked = _session_span("asked-with-a-certificate")
    traces = f"{receiver.http}/v1/traces"
    assert _post(traces, request(marked), _client_context(ca.ca, team_a)) == 200
    # Of the right CA, but no tenant's: refused on both transports.
    assert _post(traces, request(marked), _client_context(ca.ca, stranger)) == 401
    target = f"localhost:{receiver.grpc.rpartition(':')[2]}"
    credentials = grpc.ssl_channel_credentials(
        ca.ca.read_bytes(), stranger.key.read_bytes(), stranger.cert.read_bytes()
    )
    with (
        grpc.secure_channel(target, credentials) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        channel.unary_unary(EXPORT)(request(marked), timeout=10)
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    receiver.wait_for('otel_prov_receiver_sessions_sealed_total{tenant="team-a"}', 3)
    assert receiver.stop() == 0
    log = receiver.log_text()
    for transport in ("OTLP/HTTP", "OTLP/gRPC"):
        assert (
            f"{transport} refused a request from" in log
            and "its client certificate CN=stranger is no tenant's (--tenants)" in log
        ), log
    assert "Traceback" not in log
    assert _trace_ids(store, "team-a") == {_hex(t) for t in sent} | {marked.trace_id.hex()}
    assert _trace_ids(store, "team-b") == set()


def _page(url: str, context: ssl.SSLContext) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _served_store(tmp_path: Path) -> Path:
    """A store with one run in team-a's graph, and one in team-b's."""
    store = tmp_path / "store"
    for tenant in ("team-a", "team-b"):
        code = (
            "import otel_prov\n"
            f"h = otel_prov.configure(store={str(store)!r}, tenant={tenant!r}, set_global=False)\n"
            "t = h.tracer_provider.get_tracer('t')\n"
            "with t.start_as_current_span('invoke_agent x', attributes={"
            "'gen_ai.operation.name': 'invoke_agent', "
            f"'otel_prov.question': 'asked-by-{tenant}'}}):\n"
            "    pass\n"
            "h.shutdown()\n"
        )
        import subprocess
        import sys

        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr  # 1: none
    return store


def test_serve_lets_a_reader_in_by_its_client_certificate(tmp_path: Path) -> None:
    ca = Authority(tmp_path / "ca")
    server, team_a, stranger = ca.server(), ca.client("team-a"), ca.client("stranger")
    store = _served_store(tmp_path)
    with serving(
        "--store", str(store), "--tenants", str(_tenants(tmp_path)),
        "--tls-cert", str(server.cert), "--tls-key", str(server.key), "--client-ca", str(ca.ca),
    ) as served:  # fmt: skip
        url = served.url.replace("127.0.0.1", "localhost") + "/"
        status, page = _page(url, _client_context(ca.ca, team_a))
        assert status == 200 and "asked-by-team-a" in page and "asked-by-team-b" not in page
        assert _page(url + "?tenant=team-b", _client_context(ca.ca, team_a))[0] == 403
        status, _ = _page(url, _client_context(ca.ca, stranger))
        assert status == 401
        log = served.stderr()
    assert "serve refused a request from" in log
    assert "its client certificate CN=stranger is no tenant's (--tenants)" in log
