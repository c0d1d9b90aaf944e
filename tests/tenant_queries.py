"""The queries a reader of team-a sends to get at team-b's graph, for every reader that
runs a tenant's queries (``query --tenant``, ``serve --tenant``, ``serve --tenants``) on
every store (embedded, Oxigraph, Virtuoso)."""

from __future__ import annotations

__all__ = ["naming", "reading"]


def reading(other: str, marker: str) -> dict[str, str]:
    """Queries that run and must get nothing of the graph ``other`` (an IRI): no row, no
    triple, nothing holding ``marker`` (a text found only in that graph)."""
    return {
        "graph ?g": "SELECT DISTINCT ?g ?q WHERE { GRAPH ?g { ?s ?p ?q } }",
        "graph <b>": f"SELECT ?q WHERE {{ GRAPH <{other}> {{ ?s ?p ?q }} }}",
        "ask graph <b>": f"ASK {{ GRAPH <{other}> {{ ?s ?p ?o }} }}",
        "default": "SELECT ?q WHERE { ?s ?p ?q }",
        "guessed iri": f"SELECT ?s ?o WHERE {{ ?s ?p ?o FILTER(CONTAINS(STR(?s), '{marker}')) }}",
        "values ?g": f"SELECT ?o WHERE {{ VALUES ?g {{ <{other}> }} GRAPH ?g {{ ?s ?p ?o }} }}",
        "subquery": "SELECT ?o WHERE { { SELECT ?o WHERE { GRAPH ?g { ?s ?p ?o } } } }",
        "exists": "SELECT ?o WHERE { ?x ?y ?o FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }",
        "construct": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{other}> {{ ?s ?p ?o }} }}",
        "describe": f"DESCRIBE ?s WHERE {{ ?s ?p ?o FILTER(CONTAINS(STR(?s), '{marker}')) }}",
    }


def naming(other: str) -> dict[str, str]:
    """Queries whose ``FROM`` or ``FROM NAMED`` name the graph ``other``: refused, never
    sent (Virtuoso reads the graphs a query names in place of the request's dataset)."""
    base, _, name = other.rpartition("/")
    return {
        "from": f"SELECT ?q FROM <{other}> WHERE {{ ?s ?p ?q }}",
        "from named": f"SELECT ?g ?q FROM NAMED <{other}> WHERE {{ GRAPH ?g {{ ?s ?p ?q }} }}",
        "ask from": f"ASK FROM <{other}> {{ ?s ?p ?o }}",
        "both": f"SELECT ?o FROM <{other}> FROM NAMED <{other}> WHERE "
        "{ { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }",
        "prefixed": f"PREFIX t: <{base}/> CONSTRUCT {{ ?s ?p ?o }} FROM t:{name} "
        "WHERE { ?s ?p ?o }",
        "under base": f"BASE <{base}/> SELECT ?o FROM <{name}> WHERE {{ ?s ?p ?o }}",
        "describe from": f"DESCRIBE ?s FROM <{other}> WHERE {{ ?s ?p ?o }}",
        "escaped keyword": f"SELECT ?o \\u0046ROM <{other}> WHERE {{ ?s ?p ?o }}",
    }
