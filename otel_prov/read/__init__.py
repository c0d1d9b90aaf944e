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
    graph.query("SELECT ?tool WHERE { ?c a oprov:ToolCall ; oprov:toolName ?tool }")

    failed = [check for check in reader.verify() if not check.ok]

    why = reader.why("demo-conversation")          # the derivation graph behind the answer
    print(why.as_json())                           # {"root", "nodes", "edges"}

``sessions`` filters by agent name, ``service.name``, settled status (``ok``, ``error``,
``incomplete``) and start time (``since`` inclusive, ``until`` exclusive), newest
first, and pages in the store: a cursor names where a page ended, so the next page is
right even while agents add runs.  ``find`` turns a session IRI, a trace id or a
conversation id into the IRIs of the runs it names.  ``session`` raises
``LookupError`` for a session that is not there; every method raises
:class:`StoreUnavailableError` when the store cannot be read (missing, locked by
another reader-writer, unreachable, credentials refused).  Endpoint headers are never
logged.

``session(id).plans`` are the plans the run made (``otel_prov.plan``), each step in
order with what became of it (``executed``, ``failed``, ``skipped``, ``rolled_back``, or
None) and the postconditions checked for it.

``why`` follows PROV relations back from a run's answer (or any activity or entity):
observations, the tool calls behind them and their arguments, the steps that chose
them, retrieved chunks and their sources, the question and the conversation's earlier
turns; failed attempts come with their error, marked ``supports_answer=False``.

``diff(a, b)`` aligns two runs step by step (action, tools, arguments, status,
observation, answer) and names the first divergence: the same question before and
after a prompt or model change.

``summary(id)`` tells a run in plain sentences from the graph alone (no model), each
sentence naming the ``why`` nodes it speaks of.

``decision_accounts(reader.why(id))`` gives each decision the run recorded
(``otel_prov.decision``), with the evidence for and against it (``DecisionAccount``:
``supporting``, ``contradicting``, ``not_considered``, each a ``Weighed`` with what it
rests on, its weight and whether it was there when the decision was made) and any
reviewer's revision (``otel-prov review``).

``otel-prov sessions``, ``show``, ``verify``, ``why``, ``diff`` and ``summary`` are this
API with output formats.
"""

from __future__ import annotations

from otel_prov.exporters._reading import StoreUnavailableError
from otel_prov.read._approvals import ApprovalView
from otel_prov.read._decisions import DecisionAccount, Weighed, decision_accounts
from otel_prov.read._diff import CallChange, CallRef, Divergence, SessionDiff
from otel_prov.read._plans import PlanStepView, PlanView, PostconditionView
from otel_prov.read._reader import ProvenanceReader, SessionPage, open_endpoint, open_store
from otel_prov.read._summary import RunSummary, Sentence
from otel_prov.read._trace_spans import TraceSpanView
from otel_prov.read._verify import SessionCheck
from otel_prov.read._views import (
    Cost,
    DownstreamView,
    EvaluationView,
    IterationView,
    ModelCallView,
    SessionSummary,
    SessionView,
    ToolCallView,
    Usage,
)
from otel_prov.read._why import WhyEdge, WhyGraph, WhyNode

__all__ = [
    "ApprovalView",
    "CallChange",
    "CallRef",
    "Cost",
    "DecisionAccount",
    "Divergence",
    "DownstreamView",
    "EvaluationView",
    "IterationView",
    "ModelCallView",
    "PlanStepView",
    "PlanView",
    "PostconditionView",
    "ProvenanceReader",
    "RunSummary",
    "Sentence",
    "SessionCheck",
    "SessionDiff",
    "SessionPage",
    "SessionSummary",
    "SessionView",
    "StoreUnavailableError",
    "ToolCallView",
    "TraceSpanView",
    "Usage",
    "Weighed",
    "WhyEdge",
    "WhyGraph",
    "WhyNode",
    "decision_accounts",
    "open_endpoint",
    "open_store",
]
