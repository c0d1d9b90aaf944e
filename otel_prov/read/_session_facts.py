"""What a listing row and a session view both show of each session: its tokens and
cost, summed over its model calls, and its evaluations.

Both are read for many sessions at once (a page of runs, or a run and the sessions
nested in it): one query finds what belongs to each session, a second reads it with
those IRIs written in.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import MAX_PREC, Context, Decimal, InvalidOperation

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import OPROV, iri
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


def usage_query(graph: str, calls: Sequence[tuple[str, str]]) -> str:
    """SELECT ``?s ?call ?p ?n ?currency``: the tokens of each kind and the cost of each
    of the model ``calls`` ((session, call) IRI pairs, as :func:`model_calls_query` finds
    them), one row per value, for :func:`usage_totals` to add up (``?currency`` is ``""``
    where none was said).

    Not summed by the store: Oxigraph's integers are 64-bit and its decimals 128-bit
    (about 1.7e20), and a SUM past either fails, so a run with a call of 10**30 tokens
    totalled 0.  The calls come written in: joined to the transitive path as a subquery,
    Oxigraph reads the usage of every call in the store (8 s over 100,000 runs).
    """
    kinds = ", ".join(f"oprov:{name}" for name in [*TOKEN_PROPERTIES.values(), "costAmount"])
    pairs = " ".join(f"({iri(session)} {iri(call)})" for session, call in calls)
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?call ?p ?n ?currency WHERE {{ GRAPH {graph} {{
  VALUES (?s ?call) {{ {pairs} }}
  ?call ?p ?n . FILTER(?p IN ({kinds}))
  OPTIONAL {{ ?call oprov:costCurrency ?c . FILTER(?p = oprov:costAmount) }}
  BIND(COALESCE(?c, "") AS ?currency)
}} }} ORDER BY ?s ?call ?p ?n ?currency"""


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
_EXACT = Context(prec=MAX_PREC)
"""Adds decimals without rounding (the default context keeps 28 digits)."""


def usage_totals(backend: QueryBackend, graph: str, sessions: Sequence[str]) -> dict[str, Usage]:
    """Each session's :class:`Usage`, added up exactly from its calls' values (two
    queries for all of them: the calls, then their usage).  A value that is no number
    (only a hand-edited store has one) is left out."""
    tokens: dict[str, dict[str, int]] = {session: {} for session in sessions}
    costs: dict[str, dict[str, Decimal]] = {session: {} for session in sessions}
    calls = [
        (row["s"] or "", row["call"] or "")
        for row in backend.query(model_calls_query(graph, sessions)).rows
    ]
    for row in backend.query(usage_query(graph, calls)).rows if calls else []:
        session, prop = row["s"] or "", row["p"] or ""
        try:
            value = Decimal(row["n"] or "")
        except InvalidOperation:
            continue
        if not value.is_finite():
            continue
        if prop in _TOKEN_KINDS:
            kind = _TOKEN_KINDS[prop]
            tokens[session][kind] = tokens[session].get(kind, 0) + int(value)
        else:
            currency = row["currency"] or ""
            costs[session][currency] = _EXACT.add(costs[session].get(currency, Decimal(0)), value)
    return {
        session: Usage(
            {kind: tokens[session][kind] for kind in TOKEN_PROPERTIES if kind in tokens[session]},
            tuple(Cost(total, each or None) for each, total in sorted(costs[session].items())),
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
