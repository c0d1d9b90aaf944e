"""Start Arize Phoenix, a real OTLP trace receiver, for integration tests.

Phoenix lives in its own venv (``scripts/phoenix-venv.sh``, default ``.cache/phoenix-venv``;
``OTEL_PROV_PHOENIX_VENV`` overrides the directory), never in the project's ``.venv``. It runs
offline on 127.0.0.1 with a SQLite database under the ``tmp_dir`` it is given, and writes its
output to ``tmp_dir/phoenix.log``.

What a test sends and how it reads it back:

* OTLP/HTTP (protobuf) to ``Phoenix.otlp_http_traces``; OTLP/gRPC (insecure) to
  ``Phoenix.otlp_grpc``. Phoenix files spans under the project named by the resource
  attribute ``openinference.project.name`` (``default`` without it).
* ``Phoenix.spans(project, expected=N)`` reads them back over the REST API (see its docstring).
  Phoenix stores spans asynchronously (about 100 spans/s), so it polls.

What Phoenix does not keep (so tests must not expect it back): resource attributes, the OTel
span kind (``span_kind`` is the OpenInference kind), links, and attribute equality — Phoenix
adds OpenInference attributes derived from ``gen_ai.*`` (e.g. ``llm.model_name``,
``llm.provider``, ``llm.token_count.prompt``, ``tool.name``) and sets ``span_kind``
(``LLM``, ``TOOL``) from them, so compare attributes as a subset.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.side_venv import installed

PHOENIX_VENV_ENV = "OTEL_PROV_PHOENIX_VENV"  # optional: the venv directory to use
READY_TIMEOUT = 90.0
START_ATTEMPTS = 3  # a port picked as free can be taken before Phoenix binds it
PAGE_LIMIT = 1000  # the REST API's maximum `limit`; more gives 422
POLL_INTERVAL = 0.25

_SETTINGS = {
    "PHOENIX_HOST": "127.0.0.1",  # HTTP only: the gRPC receiver always binds [::] / 0.0.0.0
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_LOG_MIGRATIONS": "false",  # else ~3000 lines of SQL bury the useful log tail
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_AGENTS_DISABLE_BASH": "true",
}


# How `phoenix serve` says a port was taken (uvicorn for HTTP, grpcio for gRPC); it exits 3.
_PORT_TAKEN = (
    "error while attempting to bind on address",  # ... ('127.0.0.1', P): address already in use
    "Failed to bind to address [::]:",  # ...; set GRPC_VERBOSITY=debug environment variable ...
)


def _free_port() -> int:
    """A TCP port free a moment ago on every interface (gRPC binds all of them)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 40, start: int = 0) -> str:
    """The last ``lines`` lines of the log, from byte ``start`` on."""
    try:
        with path.open("rb") as log:
            log.seek(start)
            text = log.read().decode("utf-8", errors="replace")
    except OSError as exc:
        return f"<no log: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _healthy(base: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=timeout) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _hex_id(value: object, digits: int) -> str:
    """``value`` (hex, any case, optionally ``0x``-prefixed) as ``digits`` lowercase hex digits."""
    text = str(value).strip().lower().removeprefix("0x")
    try:
        number = int(text, 16)
    except ValueError:
        raise ValueError(f"not a hex id: {value!r}") from None
    if number < 0 or number >= 16**digits:
        raise ValueError(f"id {value!r} does not fit in {digits} hex digits")
    return format(number, f"0{digits}x")


def _normalise(span: dict[str, Any]) -> dict[str, Any]:
    context = span.get("context") or {}
    result = dict(span)
    result["trace_id"] = _hex_id(context["trace_id"], 32)
    result["span_id"] = _hex_id(context["span_id"], 16)
    if result.get("parent_id"):
        result["parent_id"] = _hex_id(result["parent_id"], 16)
    return result


