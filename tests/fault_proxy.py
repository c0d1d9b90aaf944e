"""A real HTTP reverse proxy for integration tests that injects faults on demand.

``FaultProxy(upstream)`` listens on 127.0.0.1 (``proxy.url``) and forwards every request to
``upstream``; ``fail_next``, ``delay_next``, ``stall_next`` and ``refuse`` make it answer the
way a broken server would. Every request is recorded in ``proxy.requests``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.parse
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "te", "trailer", "trailers", "transfer-encoding"}
HOP_BY_HOP |= {"upgrade", "expect", "host", "content-length"}  # last three: set by us
UPSTREAM_TIMEOUT = 60.0


def _end_to_end(headers: Iterable[tuple[str, str]], more: str = "") -> list[tuple[str, str]]:
    """Headers without hop-by-hop ones (``more``: a Connection header's list of others)."""
    drop = HOP_BY_HOP | {token.strip().lower() for token in more.split(",")}
    return [(k, v) for k, v in headers if k.lower() not in drop and k[:6].lower() != "proxy-"]


@dataclass
class RecordedRequest:
    method: str
    path: str  # including the query string
    headers: dict[str, str]
    body: bytes
    status: int | None = None  # None: refused (connection closed without a response)


@dataclass(frozen=True)
class _Failure:
    status: int
    body: str
    headers: list[tuple[str, str]]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: FaultProxy


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:  # track client connections so stop() can drop keep-alive ones
        super().setup()
        self.server.proxy._track(self.connection, add=True)

    def finish(self) -> None:
        self.server.proxy._track(self.connection, add=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the empty line
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response_only(status, reason or None)
        for name, value in _end_to_end(headers):
            self.send_header(name, value)
        if status >= 200 and status != 204:  # HEAD: upstream's length of the body it did not send
            length = dict((k.lower(), v) for k, v in headers).get("content-length", "0")
            self.send_header("Content-Length", length if self.command == "HEAD" else str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and status >= 200 and status not in (204, 304):
            self.wfile.write(body)
        self.wfile.flush()

    def _forward(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
        proxy = self.server.proxy
        headers = dict(_end_to_end(self.headers.items(), self.headers.get("Connection", "")))
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(proxy._netloc, timeout=UPSTREAM_TIMEOUT)
        try:
            conn.request(self.command, proxy._prefix + self.path, body or None, headers)
            response = conn.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            conn.close()

    def _proxy(self) -> None:
        proxy = self.server.proxy
        record = RecordedRequest(self.command, self.path, dict(self.headers.items()), b"")
        record.body = self._read_body()
        refuse, failure, delay, stall = proxy._take_fault(record)
        if stall and proxy._stopping.wait(stall):  # stopped while stalled: never forwarded
            refuse = True
        if refuse:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if failure is not None:
            record.status = failure.status
            self._send(failure.status, "", failure.headers, failure.body.encode())
            return
        try:
            status, reason, headers, body = self._forward(record.body)
        except (OSError, http.client.HTTPException) as exc:
            status, reason = 502, "Bad Gateway"
            headers = [("Content-Type", "text/plain; charset=utf-8")]
            body = f"fault proxy: upstream {proxy.upstream} unavailable: {exc!r}\n".encode()
        record.status = status
        if delay and proxy._stopping.wait(delay):
            self.close_connection = True
            return
        try:
            self._send(status, reason, headers, body)
        except OSError:  # the client gave up (read timeout) and closed the connection
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _proxy


class FaultProxy:
    """A reverse proxy on 127.0.0.1 in front of ``upstream`` (e.g. ``http://127.0.0.1:7878``)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        parts = urllib.parse.urlsplit(self.upstream)
        self._netloc, self._prefix = parts.netloc, parts.path  # plain http upstreams only
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._failures: deque[_Failure] = deque()
        self._delays: deque[float] = deque()
        self._stalls: deque[float] = deque()
        self._refuse = False
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int = self._bind(0).server_address[1]
        self.url = f"http://127.0.0.1:{self._port}"

    def _bind(self, port: int) -> _Server:
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.proxy = self
        return self._server

    def start(self) -> None:
        """Serve (again, on the same port after ``stop()``)."""
        if self._thread is not None:
            return
        server = self._server or self._bind(self._port)
        self._stopping.clear()
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening and drop open client connections (keep-alive ones too)."""
        self._stopping.set()
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
            self._server.server_close()
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._server, self._thread = None, None

    def __enter__(self) -> FaultProxy:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def fail_next(
        self, count: int, status: int, body: str = "", headers: dict[str, str] | None = None
    ) -> None:
        """Answer the next ``count`` requests with this response, without reaching upstream."""
        extra = list((headers or {}).items())
        if not any(name.lower() == "content-type" for name, _ in extra):
            extra.insert(0, ("Content-Type", "text/plain; charset=utf-8"))
        with self._lock:
            self._failures.extend([_Failure(status, body, extra)] * count)

    def delay_next(self, count: int, seconds: float) -> None:
        """Forward the next ``count`` requests but hold each response back ``seconds``."""
        with self._lock:
            self._delays.extend([seconds] * count)

    def stall_next(self, count: int, seconds: float) -> None:
        """Hold the next ``count`` requests back ``seconds`` before forwarding them: a store
        that takes that long to accept (stopping the proxy meanwhile drops them unsent)."""
        with self._lock:
            self._stalls.extend([seconds] * count)

    def refuse(self, on: bool) -> None:
        """While on, close each connection on a request without sending any response."""
        with self._lock:
            self._refuse = on

    def clear(self) -> None:
        """Forget the recorded requests and every pending fault; stop refusing."""
        with self._lock:
            self.requests.clear()
            self._failures.clear()
            self._delays.clear()
            self._stalls.clear()
            self._refuse = False

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _take_fault(self, record: RecordedRequest) -> tuple[bool, _Failure | None, float, float]:
        """Refuse?, a canned failure, the delay of the answer, the stall before forwarding."""
        with self._lock:
            self.requests.append(record)
            if self._refuse:
                return True, None, 0.0, 0.0
            if self._failures:
                return False, self._failures.popleft(), 0.0, 0.0
            delay = self._delays.popleft() if self._delays else 0.0
            return False, None, delay, self._stalls.popleft() if self._stalls else 0.0
