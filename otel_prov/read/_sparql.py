"""What the read side's SPARQL shares: prefixes, the settled statuses, patterns for
what makes a run, a shown agent, a session named by id, and IRIs written in.

Each query lives beside the code that runs it (the listing, a session's assembly,
``verify``, ``why``...); the fragments several of them build from live here, so that a
pattern (what a run is, which status a session settled on) has one definition.
Queries are built only from IRIs checked by :func:`~otel_prov.prov._rdf.iri`, literals
escaped by :func:`~otel_prov.prov._rdf.literal` and the fixed vocabulary, and they name
the provenance graph (``graph``, an IRI term) explicitly, so they mean the same on every
store.

Every query about one run is anchored on it: on the literal or IRI it was named by, or
on IRIs an earlier query found, written in as constants or ``VALUES``.  Oxigraph plans
a join by itself, and one pattern left free (a type, a status, an ``OPTIONAL`` beside a
union) makes it read that pattern over the whole store first: over 100,000 stored runs
that took seconds where the anchored query takes milliseconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from otel_prov.prov._rdf import SPARQL_PREFIXES, InvalidIRIError, iri, literal, values

__all__ = [
    "SPARQL_PREFIXES",
    "STATUSES",
    "STATUS_PATTERNS",
    "named_sessions",
    "outermost",
    "settled_status",
    "shown_agent",
    "values",
]


def outermost(variable: str) -> str:
    """Keeps ``variable`` when no session encloses it: a run, told by a path query."""
    return f"FILTER NOT EXISTS {{ {variable} oprov:partOf+ ?outer . ?outer a oprov:AgentSession }}"


STATUS_PATTERNS = {
    "error": '?s oprov:status "error" .',
    "ok": '?s oprov:status "ok" . FILTER NOT EXISTS { ?s oprov:status "error" }',
    "incomplete": '?s oprov:status "incomplete" .\n'
    '  FILTER NOT EXISTS { ?s oprov:status ?settled . FILTER(?settled IN ("ok", "error")) }',
    "running": '?s oprov:status "running" .\n'
    '  FILTER NOT EXISTS { ?s oprov:status ?settled . FILTER(?settled != "running") }',
}
"""A session exported ``incomplete`` or streamed ``running`` and again when it ended holds
both statuses; these keep the settled one (``error`` over ``ok`` over ``incomplete`` over
``running``), as the listing shows it."""

STATUSES = tuple(sorted(STATUS_PATTERNS))


def settled_status(statuses: Iterable[str | None]) -> str:
    """The status of a session recorded more than once: a session exported
    ``incomplete`` (its span was still open at the timeout) or streamed ``running``
    (its steps recorded while it ran), and later again, when it ended, holds both
    literals; the later one is what happened.  The order is the one
    :data:`STATUS_PATTERNS` keeps in the store."""
    found = {status for status in statuses if status}
    final = found - {"incomplete", "running"}
    if "error" in final:
        return "error"
    if final:
        return min(final)
    return "incomplete" if "incomplete" in found else ("running" if found else "")


def shown_agent(subject: str, label: str) -> str:
    """Patterns binding ``label`` to the agent label shown for session ``subject`` (the
    one sealed with it, else its AI agent's ``rdfs:label``), for a row that shows it:
    two ``OPTIONAL`` s and a ``COALESCE`` (the sealed label first).  Virtuoso (7.2)
    estimates the union with its ``FILTER NOT EXISTS`` inside an ``OPTIONAL`` at minutes
    for some data and refuses the query ("estimated execution time ... exceeds the
    limit"): the run listing failed so, now and then, once an MCP server's calls shared
    the run's trace."""
    return (
        f"OPTIONAL {{ {subject} oprov:agentLabel ?sealedAgent }}\n"
        f"  OPTIONAL {{ {subject} prov:wasAssociatedWith ?labelled . "
        f"?labelled a oprov:AIAgent ; rdfs:label ?sharedAgent }}\n"
        f"  BIND(COALESCE(?sealedAgent, ?sharedAgent) AS {label})"
    )


def named_sessions(variable: str, ident: str, pattern: str) -> str:
    """A union binding ``variable`` to the sessions ``ident`` names (a session IRI, a
    trace id or a conversation id), each matching ``pattern`` (its other properties).

    ``pattern`` is repeated inside each branch, beside the literal or IRI that anchors
    it: joined to the union from outside, Oxigraph reads the pattern for every session of
    the store first (2.5 s over 100,000 runs, where each branch alone takes milliseconds).
    """
    branches = [
        f"{{ {variable} oprov:traceId {literal(ident)} ; {pattern} }}",
        f"{{ {variable} oprov:sessionId {literal(ident)} ; {pattern} }}",
    ]
    with contextlib.suppress(InvalidIRIError):
        branches.append(f"{{ VALUES {variable} {{ {iri(ident)} }} {variable} {pattern} }}")
    return "\n  UNION ".join(branches)