@dataclass
class Phoenix:
    http_endpoint: str  # base URL, e.g. http://127.0.0.1:PORT
    otlp_http_traces: str  # http://127.0.0.1:PORT/v1/traces
    otlp_grpc: str  # 127.0.0.1:GRPCPORT (insecure)
    working_dir: Path = field(repr=False)
    log_path: Path = field(repr=False)
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """Stop Phoenix (SIGTERM, then SIGKILL after 15 s) and reap it; idempotent."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._process = None

    def _get_json(self, path: str, params: dict[str, str | int]) -> Any:
        """GET ``path`` as JSON, or ``None`` on 404 (a project exists from its first span)."""
        url = f"{self.http_endpoint}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10.0) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            body = exc.read().decode("utf-8", errors="replace")
            raise RuntimeError(f"GET {url} answered {exc.code}: {body}") from exc

    def _all_spans(self, project: str) -> list[dict[str, Any]]:
        path = f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans"
        spans: list[dict[str, Any]] = []
        params: dict[str, str | int] = {"limit": PAGE_LIMIT}
        while True:
            page = self._get_json(path, params)
            if page is None:
                return []
            spans.extend(page["data"])
            if not page.get("next_cursor"):
                return spans
            params = {"limit": PAGE_LIMIT, "cursor": page["next_cursor"]}

    def spans(self, project: str, *, expected: int, timeout: float = 60) -> list[dict[str, Any]]:
        """The spans Phoenix stored in ``project``, once there are at least ``expected``.

        Polls ``GET /v1/projects/{project}/spans?limit=1000`` (following ``next_cursor``; the
        project answers 404 until its first span is stored). Raises ``AssertionError`` with what
        it got after ``timeout`` seconds, ``RuntimeError`` if Phoenix has died.

        Each span is Phoenix's REST object, returned with all its fields::

            {"id": "U3Bhbjox",            # Phoenix's GraphQL global id, not the OTel span id
             "name": "child",
             "context": {"trace_id": "<32 hex>", "span_id": "<16 hex>"},
             "span_kind": "UNKNOWN",      # OpenInference kind (LLM, TOOL, ...), not OTel's
             "parent_id": "<16 hex>" | None,
             "start_time": "2026-11-30T05:44:50.989841+00:00", "end_time": "...",
             "status_code": "UNSET" | "OK" | "ERROR", "status_message": "",
             "attributes": {"gen_ai.operation.name": "chat", ...},  # flat dotted keys
             "events": [{"name": "...", "timestamp": "...", "attributes": {...}}]}

        Phoenix already gives ids as lowercase hex (32 digits for a trace, 16 for a span);
        they are copied, normalised to exactly that, to top-level ``"trace_id"`` and
        ``"span_id"`` (``parent_id`` is normalised in place), so
        ``format(ctx.trace_id, "032x")`` / ``format(ctx.span_id, "016x")`` of the SDK's
        ``SpanContext`` compare equal. Spans come sorted by ``start_time``, then ``span_id``.
        """
        deadline = time.monotonic() + timeout
        while True:
            if not self.is_running():
                raise RuntimeError(
                    f"Phoenix is not running; log {self.log_path} ends:\n{_tail(self.log_path)}"
                )
            found = self._all_spans(project)
            if len(found) >= expected:
                spans = [_normalise(span) for span in found]
                return sorted(spans, key=lambda s: (s.get("start_time") or "", s["span_id"]))
            if time.monotonic() >= deadline:
                names = sorted(str(span.get("name")) for span in found)
                raise AssertionError(
                    f"Phoenix stored {len(found)} span(s) in project {project!r} after "
                    f"{timeout:g}s, expected at least {expected}: {names}"
                )
            time.sleep(POLL_INTERVAL)


@functools.cache
def phoenix_executable() -> Path:
    """The ``phoenix`` executable, installing its venv first when needed (~2 min, 850 MB)."""
    return installed("phoenix-venv.sh", PHOENIX_VENV_ENV)


def _launch(executable: Path, working_dir: Path, log_path: Path) -> Phoenix | None:
    """Start Phoenix and wait for /healthz; ``None`` if it lost a race for its ports."""
    http_port, grpc_port = _free_port(), _free_port()
    while grpc_port == http_port:
        grpc_port = _free_port()
    base = f"http://127.0.0.1:{http_port}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PHOENIX_")}
    env.update(_SETTINGS)
    env.update(
        PHOENIX_WORKING_DIR=str(working_dir),
        PHOENIX_PORT=str(http_port),
        PHOENIX_GRPC_PORT=str(grpc_port),
    )
    begin = time.monotonic()
    with log_path.open("ab") as log:
        start = log.tell()  # this attempt's output starts here
        log.write(f"\n=== {time.strftime('%H:%M:%S')} start: {base} grpc {grpc_port}\n".encode())
        log.flush()
        process = subprocess.Popen(
            [str(executable), "serve"],
            cwd=working_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    phoenix = Phoenix(
        http_endpoint=base,
        otlp_http_traces=f"{base}/v1/traces",
        otlp_grpc=f"127.0.0.1:{grpc_port}",
        working_dir=working_dir,
        log_path=log_path,
        _process=process,
    )
    atexit.register(phoenix.stop)  # never leave Phoenix behind, even if a test forgets
    while not _healthy(base):
        code = process.poll()
        elapsed = time.monotonic() - begin
        if code is not None or elapsed > READY_TIMEOUT:
            phoenix.stop()
            output = _tail(log_path, lines=100_000, start=start)
            if code is not None and any(sign in output for sign in _PORT_TAKEN):
                return None
            tail = "\n".join(output.splitlines()[-40:])
            why = f"exited with code {code}" if code is not None else "timed out"
            raise RuntimeError(
                f"Phoenix {why} before {base}/healthz answered (waited {elapsed:.1f}s); "
                f"log {log_path} ends:\n{tail}"
            )
        time.sleep(0.2)
    return phoenix


def start_phoenix(tmp_dir: Path) -> Phoenix:
    """Start ``phoenix serve`` on a fresh database under ``tmp_dir``; wait until it is healthy.

    Ready in about 10-16 s on a fresh database; uses about 450 MB of memory. Raises
    ``RuntimeError`` (with the tail of ``tmp_dir/phoenix.log``) if it fails to start.
    """
    executable = phoenix_executable()
    working_dir = Path(tmp_dir) / "phoenix"
    working_dir.mkdir(parents=True, exist_ok=True)
    log_path = Path(tmp_dir) / "phoenix.log"
    for _ in range(START_ATTEMPTS):
        phoenix = _launch(executable, working_dir, log_path)
        if phoenix is not None:
            return phoenix
    raise RuntimeError(
        f"Phoenix could not bind free ports in {START_ATTEMPTS} attempts; "
        f"log {log_path} ends:\n{_tail(log_path)}"
    )
