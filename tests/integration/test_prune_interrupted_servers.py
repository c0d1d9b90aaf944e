"""A prune killed half way on a real SPARQL server is finished by the next (issue 38
point 5), on Oxigraph and Virtuoso: the prune intent is in the store itself, so the
second ``prune`` needs nothing of the first one's process or machine (it runs as a
process of its own, with no state beside the store and the pruning key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_prov.exporters import SparqlUpdateExporter
from tests.integration.store_queries import count
from tests.servers import SparqlServer
from tests.test_prune_interrupted import KEPT, check_finished, kill_prune, write_signed_runs

pytestmark = pytest.mark.integration

OPROV = "https://w3id.org/otel-prov/ns#"


@pytest.mark.parametrize("point", ["intent", 0.5])
def test_a_prune_killed_half_way_on_a_server_is_finished_by_the_next(
    server: SparqlServer, tmp_path: Path, point: str | float
) -> None:
    keys = tmp_path / "keys"
    write_signed_runs(
        SparqlUpdateExporter(
            server.update_endpoint, server.query_endpoint, spool_dir=tmp_path / "spool"
        ),
        keys,
    )
    read = ["--endpoint", server.query_endpoint]
    where = [*read, "--endpoint-update", server.update_endpoint]
    kill_prune(
        where,
        keys,
        point,
        runs_left=lambda: count(server, f"?s <{OPROV}runStartedAt> ?t"),
        intents=lambda: count(server, f"?s a <{OPROV}PruneIntent>"),
    )
    assert count(server, f"?s <{OPROV}prunesTrace> ?t") == KEPT, "killed after the removal"
    check_finished(where, read, keys, point)
    assert count(server, f"?s a <{OPROV}PruneIntent>") == 0
