"""Reading provenance back in Python: runs, one run in full, its RDF graph, verification.

Open the embedded store (read-only, so it works while an agent process writes to it)
or a SPARQL 1.1 query endpoint, and get typed, frozen objects back::

    from otel_prov.read import open_store

    reader = open_store(".otel-prov/store")        # or open_endpoint(url, headers=...)
    page = reader.sessions(agent="researcher", status="error", limit=20)
    for run in page.sessions:
        print(run.start, run.agent, run.question, run.iterations, run.status)
    older = reader.sessions(agent="researcher", status="error", cursor=page.next_cursor)

    view = reader.session(page.sessions[0].id)     # iterations, calls, sub-sessions
    for step in view.iterations:
        print(step.number, step.thought, [call.name for call in step.tool_calls])

    graph = reader.graph(view.id)                  # an rdflib.Graph, prefixes bound
    graph.query("SELECT ?tool WHERE { ?c oprov:toolName ?tool }")

    failed = [check for check in reader.verify() if not check.ok]

``sessions`` filters by agent name, ``service.name``, settled status (``ok``, ``error``,
``incomplete``) and start time (``since`` inclusive, ``until`` exclusive), newest
first, and pages in the store: a cursor names where a page ended, so the next page is
right even while agents add runs.  ``find`` turns a session IRI, a trace id or a
conversation id into the IRIs of the runs it names.  ``session`` raises
``LookupError`` for a session that is not there; every method raises
:class:`StoreUnavailableError` when the store cannot be read (missing, locked by
another reader-writer, unreachable, credentials refused).  Endpoint headers are never
logged.

``otel-prov sessions``, ``show`` and ``verify`` are this API with output formats.
"""

from __future__ import annotations

from otel_prov.read._backend import StoreUnavailableError
from otel_prov.read._reader import ProvenanceReader, SessionPage, open_endpoint, open_store
from otel_prov.read._session_view import (
    Cost,
    EvaluationView,
    IterationView,
    ModelCallView,
    SessionSummary,
    SessionView,
    ToolCallView,
    Usage,
)
from otel_prov.read._verify import SessionCheck

__all__ = [
    "Cost",
    "EvaluationView",
    "IterationView",
    "ModelCallView",
    "ProvenanceReader",
    "SessionCheck",
    "SessionPage",
    "SessionSummary",
    "SessionView",
    "StoreUnavailableError",
    "ToolCallView",
    "Usage",
    "open_endpoint",
    "open_store",
]
