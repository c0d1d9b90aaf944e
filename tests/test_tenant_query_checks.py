"""A tenant's query may name no graph but its own in ``FROM`` or ``FROM NAMED``: the check
reads the query as the SPARQL grammar does (prefixes, BASE, keyword case, comments,
strings, ``\\u`` escapes), refuses every clause naming another graph, and lets through
the clauses naming its own and the words ``FROM`` that are no clause."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov.read._confinement import Confinement
from otel_prov.read._user_query import GraphRefusedError, check_user_query, dataset_graphs

BASE = "urn:otel-prov:graph"
OWN = f"{BASE}/tenants/team-a"
READER = Confinement.of(BASE, "team-a")

# How a clause names a graph: (text, the IRI it names).
NAMES = {
    "own": (f"<{OWN}>", OWN),
    "other": (f"<{BASE}/tenants/team-b>", f"{BASE}/tenants/team-b"),
    "base graph": (f"<{BASE}>", BASE),
    "prefixed own": ("t:team-a", OWN),
    "prefixed other": ("t:team-b", f"{BASE}/tenants/team-b"),
    "unicode": ("<urn:otel-prov:graph/tenants/tëam-b>", "urn:otel-prov:graph/tenants/tëam-b"),
}
KEYWORDS = ["FROM", "from", "From", "\\u0046ROM", "FR\\u004fM"]
GAPS = [" ", "\n", "\t", " # FROM <urn:x> in a comment\n"]


@st.composite
def queries(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A SELECT with dataset clauses, and the IRIs they name; a FROM in a string or a
    comment names nothing."""
    clauses = draw(st.lists(st.tuples(st.sampled_from(sorted(NAMES)), st.booleans()), max_size=4))
    text, named = "", []
    for name, is_named in clauses:
        keyword = draw(st.sampled_from(KEYWORDS)) + (" NAMED" if is_named else "")
        text += f"{draw(st.sampled_from(GAPS))}{keyword} {NAMES[name][0]}"
        named.append(NAMES[name][1])
    literal = draw(st.sampled_from(['"FROM <urn:x>"', "'from'", '"x"']))
    query = f"PREFIX t: <{BASE}/tenants/>\nSELECT ?s{text}\nWHERE {{ ?s ?p {literal} }}"
    return query, named


@given(queries())
def test_a_tenants_query_names_its_own_graph_or_is_refused(query: tuple[str, list[str]]) -> None:
    text, named = query
    assert sorted(iri for _, iri in dataset_graphs(text)) == sorted(named)
    if all(iri == OWN for iri in named):
        check_user_query(text, dataset=READER.dataset)
    else:
        with pytest.raises(GraphRefusedError, match="is refused"):
            check_user_query(text, dataset=READER.dataset)
    check_user_query(text, dataset=Confinement.of(BASE).dataset)  # no tenant: not confined


def test_a_relative_iri_under_base_is_refused_for_a_tenant() -> None:
    """rdflib leaves it relative; a store resolves it (to team-b's graph here)."""
    text = f"BASE <{BASE}/tenants/> SELECT ?s FROM <team-b> WHERE {{ ?s ?p ?o }}"
    with pytest.raises(GraphRefusedError):
        check_user_query(text, dataset=READER.dataset)
