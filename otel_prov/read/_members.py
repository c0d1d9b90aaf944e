"""A session's members (the subjects of its content) and their triples, read in two steps.

What belongs to a session is defined once, by :func:`session_members`, as
``_bundle.session_content`` defines a session's content: the reader's graph of a run
and ``verify``'s recomputed content both start from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyoxigraph

from otel_prov.prov._rdf import iri
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sparql import SPARQL_PREFIXES, values

__all__ = ["member_triples", "session_members"]


def session_members(s: str, *, agents: bool = False) -> str:
    """A graph pattern binding ``?x`` to each subject of session ``s`` (an IRI term): the
    session, its activities, the entities they generated or used, the qualified starts
    of its sub-sessions, the associations and steps of its plans and the evaluations made
    in the run, as
    ``_bundle.session_content`` defines a session's content; ``agents`` adds the agents
    they were associated with and the evaluators."""
    links = ["?x prov:wasGeneratedBy ?act", "?act prov:used ?x"]
    links += ["?act prov:wasAssociatedWith ?x"] if agents else []
    links += [
        "?act prov:qualifiedStart ?x",
        "?act prov:qualifiedAssociation ?x",
        "?plan prov:wasGeneratedBy ?act . ?x p-plan:isStepOfPlan ?plan",
        "?x oprov:evaluates ?act . FILTER NOT EXISTS { ?x prov:wasGeneratedBy ?by }",
    ]
    # The session's own step spelled out beside ``partOf+`` (not ``partOf*``), and the
    # evaluators found from the evaluations, the path tested after: Virtuoso lost the
    # evaluators of a sub-session's work both as ``partOf*`` and with ``partOf+`` first.
    evaluator = "?e oprov:evaluates ?act ; prov:wasAttributedTo ?x ."
    branches = [f"{{ BIND({s} AS ?x) }}", f"{{ ?x oprov:partOf+ {s} }}"]
    branches += [f"{{ {link.replace('?act', s)} }}" for link in links]
    branches += [f"{{ ?act oprov:partOf+ {s} . {link} }}" for link in links]
    if agents:
        branches.append(f"{{ {evaluator.replace('?act', s)} }}")
        branches.append(f"{{ {evaluator} FILTER EXISTS {{ ?act oprov:partOf+ {s} }} }}")
    return "\n  UNION ".join(branches)


def session_members_query(graph: str, session: str, *, agents: bool = False) -> str:
    """SELECT ``?x``: each subject of the session's content (:func:`session_members`),
    with its agents when ``agents``."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{
  {session_members(iri(session), agents=agents)}
}} }}"""


def subject_triples_query(graph: str, subjects: Sequence[str]) -> str:
    """CONSTRUCT every triple of these subjects (IRIs)."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  VALUES ?x {{ {values(subjects)} }}
  ?x ?p ?o .
}} }}"""


def member_triples(
    backend: QueryBackend, graph: str, session: str, *, whole: str, agents: bool = False
) -> list[pyoxigraph.Triple]:
    """Every triple of the session's members (with its agents when ``agents``): one
    query finds them by their ``partOf`` path, a second reads their triples.  Asked as
    one query (``whole``, a CONSTRUCT of the same triples), the embedded store joins the
    members with ``?x ?p ?o`` over the whole graph: 1.7 s a run over 10,000 runs, where
    the two anchored queries take milliseconds.  ``whole`` is still asked when a member
    is a blank node (someone added one), which no query can name."""
    found = backend.query(session_members_query(graph, session, agents=agents)).rows
    members = [row["x"] or "" for row in found]
    if any(member.startswith("_:") for member in members):
        return backend.query(whole).triples
    return backend.query(subject_triples_query(graph, members)).triples if members else []
