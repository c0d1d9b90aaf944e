"""``otel-prov serve`` over a real SPARQL server (Oxigraph, Virtuoso): the same pages as
over the embedded store, and the endpoint's credentials on none of them, not even when
the server is gone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import requests

from otel_prov import map_spans
from otel_prov.exporters import SparqlUpdateExporter
from tests.servers import SparqlServer
from tests.serving import counting_target, serving
from tests.session_tree import known_session

pytestmark = pytest.mark.integration

TOKEN = "Bearer s3cr3t-t0ken-never-shown"


def test_pages_read_the_endpoint_and_never_show_its_credentials(
    server: SparqlServer, tmp_path: Path
) -> None:
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    exporter.export([map_spans(known_session())])
    assert exporter.force_flush(30_000)
    exporter.shutdown()
    env = {"OTEL_PROV_SPARQL_HEADERS": f"Authorization={TOKEN.replace(' ', '%20')}"}
    with serving("--endpoint", server.query_endpoint, env=env) as served:
        pages = [requests.get(served.url + "/", timeout=60)]
        assert 'Weather in "Paris"?' in pages[0].text.replace("&#34;", '"')
        (run,) = re.findall(r'href="/session\?id=([^"]+)"', pages[0].text)
        pages.append(requests.get(f"{served.url}/session?id={run}", timeout=60))
        assert "FAILED" in pages[1].text and "TimeoutError" in pages[1].text
        query = "SELECT ?tool WHERE { ?c oprov:toolName ?tool } ORDER BY ?tool"
        pages.append(requests.post(served.url + "/sparql", data={"query": query}, timeout=60))
        assert pages[2].status_code == 200 and "get_weather" in pages[2].text
        refused = requests.post(served.url + "/sparql", data={"query": "DROP ALL"}, timeout=60)
        assert refused.status_code == 400
        pages.append(refused)
        with counting_target() as target:  # the SPARQL server would be the one to fetch
            federated = f"SELECT * WHERE {{ SERVICE <{target.url}> {{ ?s ?p ?o }} }}"
            refused = requests.post(served.url + "/sparql", data={"query": federated}, timeout=60)
            assert refused.status_code == 400 and "SERVICE" in refused.text
            assert target.requests == []
        server.stop()
        gone = requests.get(served.url + "/?agent=x", timeout=120)
        assert gone.status_code == 503 and "Store unavailable" in gone.text
        pages.append(gone)
        for page in pages:
            assert "s3cr3t" not in page.text and "s3cr3t" not in str(page.headers)
        assert "s3cr3t" not in served.stderr()
