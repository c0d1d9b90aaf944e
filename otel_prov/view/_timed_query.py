"""A query from the SPARQL page, run with a time limit that really stops it.

The embedded store cannot cancel a query, and a thread cannot be killed: a runaway
query left in a thread would hold a core until it ended.  So against the embedded store
the query runs in a child process (:mod:`otel_prov.view._query_process`) that opens the
store read-only and is killed at the limit.  The limit starts once the child is ready:
starting Python and importing the store takes a second, and several on a loaded
machine, which must not stop a query of milliseconds before it began.  A SPARQL
endpoint does the work itself: there the request is given up at the limit
(SPARQLWrapper's own socket timeout ends the waiting thread soon after), and the
server's own timeout, if set, stops the query.
Updates are refused before anything starts; SERVICE is looked for where the query runs
(in the child, or the waiting thread), since reading a long query can take a while.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import pyoxigraph

from otel_prov.exporters._reading import QueryBackend, QueryResult, StoreUnavailableError
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.read._confinement import Confinement
from otel_prov.read._user_query import refuse_updates, run_user_query
from otel_prov.view._query_process import READY

__all__ = ["QueryTimeoutError", "run_timed_query"]

_REMOTE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="otel-prov-query")
_START_LIMIT_S = 120.0
"""How long the query's process may take to be ready; not the query's time, so generous."""


class QueryTimeoutError(Exception):
    """The query ran past its time and was stopped."""


def run_timed_query(
    backend: QueryBackend,
    text: str,
    *,
    confinement: Confinement,
    timeout_s: float,
    allow_service: Collection[str] = (),
) -> QueryResult:
    """:func:`~otel_prov.read._user_query.run_user_query` for the reader of
    ``confinement``, stopped after ``timeout_s``.

    Raises ``UpdateRefusedError`` (nothing started), ``ValueError`` (a SERVICE not in
    ``allow_service``, or a query that cannot be parsed: nothing sent),
    :class:`QueryTimeoutError` or ``StoreUnavailableError``.
    """
    refuse_updates(text)
    allowed = sorted(allow_service)
    if isinstance(backend, EmbeddedBackend):
        return _in_child(backend, text, confinement, timeout_s, allowed)
    future = _REMOTE.submit(
        run_user_query, backend, text, confinement=confinement, allow_service=allowed
    )
    try:
        return future.result(timeout=timeout_s)
    except FutureTimeout as exc:
        raise QueryTimeoutError(_stopped(timeout_s)) from exc


def _ready(child: subprocess.Popen[str]) -> bool:
    """Whether the child said :data:`READY` (it writes nothing before) within the start
    limit; False when it died or hung starting."""
    if child.stdout is None:
        return False
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(_START_LIMIT_S):
            return False
    return child.stdout.readline() == READY


def _stopped(timeout_s: float) -> str:
    return f"the query ran past {timeout_s:g} s and was stopped"


def _in_child(
    backend: EmbeddedBackend,
    text: str,
    confinement: Confinement,
    timeout_s: float,
    allow_service: list[str],
) -> QueryResult:
    request = json.dumps(
        {
            "store": str(backend.path),
            "graph": confinement.graph,
            "tenant": confinement.tenant,
            "query": text,
            "allow_service": allow_service,
        }
    )
    with subprocess.Popen(
        [sys.executable, "-m", "otel_prov.view._query_process"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            if _ready(child):
                stdout, stderr = child.communicate(request, timeout=timeout_s)
            else:  # it died starting (its stderr says why), or hung
                child.kill()
                stdout, stderr = child.communicate()
        except subprocess.TimeoutExpired as exc:
            child.kill()
            child.communicate()
            raise QueryTimeoutError(_stopped(timeout_s)) from exc
    try:
        answer = json.loads(stdout)
    except ValueError as exc:
        last = (stderr.strip().splitlines() or ["no answer"])[-1]
        raise StoreUnavailableError(f"the query process failed: {last}") from exc
    if "error" in answer:
        error = ValueError if answer.get("invalid") else StoreUnavailableError
        raise error(answer["error"])
    triples = [
        quad.triple
        for quad in pyoxigraph.parse(answer.get("ntriples", ""), pyoxigraph.RdfFormat.N_TRIPLES)
    ]
    return QueryResult(
        answer["kind"],
        variables=tuple(answer.get("variables", ())),
        rows=answer.get("rows", []),
        datatypes=answer.get("datatypes", []),
        boolean=answer.get("boolean"),
        triples=triples,
    )
