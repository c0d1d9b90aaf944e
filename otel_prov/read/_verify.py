"""``otel-prov verify``: recompute each session's hash from the store and check its bundle.

A session passes when the triples stored for it hash to the value its newest
``prov:Bundle`` recorded (a bundle is revised, ``prov:wasRevisionOf``, when spans of the
session arrive after it was sealed), its bundle chain is intact (the previous bundle of
the same agent exists with the hash recorded), and PROV-CONSTRAINTS 30 (start <= end),
34 (generation within its activity), 37 (generation before use) and 55 (nothing both
Entity and Activity) hold on it, and every value kept in the blob store is still there,
unchanged.  A failure names what changed: the subjects whose
triples differ, are missing, or were added.

Gates are checks of what the record says, not of whether it was altered.
``tool_use_verified``: a session whose agent was given tools (``oprov:declaredTool``)
must have at least one tool call that succeeded; an answer given without any tool
result either rests on data never fetched or comes from an agent whose tool
declaration is stale, and an auditor should look at it.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import cast

import pyoxigraph

from otel_prov.processing._blobs import BlobError, read_blob
from otel_prov.prov._bundle import content_hash, manifest, session_content
from otel_prov.prov._queries import bundle_hashes_query, stored_content_query, verify_rows_query
from otel_prov.prov._rdf import (
    SPARQL_PREFIXES,
    Triple,
    canonical_datetime,
    iri,
    literal,
    parse_literal,
)
from otel_prov.prov._vocab import RDF_TYPE, O
from otel_prov.read._backend import EmbeddedBackend, QueryBackend
from otel_prov.read._session_view import find_sessions

__all__ = ["CONSTRAINTS", "GATES", "SessionCheck", "stored_content", "verify_sessions"]

# PROV-CONSTRAINTS as SPARQL: each query lists violations, so an empty answer passes.
CONSTRAINTS = {
    "30 start precedes end": """
        SELECT ?x WHERE { ?x prov:startedAtTime ?s ; prov:endedAtTime ?e . FILTER(?s > ?e) }""",
    "34 generation within its activity": """
        SELECT ?x WHERE {
          ?x prov:wasGeneratedBy ?a ; prov:generatedAtTime ?t . ?a prov:startedAtTime ?s .
          OPTIONAL { ?a prov:endedAtTime ?end }
          FILTER(?t < ?s || (BOUND(?end) && ?t > ?end)) }""",
    "37 generation precedes usage": """
        SELECT ?x WHERE {
          ?x prov:generatedAtTime ?g . ?user prov:used ?x ; prov:startedAtTime ?u .
          FILTER(?g > ?u) }""",
    "55 entity and activity disjoint": """
        SELECT ?x WHERE { ?x a prov:Entity , prov:Activity }""",
}
GATES = ("tool_use_verified",)
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_TRACE_SUBJECT = re.compile(r"<urn:otel-prov:([0-9a-f]{32}):")
_XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


@dataclass
class SessionCheck:
    session: str
    bundle: str | None
    problems: list[str] = field(default_factory=list)
    gates: dict[str, bool | None] = field(default_factory=dict)
    """Gate name -> passed (None: not applicable, e.g. no tools were declared)."""

    @property
    def ok(self) -> bool:
        return not self.problems


def _term(term: object) -> str:
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
    """The session's content (``_bundle``) as the store holds it, in the mapper's syntax."""
    return [
        (_term(t.subject), _term(t.predicate), _term(t.object))
        for t in backend.query(stored_content_query(graph, session, bundle)).triples
    ]


def _constraint_violations(triples: list[Triple]) -> list[str]:
    store = pyoxigraph.Store()
    text = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    store.load(text.encode(), pyoxigraph.RdfFormat.N_TRIPLES)
    problems = []
    for name, query in CONSTRAINTS.items():
        rows = list(cast(pyoxigraph.QuerySolutions, store.query(SPARQL_PREFIXES + query)))
        if rows:
            names = ", ".join(sorted({row["x"].value for row in rows})[:3])
            problems.append(f"PROV constraint {name} violated by {names}")
    return problems


def _tool_use_verified(content: list[Triple], session: str) -> tuple[bool | None, str]:
    """The ``tool_use_verified`` gate: passed (None: no tools declared) and why not.

    Only calls of the declared tools count: a handoff or an undeclared helper that
    succeeded says nothing about whether the declared data was fetched.
    """
    declared = sorted(
        urllib.parse.unquote(o[1:-1].rsplit(":", 1)[1])
        for s, p, o in content
        if s == session and p == O.declaredTool
    )
    if not declared:
        return None, ""
    calls = {s for s, p, o in content if p == RDF_TYPE and o == O.ToolCall}
    of_declared = {
        s for s, p, o in content if s in calls and p == O.toolName and parse_literal(o) in declared
    }
    if any(s in of_declared and p == O.status and o == literal("ok") for s, p, o in content):
        return True, ""
    tried = (
        f"{len(of_declared)} call(s) of them, none succeeded" if of_declared else "no call of them"
    )
    return False, (
        f"gate tool_use_verified failed: the agent declared {', '.join(declared)} and made "
        f"{tried}; either the data was not fetched (the answer rests on no tool result) "
        "or the declaration is stale (the agent no longer needs these tools)"
    )


def _blob_problems(content: list[Triple]) -> list[str]:
    """Values kept in the blob store must still be there and match their recorded hash."""
    hashes = {s: parse_literal(o) for s, p, o in content if p == O.contentHash}
    problems = []
    for s, p, o in content:
        if p != O.contentLocation:
            continue
        try:
            read_blob(o[1:-1], hashes.get(s))
        except BlobError as exc:
            problems.append(f"{exc} (the value of {s[1:-1]})")
    return problems


def _diff(recorded: dict[str, str], now: dict[str, str]) -> list[str]:
    changed = sorted(k for k in recorded.keys() & now.keys() if recorded[k] != now[k])
    missing = sorted(recorded.keys() - now.keys())
    added = sorted(now.keys() - recorded.keys())
    parts = [
        f"changed: {', '.join(changed)}" if changed else "",
        f"missing: {', '.join(missing)}" if missing else "",
        f"added: {', '.join(added)}" if added else "",
    ]
    return [part for part in parts if part]


def verify_sessions(backend: QueryBackend, graph: str, ident: str | None) -> list[SessionCheck]:
    """Check every outermost session (or those ``ident`` names)."""
    wanted = set(find_sessions(backend, graph, ident)) if ident is not None else None
    rows = backend.query(verify_rows_query(graph)).rows
    stored_hashes = {row["b"]: row["h"] for row in backend.query(bundle_hashes_query(graph)).rows}
    by_trace: dict[str, list[Triple]] | None = None
    others: list[Triple] = []
    if ident is None and isinstance(backend, EmbeddedBackend):
        # Every session of a local store: read the graph once, not one query per session.
        by_trace = {}
        everything = backend.query(
            f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"
        ).triples
        for t in everything:
            triple = (_term(t.subject), _term(t.predicate), _term(t.object))
            match = _TRACE_SUBJECT.match(triple[0])
            if match:
                by_trace.setdefault(match.group(1), []).append(triple)
            else:
                others.append(triple)  # e.g. a forged activity claiming to be part of one
    checks: dict[str, SessionCheck] = {}
    for row in rows:
        session = row["session"] or ""
        if (wanted is not None and session not in wanted) or session in checks:
            continue
        check = checks[session] = SessionCheck(session, row["bundle"])
        if row["bundle"] is None:
            check.problems.append("no bundle: the session's record was removed or never sealed")
            continue
        if row["revised"] and row["revised"] not in stored_hashes:
            check.problems.append(f"revision chain broken: {row['revised']} is missing")
        if row["previous"] and stored_hashes.get(row["previous"]) != row["previousHash"]:
            check.problems.append(
                f"chain broken: the previous bundle {row['previous']} is missing or changed"
            )
        if by_trace is not None:
            trace = session.split(":")[2]
            bundle_term = iri(row["bundle"])
            content = [
                t
                for t in session_content(by_trace.get(trace, []) + others, iri(session))
                if t[0] != bundle_term
            ]
        else:
            content = stored_content(backend, graph, session, row["bundle"])
        if content_hash(content) != row["hash"]:
            recorded = json.loads(row["manifest"] or "{}")
            check.problems.append(
                "content changed since export ("
                + "; ".join(_diff(recorded, manifest(content, iri(session))))
                + ")"
            )
        check.problems.extend(_constraint_violations(content))
        check.problems.extend(_blob_problems(content))
        passed, why = _tool_use_verified(content, iri(session))
        check.gates["tool_use_verified"] = passed
        if passed is False:
            check.problems.append(why)
    return list(checks.values())
