"""After os.fork() every process has its own log, sessions and path to the store: nothing lost."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
import pytest

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
