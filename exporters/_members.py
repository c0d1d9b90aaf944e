"""A session's members (the subjects of its content) and their triples, read in two steps.

What belongs to a session is defined once, by :func:`session_members`, as
``_bundle.session_content`` defines a session's content: the reader's graph of a run,
``verify``'s recomputed content and a writer's continuation of a stored run
(``_content``) all start from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyoxigraph

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import OPROV, PROV, RDF, SPARQL_PREFIXES, iri, values

__all__ = ["member_triples", "session_members"]

_TYPE = pyoxigraph.NamedNode(f"{RDF}type")
_EVALUATION = pyoxigraph.NamedNode(f"{OPROV}Evaluation")
_ATTRIBUTED_TO = pyoxigraph.NamedNode(f"{PROV}wasAttributedTo")


def session_members(s: str, *, agents: bool = False) -> str:
    """A graph pattern binding ``?x`` to each subject of session ``s`` (an IRI term): the
    session, its activities, the entities they generated or used, the qualified starts
    of its sub-sessions, the associations and steps of its plans, the evidence for and
    against its claims and the evaluations made in the run, as
    ``_bundle.session_content`` defines a session's content; ``agents`` adds the agents
    they were associated with and the evaluators."""
    links = ["?x prov:wasGeneratedBy ?act", "?act prov:used ?x"]
    links += (
        ["?act prov:wasAssociatedWith ?x", "?e oprov:evaluates ?act ; prov:wasAttributedTo ?x"]
        if agents
        else []
    )
    links += [
        "?act prov:qualifiedStart ?x",
        "?act prov:qualifiedAssociation ?x",
        "?plan prov:wasGeneratedBy ?act . ?x p-plan:isStepOfPlan ?plan",
        "?claim prov:wasGeneratedBy ?act . ?claim prov:qualifiedDerivation ?x",
        "?claim prov:wasGeneratedBy ?act . ?claim prov:qualifiedInfluence ?x",
        "?x oprov:evaluates ?act . FILTER NOT EXISTS { ?x prov:wasGeneratedBy ?by }",
    ]
    # The session's own step spelled out beside ``partOf+``, as ``_assembly`` spells the
    # content's out (where Virtuoso lost rows of ``partOf*`` joined with other patterns).
    branches = [f"{{ BIND({s} AS ?x) }}", f"{{ ?x oprov:partOf+ {s} }}"]
    branches += [f"{{ {link.replace('?act', s)} }}" for link in links]
    branches += [f"{{ ?act oprov:partOf+ {s} . {link} }}" for link in links]
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
    query finds them by their ``partOf`` path, a second reads their triples (and with
    ``agents``, a third those of the evaluators the path missed: :func:`_evaluators`).
    Asked as one query (``whole``, a CONSTRUCT of the same triples), the embedded store
    joins the members with ``?x ?p ?o`` over the whole graph: 1.7 s a run over 10,000
    runs, where the two anchored queries take milliseconds.  ``whole`` is still asked when a member
    is a blank node (someone added one), which no query can name."""
    found = backend.query(session_members_query(graph, session, agents=agents)).rows
    members = [row["x"] or "" for row in found]
    if any(member.startswith("_:") for member in members):
        return backend.query(whole).triples
    triples = backend.query(subject_triples_query(graph, members)).triples if members else []
    missed = sorted(_evaluators(triples) - set(members)) if agents else []
    if missed:
        triples += backend.query(subject_triples_query(graph, missed)).triples
    return triples


def _evaluators(triples: Sequence[pyoxigraph.Triple]) -> set[str]:
    """The IRIs of the evaluators the evaluations among ``triples`` are attributed to.

    Read from the members' own triples as well as by the path: joined with
    ``?e prov:wasAttributedTo ?x``, Virtuoso (7.2) lost the evaluators of what a
    sub-session did, in every spelling of the path tried (``partOf*``, ``partOf+``, its
    inverse, a sequence path, an ``OPTIONAL``).
    """
    evaluations = {t.subject for t in triples if t.predicate == _TYPE and t.object == _EVALUATION}
    return {
        t.object.value
        for t in triples
        if t.subject in evaluations
        and t.predicate == _ATTRIBUTED_TO
        and isinstance(t.object, pyoxigraph.NamedNode)
    }
