"""``otel-prov serve`` as a user starts it: a separate process, on a free port, stopped after."""

from __future__ import annotations

import contextlib
import http.server
import os
import selectors
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from tests.cli import CLI

__all__ = ["TARGET_BODY", "Served", "Target", "counting_target", "serving"]

TARGET_BODY = "the-ssrf-target-answered-this"
"""What :func:`counting_target` answers: no page of ours may show it."""


@dataclass
class Served:
    url: str
    """``http://host:port`` (``https://`` with TLS) without the trailing slash."""
    process: subprocess.Popen[str]
    log: tempfile._TemporaryFileWrapper[str]

    def stderr(self) -> str:
        """What the server has written to stderr so far."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read()


@contextlib.contextmanager
def serving(
    *args: str,
    env: dict[str, str] | None = None,
    wait_s: float = 30.0,
    command: tuple[str, ...] = ("serve", "--port", "0"),
) -> Iterator[Served]:
    """Start ``otel-prov serve --port 0 ARGS`` (or ``otel-prov COMMAND ARGS``) and wait for
    the URL it prints."""
    log = tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".log")  # noqa: SIM115
    process = subprocess.Popen(
        [*CLI, *command, *args],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + wait_s
        line = ""
        while not line and time.monotonic() < deadline and process.poll() is None:
            if selector.select(timeout=0.2):
                line = process.stdout.readline()
        selector.close()
        said = f"otel-prov {command[0]}: "
        assert line.startswith((f"{said}http://", f"{said}https://")), (
            line,
            process.poll(),
        )
        yield Served(line.split(": ", 1)[1].strip().rstrip("/"), process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()


@dataclass
class Target:
    url: str
    """``http://127.0.0.1:port/sparql``: an endpoint a query might name in SERVICE."""
    requests: list[str] = field(default_factory=list)
    """``METHOD path`` of every request it was sent, in order."""


@contextlib.contextmanager
def counting_target() -> Iterator[Target]:
    """A tiny HTTP server on 127.0.0.1 that counts every request it gets (any method) and
    answers 500 with :data:`TARGET_BODY`: the host a SERVICE clause would make us fetch."""
    target = Target("")

    class Counting(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            target.requests.append(f"{self.command} {self.path}")
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = TARGET_BODY.encode()
            self.send_response(500)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = answer

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the test reads :attr:`Target.requests`."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    target.url = f"http://127.0.0.1:{server.server_address[1]}/sparql"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield target
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
