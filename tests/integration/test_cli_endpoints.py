"""Where the CLI reads and writes when the settings name a SPARQL store (issue 26, point 12).

The query endpoint defaults to the update endpoint with its last ``/update`` replaced by
``/query``, for the CLI as for the exporters; a URL with ``user:password@`` reads as the
exporter writes (basic auth, the password in no message); an update URL given as the
query endpoint is named as the wrong URL; and ``status``/``flush`` make no empty store.
Against a real Oxigraph server, the CLI run as a user runs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_prov.cli._exit import ExitCode
from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.prov._mapper import map_spans
from tests.cli import run_cli
from tests.servers import SparqlServer, free_port, start_oxigraph
from tests.session_tree import known_session

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparqlServer]:
    """A real Oxigraph server holding one known session."""
    tmp = tmp_path_factory.mktemp("endpoints")
    server = start_oxigraph(tmp)
    try:
        exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp / "spool")
        exporter.export([map_spans(known_session())])
        assert exporter.force_flush(30_000)
        exporter.shutdown()
        yield server
    finally:
        server.stop()


@pytest.fixture
def no_settings(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "OTEL_PROV_SPARQL_UPDATE_ENDPOINT",
        "OTEL_PROV_SPARQL_QUERY_ENDPOINT",
        "OTEL_PROV_STORE",
        "OTEL_PROV_SPOOL_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _listed(result_stdout: str) -> list[str]:
    return [session["id"] for session in json.loads(result_stdout)]


def test_with_only_the_update_endpoint_set_sessions_reads_its_query_endpoint(
    oxigraph: SparqlServer, tmp_path: Path, no_settings: pytest.MonkeyPatch
) -> None:
    no_settings.setenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", oxigraph.update_endpoint)
    result = run_cli("sessions", "--format", "json", cwd=tmp_path)
    assert result.returncode == ExitCode.OK, result.stderr
    there = run_cli("sessions", "--format", "json", "--endpoint", oxigraph.query_endpoint)
    assert _listed(result.stdout) == _listed(there.stdout) != []
    assert not (tmp_path / ".otel-prov" / "store").exists()


def test_an_endpoint_with_credentials_in_its_url_reads_and_never_shows_them(
    oxigraph: SparqlServer, tmp_path: Path, no_settings: pytest.MonkeyPatch
) -> None:
    with_user = oxigraph.query_endpoint.replace("http://", "http://reader:s3cret@")
    result = run_cli("sessions", "--format", "json", "--endpoint", with_user, cwd=tmp_path)
    assert result.returncode == ExitCode.OK, result.stderr
    assert _listed(result.stdout) != []
    unreachable = f"http://reader:s3cret@127.0.0.1:{free_port()}/query"
    failed = run_cli("sessions", "--endpoint", unreachable, cwd=tmp_path)
    assert failed.returncode == ExitCode.STORE_ERROR
    assert "s3cret" not in failed.stderr and "Name or service" not in failed.stderr


def test_an_update_url_given_as_the_query_endpoint_is_named_as_the_wrong_url(
    oxigraph: SparqlServer, tmp_path: Path, no_settings: pytest.MonkeyPatch
) -> None:
    result = run_cli("sessions", "--endpoint", oxigraph.update_endpoint, cwd=tmp_path)
    assert result.returncode == ExitCode.STORE_ERROR
    assert "invalid SPARQL" not in result.stderr
    assert "update endpoint" in result.stderr and oxigraph.query_endpoint in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.parametrize("update_endpoint_set", [False, True], ids=["embedded", "sparql"])
def test_status_and_flush_make_no_empty_store(
    oxigraph: SparqlServer,
    tmp_path: Path,
    no_settings: pytest.MonkeyPatch,
    update_endpoint_set: bool,
) -> None:
    if update_endpoint_set:
        no_settings.setenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", oxigraph.update_endpoint)
    for command in ("status", "flush"):
        result = run_cli(command, cwd=tmp_path)
        assert result.returncode == ExitCode.OK, (command, result.stdout, result.stderr)
    assert not (tmp_path / ".otel-prov" / "store").exists()


def test_flush_counts_what_waits_in_a_spool_another_process_holds(
    tmp_path: Path, no_settings: pytest.MonkeyPatch
) -> None:
    """An agent still running holds the spool (its store is down): ``flush`` cannot send
    its batches, and says they wait, as ``status`` does, instead of "0 waiting"."""
    spool = tmp_path / "spool"
    down = f"http://127.0.0.1:{free_port()}/update"
    agent = SparqlUpdateExporter(down, spool_dir=spool, retry_initial_delay=60)
    try:
        agent.export([map_spans(known_session())])
        no_settings.setenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", down)
        no_settings.setenv("OTEL_PROV_SPOOL_DIR", str(spool))
        status = run_cli("status", "--format", "json", cwd=tmp_path)
        waiting = json.loads(status.stdout)["spooled_batches"]
        assert waiting >= 1
        flushed = run_cli("flush", cwd=tmp_path)
        assert flushed.returncode == ExitCode.CHECK_FAILED, (flushed.stdout, flushed.stderr)
        assert f"0 batch(es) stored, {waiting} waiting" in flushed.stdout
    finally:
        agent.shutdown()
