"""What a listing row and a session view both show of each session: its tokens and
cost, summed by the store over its model calls, and its evaluations.

Both are read for many sessions at once (a page of runs, or a run and the sessions
nested in it): one query finds what belongs to each session, a second reads it with
those IRIs written in.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from otel_prov.prov._rdf import OPROV, iri
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sparql import SPARQL_PREFIXES, values
from otel_prov.read._views import Cost, EvaluationView, Usage

__all__ = ["TOKEN_PROPERTIES", "evaluations_of", "usage_totals"]


TOKEN_PROPERTIES = {
    "input": "inputTokens",
    "output": "outputTokens",
    "cache_read": "cacheReadTokens",
    "cache_write": "cacheWriteTokens",
    "reasoning": "reasoningTokens",
}
"""Token kind (as the read API and ``sessions --format json`` name it) -> its property."""


def model_calls_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?call``: the model calls below each session at any depth (sub-agent
    sessions included, as the listing's counts are), found from the sessions' IRIs."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?call WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(sessions)} }}
  ?call oprov:partOf+ ?s ; a oprov:ModelCall .
}} }} ORDER BY ?s ?call"""


def usage_totals_query(graph: str, calls: Sequence[tuple[str, str]]) -> str:
    """SELECT ``?s ?p ?currency ?total``: each session's tokens of each kind and its cost
    in each currency, summed over its model ``calls`` ((session, call) IRI pairs, as
    :func:`model_calls_query` finds them).  Costs in different currencies come as
    separate rows: they are never added (``?currency`` is ``""`` where none was said).

    The calls come written in: summed beside the transitive path itself, Virtuoso (7.2)
    counts one call and one kind only, and joined to it as a subquery, Oxigraph reads
    the usage of every call in the store (8 s over 100,000 runs).
    """
    kinds = ", ".join(f"oprov:{name}" for name in [*TOKEN_PROPERTIES.values(), "costAmount"])
    pairs = " ".join(f"({iri(session)} {iri(call)})" for session, call in calls)
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?p ?currency (SUM(?n) AS ?total) WHERE {{ GRAPH {graph} {{
  VALUES (?s ?call) {{ {pairs} }}
  ?call ?p ?n . FILTER(?p IN ({kinds}))
  OPTIONAL {{ ?call oprov:costCurrency ?c . FILTER(?p = oprov:costAmount) }}
  BIND(COALESCE(?c, "") AS ?currency)
}} }} GROUP BY ?s ?p ?currency ORDER BY ?s ?p ?currency"""


def evaluated_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?e``: each evaluation of each of ``sessions`` (IRIs) or of an activity
    in it, found from the sessions' IRIs.  Apart from :func:`evaluations_query`: beside
    its ``OPTIONAL`` parts, Oxigraph read every generation of the store (1 s for a page
    of 50 runs over 100,000), where this finds the usual none in milliseconds."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?e WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(sessions)} }}
  ?a oprov:partOf* ?s .
  ?e oprov:evaluates ?a .
}} }} ORDER BY ?s ?e"""


def evaluations_query(graph: str, evaluations: Sequence[tuple[str, str]]) -> str:
    """SELECT each of ``evaluations`` ((session, evaluation) IRI pairs, as
    :func:`evaluated_query` finds them) with what it judged (``?a``), its evaluator's
    name and, for one added after the run, the annotation that made it."""
    pairs = " ".join(f"({iri(session)} {iri(e)})" for session, e in evaluations)
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?e ?a ?name ?score ?label ?explanation ?evaluator ?annotation ?at
WHERE {{ GRAPH {graph} {{
  VALUES (?s ?e) {{ {pairs} }}
  ?e oprov:evaluates ?a ; oprov:evaluationName ?name .
  OPTIONAL {{ ?e oprov:score ?score }}
  OPTIONAL {{ ?e oprov:scoreLabel ?label }}
  OPTIONAL {{ ?e oprov:explanation ?explanation }}
  OPTIONAL {{ ?e prov:wasAttributedTo ?by . ?by rdfs:label ?evaluator }}
  OPTIONAL {{ ?e prov:wasGeneratedBy ?annotation }}
  OPTIONAL {{ ?e prov:generatedAtTime ?at }}
}} }} ORDER BY ?s ?at ?e"""


_TOKEN_KINDS = {f"{OPROV}{name}": kind for kind, name in TOKEN_PROPERTIES.items()}


def usage_totals(backend: QueryBackend, graph: str, sessions: Sequence[str]) -> dict[str, Usage]:
    """Each session's :class:`Usage`, summed by the store (two queries for all of them:
    the calls, then their usage)."""
    tokens: dict[str, dict[str, int]] = {session: {} for session in sessions}
    costs: dict[str, list[Cost]] = {session: [] for session in sessions}
    calls = [
        (row["s"] or "", row["call"] or "")
        for row in backend.query(model_calls_query(graph, sessions)).rows
    ]
    totals = backend.query(usage_totals_query(graph, calls)).rows if calls else []
    for row in totals:
        session, prop, total = row["s"] or "", row["p"] or "", row["total"] or "0"
        if prop in _TOKEN_KINDS:
            tokens[session][_TOKEN_KINDS[prop]] = int(Decimal(total))
        else:
            costs[session].append(Cost(Decimal(total), row["currency"] or None))
    return {
        session: Usage(
            {kind: tokens[session][kind] for kind in TOKEN_PROPERTIES if kind in tokens[session]},
            tuple(costs[session]),
        )
        for session in sessions
    }


def evaluations_of(
    backend: QueryBackend, graph: str, sessions: Sequence[str]
) -> dict[str, tuple[EvaluationView, ...]]:
    """Each session's evaluations (a query for all of them, and one more when any is
    found)."""
    found: dict[str, dict[str, EvaluationView]] = {session: {} for session in sessions}
    pairs = [
        (row["s"] or "", row["e"] or "")
        for row in backend.query(evaluated_query(graph, sessions)).rows
    ]
    rows = backend.query(evaluations_query(graph, pairs)).rows if pairs else []
    for row in rows:
        score = row["score"]
        found[row["s"] or ""].setdefault(
            row["e"] or "",
            EvaluationView(
                name=row["name"] or "",
                score=None if score is None else float(score),
                label=row["label"],
                explanation=row["explanation"],
                evaluator=row["evaluator"],
                evaluates=row["a"] or "",
                annotation=row["annotation"],
            ),
        )
    return {session: tuple(views.values()) for session, views in found.items()}
