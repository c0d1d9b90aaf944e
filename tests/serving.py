"""``otel-prov serve`` as a user starts it: a separate process, on a free port, stopped after."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

from tests.cli import CLI

__all__ = ["Served", "serving"]


@dataclass
class Served:
    url: str
    """``http://host:port`` without the trailing slash."""
    process: subprocess.Popen[str]
    log: tempfile._TemporaryFileWrapper[str]

    def stderr(self) -> str:
        """What the server has written to stderr so far."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read()


@contextlib.contextmanager
def serving(
    *args: str, env: dict[str, str] | None = None, wait_s: float = 30.0
) -> Iterator[Served]:
    """Start ``otel-prov serve --port 0 ARGS`` and wait for the URL it prints."""
    log = tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".log")  # noqa: SIM115
    process = subprocess.Popen(
        [*CLI, "serve", "--port", "0", *args],
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
        assert line.startswith("otel-prov serve: http://"), (line, process.poll())
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
