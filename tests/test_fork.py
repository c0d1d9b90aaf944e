"""After os.fork() every process has its own log, sessions and path to the store: nothing lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyoxigraph
import pytest

from tests.cli import run_cli
from tests.forking import run_forking_agent

CHILDREN = 3


def _answers(store: Path) -> list[str]:
    rows = pyoxigraph.Store.read_only(str(store)).query(
        """PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?a WHERE { ?s a oprov:AgentSession . ?e a oprov:Answer ;
                          prov:wasGeneratedBy ?s ; prov:value ?a }""",
        use_default_graph_as_union=True,
    )
    return sorted(row["a"].value for row in rows)  # type: ignore[index, union-attr]


def _chains(store: Path) -> set[str]:
    rows = pyoxigraph.Store.read_only(str(store)).query(
        "SELECT DISTINCT ?c WHERE { ?b <https://w3id.org/otel-prov/ns#bundleOf> ?s ; "
        "<https://w3id.org/otel-prov/ns#chainId> ?c }",
        use_default_graph_as_union=True,
    )
    return {row["c"].value for row in rows}  # type: ignore[index, union-attr]


@pytest.mark.parametrize("how", ["os.fork", "multiprocessing"])
def test_every_session_of_parent_and_forked_children_is_stored(tmp_path: Path, how: str) -> None:
    store, wal = tmp_path / "store", tmp_path / "wal"
    run = run_forking_agent(how, CHILDREN, OTEL_PROV_STORE=str(store), OTEL_PROV_WAL_DIR=str(wal))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "0"]  # the parent's own sessions, none failed
    expected = ["answer of parent-after", "answer of parent-before"] + [
        f"answer of child-{i}" for i in range(CHILDREN)
    ]
    assert _answers(store) == sorted(expected)
    assert not list((tmp_path / "store.parked").glob("*.nq"))  # every parked batch loaded
    assert [p.read_text() for p in wal.glob("wal-*.jsonl")] == []  # every intent settled
    # Parent and children seal in chains of their own, which never branch each other's.
    verified = run_cli("verify", "--all", "--store", str(store))
    assert verified.returncode == 0, verified.stdout
    assert len(_chains(store)) == 1 + CHILDREN


CHILD_AFTER_THE_STORE_WAS_OPENED = """
import os, sys
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.prov._record import ProvRecord

def record(name):
    triple = (f"<urn:example:{name}>", "<urn:example:said>", f'"{name}"')
    return [ProvRecord(trace_id="0" * 32, root=f"<urn:example:{name}>", triples=(triple,))]

parent = OxigraphStoreExporter(sys.argv[1])
parent.export(record("parent"))
parent.shutdown()  # the store is free: nothing stops a child from taking it
pid = os.fork()
if pid == 0:
    child = OxigraphStoreExporter(sys.argv[1])
    child.export(record("child"))
    child.shutdown()
    os._exit(0)
assert os.waitpid(pid, 0)[1] == 0
OxigraphStoreExporter(sys.argv[1]).shutdown()  # loads what the child parked
"""


def test_a_child_forked_after_the_parent_used_the_store_does_not_hang(tmp_path: Path) -> None:
    """RocksDB's background threads are not copied by fork, while its thread pool thinks
    they run: a child that writes the store waits forever for a flush (seen in CI)."""
    store = tmp_path / "store"
    run = subprocess.run(
        [sys.executable, "-c", CHILD_AFTER_THE_STORE_WAS_OPENED, str(store)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    rows = pyoxigraph.Store.read_only(str(store)).query(
        "SELECT ?o WHERE { ?s <urn:example:said> ?o }", use_default_graph_as_union=True
    )
    assert sorted(row["o"].value for row in rows) == ["child", "parent"]  # type: ignore[index, union-attr]
