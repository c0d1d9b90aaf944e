"""An OTLP/HTTP endpoint between a scenario's agent and its receiver that keeps what passes.

The conformance suite's receiver maps a scenario's spans as they come; a test that maps
the same spans another way (streamed step by step against sealed at the end,
``test_streamed_scenarios``) needs them as they were sent: the tee keeps every request's
body and passes it on, answering what the receiver answered.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["OtlpTee"]


class OtlpTee:
    """``with OtlpTee(receiver_url) as tee``: send to ``tee.url``; ``tee.kept`` holds (path,
    content type, body) of each request, in the order they came."""

    def __init__(self, forward: str) -> None:
        self.forward = forward.rstrip("/")
        self.kept: list[tuple[str, str, bytes]] = []
        tee = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                kind = self.headers.get("Content-Type") or ""
                tee.kept.append((self.path, kind, body))
                request = urllib.request.Request(
                    tee.forward + self.path, data=body, headers={"Content-Type": kind}
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, text = answer.status, answer.read()
                except urllib.error.HTTPError as exc:
                    status, text = exc.code, exc.read()
                self.send_response(status)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> OtlpTee:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
