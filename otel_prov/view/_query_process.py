"""The child process :mod:`otel_prov.view._timed_query` runs one query in.

Once imported it writes :data:`READY` on stdout; then it reads ``{"store", "graph",
"tenant", "query", "allow_service"}`` as JSON on stdin (the reader's
:class:`~otel_prov.read._confinement.Confinement`: its graph and tenant), opens the store
read-only, runs the query as ``otel-prov query`` would (SERVICE only on an endpoint of
``allow_service``), and writes the answer as JSON on stdout (rows, a boolean, or the
triples as N-Triples), or ``{"error"}``.
"""

from __future__ import annotations

import json
import sys

import pyoxigraph

from otel_prov.exporters._reading import StoreUnavailableError
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.read._confinement import Confinement
from otel_prov.read._user_query import run_user_query

READY = "ready\n"
"""Said once Python has started and imported the store: the time limit starts after it."""


def main() -> None:
    sys.stdout.write(READY)
    sys.stdout.flush()
    request = json.load(sys.stdin)
    try:
        result = run_user_query(
            EmbeddedBackend(request["store"]),
            request["query"],
            confinement=Confinement(request["graph"], request["tenant"]),
            allow_service=request["allow_service"],
        )
    except StoreUnavailableError as exc:
        json.dump({"error": str(exc)}, sys.stdout)
        return
    except ValueError as exc:
        json.dump({"error": str(exc), "invalid": True}, sys.stdout)
        return
    data = pyoxigraph.serialize(result.triples, format=pyoxigraph.RdfFormat.N_TRIPLES)
    json.dump(
        {
            "kind": result.kind,
            "variables": result.variables,
            "rows": result.rows,
            "datatypes": result.datatypes,
            "boolean": result.boolean,
            "ntriples": (data or b"").decode(),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
