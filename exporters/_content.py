"""A session's content as the store holds it, in the mapper's syntax: what ``verify``
hashes again, what an audit package carries, and what a writer that goes on with a stored
run starts from (``_stored``).
"""

from __future__ import annotations

import pyoxigraph

from otel_prov.exporters._members import member_triples, session_members
from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._bundle import session_content
from otel_prov.prov._rdf import SPARQL_PREFIXES, Triple, canonical_datetime, iri, literal

__all__ = ["run_content", "stored_content", "stored_content_query", "stored_term"]

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def stored_content_query(graph: str, session: str, bundle: str) -> str:
    """CONSTRUCT the session's content as its bundle hashed it (the bundle left out).

    One query, for members that :func:`subject_triples_query` cannot name (a blank
    node); otherwise :func:`session_members_query` and that one are faster: the
    embedded store joins this subquery with ``?x ?p ?o`` over the whole graph (1.7 s
    over 10,000 runs, where the two anchored queries take milliseconds)."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{
    {session_members(iri(session))}
  }} }} }}
  GRAPH {graph} {{ ?x ?p ?o . FILTER(?x != {iri(bundle)}) }}
}}"""


def stored_term(term: object) -> str:
    """A stored term written exactly as the mapper writes it."""
    if isinstance(term, pyoxigraph.NamedNode):
        return f"<{term.value}>"
    if isinstance(term, pyoxigraph.Literal):
        if term.language:
            return f"{literal(term.value)}@{term.language}"
        datatype = term.datatype.value
        if datatype == _XSD_STRING:
            return literal(term.value)
        value = canonical_datetime(term.value) if datatype == _XSD_DATETIME else term.value
        return f"{literal(value)}^^<{datatype}>"
    return str(term)


def stored_content(backend: QueryBackend, graph: str, session: str, bundle: str) -> list[Triple]:
    """The session's content (``_bundle``) as the store holds it, in the mapper's syntax.

    A query finds every candidate subject by its ``partOf`` path and a second reads
    their triples; ``session_content`` then decides, as it did when sealing, what of it
    the session's process recorded (it leaves out what another process recorded below,
    ``oprov:remoteParent``).  A member that is no IRI (a blank node someone added) cannot
    be named in a query: then one query finds and reads them all, more slowly.
    """
    found = member_triples(
        backend, graph, session, whole=stored_content_query(graph, session, bundle)
    )
    candidates = [
        (stored_term(t.subject), stored_term(t.predicate), stored_term(t.object)) for t in found
    ]
    return run_content(candidates, session, bundle)


def run_content(candidates: list[Triple], session: str, bundle: str) -> list[Triple]:
    """What of ``candidates`` the session's bundle hashed: its content, the bundle's own
    description left out (however the candidates were read)."""
    bundle_term = iri(bundle)
    return [t for t in session_content(candidates, iri(session)) if t[0] != bundle_term]
