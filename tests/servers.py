"""Start and stop real SPARQL servers (Oxigraph, Virtuoso, Fuseki) for integration tests.

Each server keeps its data in a directory under the ``tmp_dir`` it is given and writes its
stdout/stderr to ``tmp_dir/<name>.log``. ``SparqlServer.stop()`` then ``start()`` restarts it
on the same data directory and ports, to simulate an outage and a recovery.
"""

from __future__ import annotations

import atexit
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.engine_builds import built

OXIGRAPH_READY_TIMEOUT = 10.0
VIRTUOSO_READY_TIMEOUT = 30.0
FUSEKI_READY_TIMEOUT = 60.0  # a JVM's start, on a loaded machine
FUSEKI_DATASET = "ds"
VIRTUOSO_INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")
VIRTUOSO_GRANT = (
    "GRANT SPARQL_UPDATE TO \"SPARQL\"; DB.DBA.RDF_DEFAULT_USER_PERMS_SET('nobody', 7);"
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ask(query_endpoint: str, timeout: float = 2.0) -> bool:
    """True if the endpoint answers ``ASK {}`` with a SPARQL JSON boolean."""
    url = f"{query_endpoint}?{urllib.parse.urlencode({'query': 'ASK {}'})}"
    request = urllib.request.Request(url, headers={"Accept": "application/sparql-results+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status == 200 and b'"boolean"' in response.read()
    except (OSError, urllib.error.URLError):
        return False


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"<no log: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class SparqlServer:
    name: str
    query_endpoint: str
    update_endpoint: str
    graph_store_endpoint: str | None
    auth_update_endpoint: str | None
    command: list[str] = field(repr=False)
    data_dir: Path = field(repr=False)
    log_path: Path = field(repr=False)
    ready_timeout: float = field(repr=False)
    isql: list[str] | None = field(default=None, repr=False)  # Virtuoso: isql-vt HOST:PORT U P
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start (or restart, on the same data directory and ports); wait until it answers."""
        if self.is_running():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.isql is not None:  # a killed Virtuoso leaves its lock file behind
            (self.data_dir / "virtuoso.lck").unlink(missing_ok=True)
        begin = time.monotonic()
        with self.log_path.open("ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} start: {self.command}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                self.command,
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        while not _ask(self.query_endpoint):
            code = self._process.poll()
            if code is not None or time.monotonic() - begin > self.ready_timeout:
                self.stop()
                why = f"exited with code {code}" if code is not None else "timed out"
                raise RuntimeError(
                    f"{self.name} {why} before {self.query_endpoint} answered ASK {{}} "
                    f"(waited {time.monotonic() - begin:.1f}s); log {self.log_path} ends:\n"
                    + _tail(self.log_path)
                )
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop the server for real (graceful first, then SIGTERM, then SIGKILL) and reap it."""
        process = self._process
        if process is None:
            return
        if process.poll() is None and self.isql is not None:
            try:
                self._run_isql("shutdown;", timeout=30.0, check=False)
                process.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                pass
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._process = None

    def _run_isql(self, sql: str, timeout: float = 30.0, check: bool = True) -> str:
        assert self.isql is not None, f"{self.name} has no isql interface"
        result = subprocess.run(
            [*self.isql, f"exec={sql}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        output = result.stdout + result.stderr
        if check and (result.returncode != 0 or "*** Error" in output):
            raise RuntimeError(f"isql {sql!r} failed (exit {result.returncode}):\n{output}")
        return output


def _executable(name: str, hint: str) -> str:
    beside_python = Path(sys.executable).parent / name
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"`{name}` not found (next to {sys.executable} or on PATH): {hint}")
    return found


def _launch(server: SparqlServer) -> SparqlServer:
    server.start()
    atexit.register(server.stop)  # never leave a server behind, even if a test forgets
    return server


def start_oxigraph(tmp_dir: Path) -> SparqlServer:
    """Start ``oxigraph serve`` on a fresh data directory under ``tmp_dir``."""
    binary = _executable("oxigraph", "pip install oxigraph")
    data_dir, port = Path(tmp_dir) / "oxigraph-data", free_port()
    base = f"http://127.0.0.1:{port}"
    command = [binary, "serve", "--location", str(data_dir), "--bind", f"127.0.0.1:{port}"]
    server = SparqlServer(
        name="oxigraph",
        query_endpoint=f"{base}/query",
        update_endpoint=f"{base}/update",
        graph_store_endpoint=f"{base}/store",
        auth_update_endpoint=None,
        command=command,
        data_dir=data_dir,
        log_path=Path(tmp_dir) / "oxigraph.log",
        ready_timeout=OXIGRAPH_READY_TIMEOUT,
    )
    return _launch(server)


def _virtuoso_ini(template: str, data_dir: Path, isql_port: int, http_port: int) -> str:
    """The packaged virtuoso.ini with files under ``data_dir`` and ports on 127.0.0.1."""
    db = data_dir.as_posix()
    overrides = {
        ("Database", "DatabaseFile"): f"{db}/virtuoso.db",
        ("Database", "ErrorLogFile"): f"{db}/virtuoso.log",
        ("Database", "LockFile"): f"{db}/virtuoso.lck",
        ("Database", "TransactionFile"): f"{db}/virtuoso.trx",
        ("Database", "xa_persistent_file"): f"{db}/virtuoso.pxa",
        ("TempDatabase", "DatabaseFile"): f"{db}/virtuoso-temp.db",
        ("TempDatabase", "TransactionFile"): f"{db}/virtuoso-temp.trx",
        ("Parameters", "ServerPort"): f"127.0.0.1:{isql_port}",
        ("Parameters", "DirsAllowed"): f"., {db}, /usr/share/virtuoso-opensource-7/vad",
        ("HTTPServer", "ServerPort"): f"127.0.0.1:{http_port}",
        ("URIQA", "DefaultHost"): f"127.0.0.1:{http_port}",
    }
    lines: list[str] = []
    section = ""
    seen: set[tuple[str, str]] = set()
    for line in template.splitlines():
        header = re.match(r"\s*\[([^\]]+)\]", line)
        setting = re.match(r"\s*([A-Za-z_][\w.]*)\s*=", line)
        if header:
            section = header.group(1).strip()
        elif setting and (section, setting.group(1)) in overrides:
            key = (section, setting.group(1))
            line = f"{key[1]} = {overrides[key]}"
            seen.add(key)
        lines.append(line)
    if missing := set(overrides) - seen:
        raise RuntimeError(f"{VIRTUOSO_INI} lacks settings {sorted(missing)}; cannot relocate")
    return "\n".join(lines) + "\n"


def start_virtuoso(tmp_dir: Path) -> SparqlServer:
    """Start a private ``virtuoso-t`` under ``tmp_dir``; SPARQL Update allowed on /sparql."""
    hint = "run scripts/install-virtuoso.sh (Debian package virtuoso-opensource)"
    virtuoso_t = _executable("virtuoso-t", hint)
    isql_vt = _executable("isql-vt", hint)
    if not VIRTUOSO_INI.exists():
        raise RuntimeError(f"{VIRTUOSO_INI} not found: {hint}")
    data_dir, isql_port, http_port = Path(tmp_dir) / "virtuoso-data", free_port(), free_port()
    while http_port == isql_port:
        http_port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    ini = data_dir / "virtuoso.ini"
    template = VIRTUOSO_INI.read_text(encoding="utf-8", errors="replace")
    ini.write_text(_virtuoso_ini(template, data_dir, isql_port, http_port), encoding="utf-8")
    base = f"http://127.0.0.1:{http_port}"
    server = SparqlServer(
        name="virtuoso",
        query_endpoint=f"{base}/sparql",
        update_endpoint=f"{base}/sparql",
        graph_store_endpoint=f"{base}/sparql-graph-crud",
        auth_update_endpoint=f"{base}/sparql-auth",
        command=[virtuoso_t, "+foreground", "+configfile", str(ini)],
        data_dir=data_dir,
        log_path=Path(tmp_dir) / "virtuoso.log",
        ready_timeout=VIRTUOSO_READY_TIMEOUT,
        isql=[isql_vt, f"127.0.0.1:{isql_port}", "dba", "dba"],
    )
    _launch(server)
    try:
        server._run_isql(VIRTUOSO_GRANT)
    except (RuntimeError, subprocess.TimeoutExpired):
        server.stop()
        raise
    return server


def start_fuseki(tmp_dir: Path) -> SparqlServer:
    """Start Apache Jena Fuseki (``scripts/fetch-fuseki.sh``'s jar) on a TDB2 dataset under
    ``tmp_dir`` that takes SPARQL Update, on 127.0.0.1 only.

    TDB2 on disk rather than ``--mem``, so that a stop and a start keep the data, as the
    other servers' do."""
    jar = built("fuseki")
    java = _executable("java", "install OpenJDK 17 (the machine's Java)")
    data_dir, port = Path(tmp_dir) / "fuseki-data", free_port()
    base = f"http://127.0.0.1:{port}/{FUSEKI_DATASET}"
    # The JIT's first tier and the serial collector: ready in about 2.5 s instead of 5-7 s
    # (a test's data is small; the optimising tier would not pay back).
    command = [java, "-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", str(jar)]
    command += ["--tdb2", "--loc", str(data_dir), "--update"]
    command += ["--localhost", "--port", str(port), f"/{FUSEKI_DATASET}"]
    server = SparqlServer(
        name="fuseki",
        query_endpoint=f"{base}/query",
        update_endpoint=f"{base}/update",
        graph_store_endpoint=f"{base}/data",
        auth_update_endpoint=None,
        command=command,
        data_dir=data_dir,
        log_path=Path(tmp_dir) / "fuseki.log",
        ready_timeout=FUSEKI_READY_TIMEOUT,
    )
    return _launch(server)
