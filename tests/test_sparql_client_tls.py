"""The CA a SPARQL exporter is given is the CA it trusts, whatever the environment says."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import certifi
import pytest

from otel_prov.exporters.sparql._client import Outcome, SparqlUpdateClient
from tests.certificates import Authority


class _Updates(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def tls_update_endpoint(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS update endpoint whose certificate our own CA signed: (URL, the CA's PEM)."""
    authority = Authority(tmp_path / "ca")
    issued = authority.server("127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(issued.cert, issued.key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Updates)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/update", tmp_path / "ca" / "ca.pem"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_the_given_ca_is_trusted_over_the_environments_bundle(
    tls_update_endpoint: tuple[str, Path], variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """requests takes ``REQUESTS_CA_BUNDLE`` over a CA set on its session (psf/requests#3829):
    a user whose shell sets it (a corporate bundle) had the store's CA ignored, and every
    batch retried with a certificate error."""
    url, ca = tls_update_endpoint
    monkeypatch.setenv(variable, certifi.where())
    client = SparqlUpdateClient(url, headers={}, auth=None, timeout=(5, 5), verify=str(ca))
    answer = client.update("INSERT DATA { <urn:a> <urn:b> <urn:c> }")
    assert answer.outcome is Outcome.DELIVERED, answer


def test_the_environments_bundle_still_serves_the_default(
    tls_update_endpoint: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no CA given (``verify=True``), the environment's bundle is what is trusted, as
    requests does: here it holds the store's CA."""
    url, ca = tls_update_endpoint
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    client = SparqlUpdateClient(url, headers={}, auth=None, timeout=(5, 5), verify=True)
    assert client.update("INSERT DATA { <urn:a> <urn:b> <urn:c> }").outcome is Outcome.DELIVERED
