"""Where the CLI reads provenance from: the embedded store (and, later, SPARQL endpoints).

A backend answers SPARQL and returns plain Python values, so the session views and the
renderers do not care which store they read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pyoxigraph

__all__ = ["EmbeddedBackend", "QueryBackend", "QueryResult", "StoreUnavailableError"]


class StoreUnavailableError(Exception):
    """The store cannot be read (missing, locked, unreachable); the message says which."""


@dataclass(frozen=True)
class QueryResult:
    """A SPARQL answer: rows for SELECT, a boolean for ASK, triples for CONSTRUCT/DESCRIBE."""

    kind: str
    """``select``, ``ask`` or ``graph``."""
    variables: tuple[str, ...] = ()
    rows: list[dict[str, str | None]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[pyoxigraph.Triple] = field(default_factory=list)


class QueryBackend(Protocol):
    def query(self, sparql: str) -> QueryResult:
        """Run any SPARQL query; raises ``ValueError`` for a malformed one."""


def _value(term: object) -> str | None:
    if term is None:
        return None
    if isinstance(term, (pyoxigraph.NamedNode, pyoxigraph.Literal)):
        return term.value
    if isinstance(term, pyoxigraph.BlankNode):
        return f"_:{term.value}"
    return str(term)


class EmbeddedBackend:
    """Reads an on-disk pyoxigraph store, read-only (the default graph is the union of all)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise StoreUnavailableError(
                f"no provenance store at {self.path} (run an instrumented agent or "
                "'otel-prov demo' first, or pass --store)"
            )
        try:
            self._store = pyoxigraph.Store.read_only(str(self.path))
        except OSError as exc:
            raise StoreUnavailableError(f"cannot open the store at {self.path}: {exc}") from exc

    def query(self, sparql: str) -> QueryResult:
        try:
            answer = self._store.query(sparql, use_default_graph_as_union=True)
        except SyntaxError as exc:
            raise ValueError(f"invalid SPARQL: {exc}") from exc
        if isinstance(answer, pyoxigraph.QueryBoolean):
            return QueryResult("ask", boolean=bool(answer))
        if isinstance(answer, pyoxigraph.QuerySolutions):
            variables = tuple(variable.value for variable in answer.variables)
            rows = [{name: _value(solution[name]) for name in variables} for solution in answer]
            return QueryResult("select", variables=variables, rows=rows)
        return QueryResult("graph", triples=list(answer))
