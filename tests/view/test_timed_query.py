"""The SPARQL page's time limit: it stops the query, whatever the machine's load."""

from __future__ import annotations

import os
from pathlib import Path

import pyoxigraph
import pytest

from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.read._confinement import Confinement
from otel_prov.view._timed_query import QueryTimeoutError, run_timed_query

GRAPH = "urn:otel-prov:graph"
READER = Confinement.of(GRAPH)
SLOW_START = 2.5
"""How long the Python the query runs in takes to start, on the loaded machine below."""


def _store(path: Path, triples: int = 1) -> Path:
    store = pyoxigraph.Store(str(path))
    store.extend(
        pyoxigraph.Quad(
            pyoxigraph.NamedNode(f"urn:s:{index}"),
            pyoxigraph.NamedNode("urn:p"),
            pyoxigraph.Literal("o"),
            pyoxigraph.NamedNode(GRAPH),
        )
        for index in range(triples)
    )
    store.flush()
    del store
    return path


@pytest.fixture
def slow_python_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python started from here on takes ``SLOW_START`` seconds before it runs."""
    site = tmp_path / "slow-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import time\ntime.sleep({SLOW_START})\n")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )


def test_the_limit_counts_the_query_not_the_start_of_the_process_it_runs_in(
    tmp_path: Path, slow_python_start: None
) -> None:
    """A loaded machine can take seconds to start Python and import the store; a query of
    milliseconds under a limit shorter than that was stopped before it began."""
    store = _store(tmp_path / "store")
    answer = run_timed_query(
        EmbeddedBackend(store), "ASK { ?s ?p ?o }", confinement=READER, timeout_s=SLOW_START - 1.0
    )
    assert answer.kind == "ask" and answer.boolean is True


def test_a_query_past_the_limit_is_still_stopped(tmp_path: Path, slow_python_start: None) -> None:
    store = _store(tmp_path / "store", triples=300)  # the query below: 300 ** 4 rows
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    with pytest.raises(QueryTimeoutError, match=r"ran past 0\.5 s"):
        run_timed_query(EmbeddedBackend(store), endless, confinement=READER, timeout_s=0.5)
