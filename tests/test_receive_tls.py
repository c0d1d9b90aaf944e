"""``otel-prov receive`` with TLS and mutual TLS, fed by the OpenTelemetry SDK's own OTLP
exporters (gRPC and HTTP) told where the certificates are the SDK way
(``OTEL_EXPORTER_OTLP_CERTIFICATE``, ``..._CLIENT_CERTIFICATE``, ``..._CLIENT_KEY``), and
refusing, with a line in its log, what does not come over TLS with a certificate of its CA."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

from tests.certificates import Authority, Issued
from tests.cli import run_cli
from tests.otlp_agent import spans_per_session
from tests.receiver import Receiver, Receivers, run_agent
from tests.test_otlp_proto import GOOD
from tests.test_receive import EXPORT, request

SPANS = spans_per_session(3)


def _client_context(ca: Path, client: Issued | None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        context.load_cert_chain(client.cert, client.key)
    return context


def _sdk_env(ca: Path, client: Issued | None) -> dict[str, str]:
    # requests takes REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE) over the CA the SDK's HTTP
    # exporter gives its session (psf/requests#3829): set, as here, they hide ours.
    env = {
        "OTEL_EXPORTER_OTLP_CERTIFICATE": str(ca),
        "REQUESTS_CA_BUNDLE": "",
        "CURL_CA_BUNDLE": "",
    }
    if client is not None:
        env |= {
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": str(client.cert),
            "OTEL_EXPORTER_OTLP_CLIENT_KEY": str(client.key),
        }
    return env


def _https(receiver: Receiver) -> str:
    return receiver.http.replace("127.0.0.1", "localhost")


def _grpc_refused(target: str, credentials: grpc.ChannelCredentials | None) -> None:
    channel = (
        grpc.insecure_channel(target)
        if credentials is None
        else grpc.secure_channel(target, credentials)
    )
    with channel:
        call = channel.unary_unary(EXPORT)
        with pytest.raises(grpc.RpcError) as refused:
            call(request(GOOD), timeout=10)
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE


def _https_refused(url: str, context: ssl.SSLContext | None) -> None:
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
        urllib.request.urlopen(
            urllib.request.Request(url, data=request(GOOD), method="POST"),
            timeout=10,
            context=context,
        )


def test_mutual_tls_takes_the_sdk_exporters_and_refuses_the_rest_with_a_log_line(
    receivers: Receivers, tmp_path: Path
) -> None:
    ca = Authority(tmp_path / "ca")
    server, client = ca.server(), ca.client("team-a")
    intruder = Authority(tmp_path / "other", "another CA").client("intruder")
    receiver = receivers.start(
        "--store",
        str(tmp_path / "store"),
        "--trace-idle",
        "0.5",
        "--tls-cert",
        str(server.cert),
        "--tls-key",
        str(server.key),
        "--client-ca",
        str(ca.ca),
    )
    assert receiver.http.startswith("https://")
    receiver.tls = _client_context(ca.ca, client)
    grpc_url = f"https://localhost:{receiver.grpc.rpartition(':')[2]}"
    run_agent("--protocol", "grpc", "--endpoint", grpc_url, env=_sdk_env(ca.ca, client))
    run_agent("--protocol", "http", "--endpoint", _https(receiver), env=_sdk_env(ca.ca, client))
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 2)
    assert receiver.metrics()["otel_prov_receiver_spans_received_total"] == 2 * SPANS

    traces = f"{_https(receiver)}/v1/traces"
    _https_refused(traces.replace("https://", "http://"), None)  # plaintext
    _https_refused(traces, _client_context(ca.ca, None))  # no client certificate
    _https_refused(traces, _client_context(ca.ca, intruder))  # another CA's
    target = f"localhost:{receiver.grpc.rpartition(':')[2]}"
    root = ca.ca.read_bytes()
    _grpc_refused(target, None)
    _grpc_refused(target, grpc.ssl_channel_credentials(root))
    _grpc_refused(
        target,
        grpc.ssl_channel_credentials(root, intruder.key.read_bytes(), intruder.cert.read_bytes()),
    )
    assert receiver.metrics()["otel_prov_receiver_spans_received_total"] == 2 * SPANS
    assert receiver.stop() == 0
    log = receiver.log_text()
    for said in (
        "OTLP/HTTP refused a connection: the client spoke plaintext HTTP to a TLS port",
        "OTLP/HTTP refused a connection: the client showed no certificate (--client-ca)",
        "OTLP/HTTP refused a connection: the client's certificate is not signed by --client-ca",
        # grpcio's core says it for gRPC:
        "Handshake failed with error SSL_ERROR_SSL: error:100000f7:SSL routines:"
        "OPENSSL_internal:WRONG_VERSION_NUMBER",
        "PEER_DID_NOT_RETURN_A_CERTIFICATE",
        "CERTIFICATE_VERIFY_FAILED",
    ):
        assert said in log, said
    assert "Traceback" not in log


def test_tls_from_the_environment_without_client_certificates(
    receivers: Receivers, tmp_path: Path
) -> None:
    """``OTEL_PROV_RECEIVER_TLS_CERT`` and ``..._TLS_KEY`` alone: TLS, any client."""
    ca = Authority(tmp_path / "ca")
    server = ca.server()
    receiver = receivers.start(
        "--store",
        str(tmp_path / "store"),
        "--trace-idle",
        "0.5",
        env={
            "OTEL_PROV_RECEIVER_TLS_CERT": str(server.cert),
            "OTEL_PROV_RECEIVER_TLS_KEY": str(server.key),
        },
    )
    receiver.tls = _client_context(ca.ca, None)
    run_agent("--protocol", "http", "--endpoint", _https(receiver), env=_sdk_env(ca.ca, None))
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 1)
    _https_refused(f"{_https(receiver).replace('https://', 'http://')}/v1/traces", None)
    assert receiver.stop() == 0
    assert "the client spoke plaintext HTTP to a TLS port" in receiver.log_text()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--tls-cert", "cert.pem"), "--tls-cert and --tls-key go together"),
        (("--client-ca", "ca.pem"), "--client-ca needs --tls-cert and --tls-key"),
        (("--tls-cert", "no.pem", "--tls-key", "no.pem"), "--tls-cert no.pem is not a readable"),
    ],
)
def test_half_given_tls_is_refused_before_anything_listens(
    tmp_path: Path, flags: tuple[str, ...], said: str
) -> None:
    (tmp_path / "cert.pem").write_text("x")
    done = run_cli("receive", "--store", str(tmp_path / "store"), *flags, cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr
