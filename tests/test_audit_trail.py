"""Hostile tests of the audit trail: what someone who can write the store (and has read the
code) does to hide a run or change one, and what ``verify`` must say about it.

Each tampering is made on a real embedded store written by ``configure()``, as an agent
writes it; ``verify`` runs as the ``otel-prov`` command.  Issue 27, point 6.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
import pytest

import otel_prov
from otel_prov.demo import run_demo_agent
from tests.cli import run_cli

_PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> "
    "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
    "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
)
_LINKS = (
    "https://w3id.org/otel-prov/ns#previousBundle",
    "https://w3id.org/otel-prov/ns#previousHash",
    "https://w3id.org/otel-prov/ns#previousEntryHash",
)
"""Every predicate that links a bundle to the one before it, in any version's chain."""


def _write_runs(path: Path, runs: int, **options: object) -> None:
    handle = otel_prov.configure(
        store=path, set_global=False, wal_dir=path.parent / "wal", **options
    )
    for index in range(runs):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Four runs of one agent, written by one process, unsigned."""
    path = tmp_path / "store"
    _write_runs(path, 4)
    return path


def _runs(path: Path) -> list[tuple[str, str]]:
    """(run, its first bundle) of every stored run, oldest first."""
    store = pyoxigraph.Store(str(path))
    rows = store.query(
        _PREFIXES + "SELECT ?s ?b WHERE { GRAPH ?g { ?s oprov:runStartedAt ?t . "
        "?b oprov:bundleOf ?s . FILTER NOT EXISTS { ?b prov:wasRevisionOf ?x } } } ORDER BY ?t"
    )
    found = [(row["s"].value, row["b"].value) for row in rows]  # type: ignore[union-attr]
    del store
    return found


def _update(path: Path, sparql: str) -> None:
    store = pyoxigraph.Store(str(path))
    store.update(_PREFIXES + sparql)
    store.flush()
    del store


def _links(path: Path, bundle: str) -> list[pyoxigraph.Quad]:
    store = pyoxigraph.Store(str(path))
    found = _links_in(store, bundle)
    del store
    return found


def _links_in(store: pyoxigraph.Store, bundle: str) -> list[pyoxigraph.Quad]:
    return [
        quad
        for predicate in _LINKS
        for quad in store.quads_for_pattern(
            pyoxigraph.NamedNode(bundle), pyoxigraph.NamedNode(predicate), None
        )
    ]


def _set_links(path: Path, bundle: str, links: list[pyoxigraph.Quad]) -> None:
    """Give ``bundle`` the chain links ``links`` (taken from another bundle), its own gone."""
    store = pyoxigraph.Store(str(path))
    for quad in _links_in(store, bundle):
        store.remove(quad)
    subject = pyoxigraph.NamedNode(bundle)
    for quad in links:
        store.add(pyoxigraph.Quad(subject, quad.predicate, quad.object, quad.graph_name))
    store.flush()
    del store


def _delete_run(path: Path, run: str) -> None:
    """Every triple of the run's trace, its bundles included."""
    prefix = run.rsplit(":", 1)[0] + ":"
    _update(
        path,
        f"""DELETE {{ GRAPH ?g {{ ?x ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?x ?p ?o .
        FILTER(STRSTARTS(STR(?x), "{prefix}")) }} }}""",
    )


def _verify(path: Path, *args: str) -> tuple[int, str]:
    result = run_cli("verify", "--all", "--store", str(path), *args)
    return result.returncode, result.stdout + result.stderr


def test_untouched_runs_verify(store: Path) -> None:
    code, out = _verify(store)
    assert code == 0, out


def test_deleting_the_newest_run_is_caught(store: Path) -> None:
    """Nothing points to the newest run: the writer's checkpoint at shutdown anchors it."""
    newest, _ = _runs(store)[-1]
    _delete_run(store, newest)
    code, out = _verify(store)
    assert code == 1, out
    assert "sequence 4" in out and "truncated" in out, out


def test_swapping_two_bundles_links_is_caught(store: Path) -> None:
    _, (_, second), (_, third), _ = _runs(store)
    second_links, third_links = _links(store, second), _links(store, third)
    assert second_links and third_links
    _set_links(store, second, third_links)
    _set_links(store, third, second_links)
    code, out = _verify(store)
    assert code == 1, out
    assert "does not follow" in out, out


def test_deleting_a_middle_run_and_repointing_the_next_is_caught(store: Path) -> None:
    """Run 2 deleted, run 3's link given run 2's own (which pointed to run 1)."""
    _, (second_run, second), (_, third), _ = _runs(store)
    links = _links(store, second)
    _delete_run(store, second_run)
    _set_links(store, third, links)
    code, out = _verify(store)
    assert code == 1, out
    assert "sequence 2" in out and "missing" in out, out
